// The mixed-workload section: tasks of kinds the worker has not seen, after it saw others, and a
// known kind with one outlier among its samples, each beside the MCP client's loop.
import { summarizeRequests } from '../../collect';
import { compare, type Comparison } from '../../comparison';
import type { MixedSettings } from '../../config';
import { describeFeatures } from '../../emulator/probe';
import { fmt, fmtMs, fmtRatio, mb } from '../../format';
import { DISTRIBUTION_HEADER, missLines, quickBanner, targetTable, type TargetRow } from '../../report/markdown';
import { environmentLines } from '../../report/environment';
import type { RunOutcome } from '../../run';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import type { BenchStack } from '../../stack';
import { completedOk, type TaskRecord } from '../../task';
import type { WorkerProcess } from '../../worker-process';
import { closeText, comparisonDistributions, fairnessChecks, MCP_COUNTING, ratioText } from '../comparison-report';
import type { SideBySide } from '../side-by-side';
import { LONG_PROJECT, MIXED_SHAPE } from './plan';

export const MIXED_HEADING = '## Mixed workload on one worker, beside the MCP client';

/** Issue 17: a worker that has seen other jobs is never worse than a fresh one. */
const TARGETS = {
  unseen: { maxRatio: 0.75, maxP50Ms: 2_500, maxP99Ms: 5_000 },
  known: { maxP50Ms: 1_500 },
} as const;

interface MixedInputs {
  context: ScenarioContext;
  settings: MixedSettings;
  stack: BenchStack;
  worker: WorkerProcess;
  outlier: TaskRecord[];
  warmUp: TaskRecord[];
  unseen: SideBySide;
  known: SideBySide;
  outcomes: RunOutcome[];
  load: { before?: number; after?: number };
}

export function renderMixed(inputs: MixedInputs): ScenarioReport {
  const { context, settings, stack, worker, unseen, known } = inputs;
  const unseenC = compare(unseen.records, unseen.mcp);
  const knownC = compare(known.records, known.mcp);
  const ours = [...inputs.outlier, ...inputs.warmUp, ...unseen.records, ...known.records];
  const rows = targetRows(ours, unseenC, knownC);
  const range = (r: readonly [number, number]) => `${fmt(r[0] / 1000, 0)}–${fmt(r[1] / 1000, 0)} s`;
  const lines = [
    MIXED_HEADING,
    '',
    ...quickBanner(context.config.quick),
    ...environmentLines(context.env, inputs.load),
    `- **Workload, on one worker process** (at its defaults), in order: a task of a 2-s kind that runs ${fmtMs(settings.outlierMs)} ` +
      `(started first); meanwhile ${settings.shortTasks} short tasks of ${range(MIXED_SHAPE.shortRangeMs)} (project \`${MIXED_SHAPE.project}\`, a kind each), ` +
      `${settings.longProjectTasks} long tasks of ${range(MIXED_SHAPE.longRangeMs)} of another project (\`${LONG_PROJECT}\`) and ${MIXED_SHAPE.knownKindRuns} normal runs of the 2-s kind, all started over 10 s; ` +
      `then **${settings.unseenTasks} tasks of kinds not seen** (${range(MIXED_SHAPE.unseenRangeMs)}, project \`${MIXED_SHAPE.project}\`, started over 60 s); ` +
      `then, once the long run ended (so its last 8 samples hold it), **${MIXED_SHAPE.knownKindTasks} tasks of the 2-s kind** (±10 %, started over 5 s).`,
    `- **Emulator:** its default mode, queued ${QUEUE_MS} ms; ${describeFeatures(stack.features)}.`,
    `- ${MCP_COUNTING} The warm-up and the long run have no twins.`,
    '',
    ...targetTable(rows),
    '',
    ...missLines(rows),
    '',
    '| Phase | Completed (ours · MCP) | Requests, ours / MCP | Requests per task p50 (ours · MCP) | Task end → closed (ours; MCP has the answer) |',
    '|---|---|---|---|---|',
    phaseRow('Kinds not seen', unseenC),
    phaseRow('The 2-s kind with an outlier', knownC),
    '',
    'Kinds not seen, distributions:',
    '',
    ...DISTRIBUTION_HEADER,
    ...comparisonDistributions(unseenC, unseen.records, unseen.mcp),
    '',
    'The 2-s kind with an outlier, distributions:',
    '',
    ...DISTRIBUTION_HEADER,
    ...comparisonDistributions(knownC, known.records, known.mcp),
    '',
    ...fairnessChecks(
      summarizeRequests(stack.emulator.requests),
      ours,
      [...unseen.mcp, ...known.mcp],
      stack.durations.misses,
    ),
    `- Warm-up and long run completed: ${[...inputs.outlier, ...inputs.warmUp].filter(completedOk).length} / ${inputs.outlier.length + inputs.warmUp.length}.`,
    `- Worker peak RSS ${fmt(mb(worker.sampler.peakEverKb() ?? NaN), 0)} MB; log lines with WARN ${worker.warnLines}, with ERROR ${worker.errorLines}.`,
    ...[...inputs.outcomes, unseen.outcome, known.outcome].flatMap((o) =>
      o.deadlineHit || o.workerDied ? [`- **${o.workerDied ?? 'deadline hit'}**.`] : [],
    ),
  ];
  return {
    heading: MIXED_HEADING,
    markdown: lines.join('\n'),
    rows,
    raw: { unseen, known, features: stack.features },
  };
}

function phaseRow(label: string, c: Comparison): string {
  return `| ${label} | ${c.oursCompleted} · ${c.mcpEnded} of ${c.tasks} | ${ratioText(c)} | ${fmt(c.oursRequestsPerTask?.p50, 0)} · ${fmt(c.mcpRequestsPerTask?.p50, 0)} | ${closeText(c)} |`;
}

function targetRows(ours: TaskRecord[], unseen: Comparison, known: Comparison): TargetRow[] {
  const done = ours.filter(completedOk).length;
  const { unseen: u, known: k } = TARGETS;
  return [
    {
      measure: 'Workflows completed',
      target: `all ${ours.length}`,
      measured: `${done} / ${ours.length}`,
      met: done === ours.length,
    },
    {
      measure: 'Kinds not seen: API requests, ours / MCP client',
      target: `≤ ${fmtRatio(u.maxRatio)}`,
      measured: ratioText(unseen),
      met: unseen.requestRatio !== undefined ? unseen.requestRatio <= u.maxRatio : false,
    },
    {
      measure: 'Kinds not seen: task end → workflow closed, p50 and p99',
      target: `p50 ≤ ${fmtMs(u.maxP50Ms)}, p99 ≤ ${fmtMs(u.maxP99Ms)}`,
      measured: closeText(unseen),
      met: unseen.endToClosed ? unseen.endToClosed.p50 <= u.maxP50Ms && unseen.endToClosed.p99 <= u.maxP99Ms : false,
    },
    {
      measure: 'The 2-s kind with a 10-minute outlier among its samples: task end → workflow closed, p50',
      target: `≤ ${fmtMs(k.maxP50Ms)}`,
      measured: closeText(known),
      met: known.endToClosed ? known.endToClosed.p50 <= k.maxP50Ms : false,
    },
  ];
}
