// The learned-rounds section: per round, requests against the MCP client's loop and how soon a
// task's end is noticed, judged against the targets for round 1 and round 3.
import { summarizeRequests } from '../../collect';
import { compare, type Comparison } from '../../comparison';
import type { LearnedSettings } from '../../config';
import { describeFeatures } from '../../emulator/probe';
import { fmt, fmtMs, fmtRatio, mb } from '../../format';
import { DISTRIBUTION_HEADER, missLines, quickBanner, targetTable, type TargetRow } from '../../report/markdown';
import { environmentLines } from '../../report/environment';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import type { BenchStack } from '../../stack';
import type { WorkerProcess } from '../../worker-process';
import { closeText, comparisonDistributions, fairnessChecks, MCP_COUNTING, ratioText } from '../comparison-report';
import type { SideBySide } from '../side-by-side';
import type { LearnedKind } from './plan';

export const LEARNED_HEADING = '## Learned rounds: one job repeated, beside the MCP client';

/** The targets: what the first round may cost, and what the third must reach once durations are learned. */
const TARGETS = {
  first: { round: 1, maxRatio: 0.75, maxP50Ms: 2_500 },
  learned: { round: 3, maxRatio: 0.4, maxP50Ms: 1_500, maxP99Ms: 4_000 },
} as const;

interface LearnedInputs {
  context: ScenarioContext;
  settings: LearnedSettings;
  kinds: LearnedKind[];
  stack: BenchStack;
  worker: WorkerProcess;
  rounds: SideBySide[];
  load: { before?: number; after?: number };
}

export function renderLearned(inputs: LearnedInputs): ScenarioReport {
  const { context, settings, kinds, stack, worker, rounds } = inputs;
  const comparisons = rounds.map((round) => compare(round.records, round.mcp));
  const rows = targetRows(comparisons);
  const lines = [
    LEARNED_HEADING,
    '',
    ...quickBanner(context.config.quick),
    ...environmentLines(context.env, inputs.load),
    `- **Job:** ${kinds.length} kinds of task (one instruction text each), base durations spread evenly over ` +
      `${fmt(settings.minDurationMs / 1000, 0)}–${fmt(settings.maxDurationMs / 1000, 0)} s (${kinds.map((k) => fmt(k.baseMs / 1000, 0)).join(', ')} s); ` +
      `${settings.tasksPerKind} tasks of each kind per round, each within ±${fmt(settings.jitter * 100, 0)} % of its kind's base (uniform), started at random over ` +
      `${fmt(settings.startSpreadMs / 1000, 0)} s; ${settings.rounds} rounds one after the other on the **same worker process** (at its defaults)` +
      (settings.restartBeforeLast
        ? `, except round ${settings.rounds}: **right after a worker restart** (a new process).`
        : '.'),
    `- **Emulator:** its default mode, queued ${QUEUE_MS} ms; ${describeFeatures(stack.features)}.`,
    `- ${MCP_COUNTING}`,
    '',
    ...targetTable(rows),
    '',
    ...missLines(rows),
    '',
    '| Round | Completed (ours · MCP) | Requests, ours / MCP | Requests per task p50 (ours · MCP) | Task end → closed (ours; MCP has the answer) |',
    '|---|---|---|---|---|',
    ...comparisons.map(
      (c, i) =>
        `| ${i + 1} | ${c.oursCompleted} · ${c.mcpEnded} of ${c.tasks} | ${ratioText(c)} | ${fmt(c.oursRequestsPerTask?.p50, 0)} · ${fmt(c.mcpRequestsPerTask?.p50, 0)} | ${closeText(c)} |`,
    ),
    '',
  ];
  rounds.forEach((round, i) => {
    lines.push(
      `Round ${i + 1} distributions:`,
      '',
      ...DISTRIBUTION_HEADER,
      ...comparisonDistributions(comparisons[i]!, round.records, round.mcp),
      '',
    );
  });
  lines.push(
    ...fairnessChecks(
      summarizeRequests(stack.emulator.requests),
      rounds.flatMap((r) => r.records),
      rounds.flatMap((r) => r.mcp),
      stack.durations.misses,
    ),
    `- Worker peak RSS ${fmt(mb(worker.sampler.peakEverKb() ?? NaN), 0)} MB; log lines with WARN ${worker.warnLines}, with ERROR ${worker.errorLines}.`,
    ...rounds.flatMap((r, i) =>
      r.outcome.deadlineHit || r.outcome.workerDied
        ? [`- Round ${i + 1}: **${r.outcome.workerDied ?? 'deadline hit'}**.`]
        : [],
    ),
  );
  return {
    heading: LEARNED_HEADING,
    markdown: lines.join('\n'),
    rows,
    raw: { kinds, rounds, features: stack.features },
  };
}

function targetRows(comparisons: Comparison[]): TargetRow[] {
  const rows: TargetRow[] = [];
  const total = comparisons.reduce((n, c) => n + c.tasks, 0);
  const completed = comparisons.reduce((n, c) => n + c.oursCompleted, 0);
  rows.push({
    measure: 'Workflows completed, every round',
    target: `all ${total}`,
    measured: `${completed} / ${total}`,
    met: completed === total,
  });
  const first = comparisons[TARGETS.first.round - 1];
  if (first) {
    rows.push(ratioRow(TARGETS.first.round, first, TARGETS.first.maxRatio), {
      measure: `Round ${TARGETS.first.round}: task end → workflow closed, p50`,
      target: `≤ ${fmtMs(TARGETS.first.maxP50Ms)}`,
      measured: closeText(first),
      met: first.endToClosed ? first.endToClosed.p50 <= TARGETS.first.maxP50Ms : false,
    });
  }
  const learned = comparisons[TARGETS.learned.round - 1];
  if (learned) {
    const close = learned.endToClosed;
    rows.push(ratioRow(TARGETS.learned.round, learned, TARGETS.learned.maxRatio), {
      measure: `Round ${TARGETS.learned.round}: task end → workflow closed, p50 and p99`,
      target: `p50 ≤ ${fmtMs(TARGETS.learned.maxP50Ms)}, p99 ≤ ${fmtMs(TARGETS.learned.maxP99Ms)}`,
      measured: closeText(learned),
      met: close ? close.p50 <= TARGETS.learned.maxP50Ms && close.p99 <= TARGETS.learned.maxP99Ms : false,
    });
  } else {
    rows.push({
      measure: `Round ${TARGETS.learned.round} targets`,
      target: 'ratio ≤ 0.4×, p50 ≤ 1.5 s, p99 ≤ 4 s',
      measured: `not run (${comparisons.length} rounds)`,
      met: undefined,
    });
  }
  return rows;
}

function ratioRow(round: number, c: Comparison, maxRatio: number): TargetRow {
  return {
    measure: `Round ${round}: API requests, ours / MCP client`,
    target: `≤ ${fmtRatio(maxRatio)}`,
    measured: ratioText(c),
    met: c.requestRatio !== undefined ? c.requestRatio <= maxRatio : false,
  };
}
