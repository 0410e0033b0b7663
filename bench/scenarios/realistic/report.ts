// The realistic scenario's section: ours against the MCP client's loop, requests and how soon
// the end of a task is noticed, on tasks as BrowserAI runs them.
import { summarizeRequests } from '../../collect';
import { compare } from '../../comparison';
import type { RealisticSettings } from '../../config';
import { describeFeatures } from '../../emulator/probe';
import { fmt, fmtMs, mb } from '../../format';
import {
  DISTRIBUTION_HEADER,
  distributionRow,
  missLines,
  quickBanner,
  targetTable,
  type TargetRow,
} from '../../report/markdown';
import { environmentLines } from '../../report/environment';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import type { BenchStack } from '../../stack';
import { between, stats } from '../../statistics';
import { completedOk } from '../../task';
import type { WorkerProcess } from '../../worker-process';
import { closeText, comparisonDistributions, fairnessChecks, MCP_COUNTING, ratioText } from '../comparison-report';
import type { SideBySide } from '../side-by-side';

export const REALISTIC_HEADING = '## Realistic: BrowserAI as observed, beside the MCP client';
const CLOSE_P50_TARGET_MS = 3_000;
const HISTORY_EVENTS_TARGET = 60;

interface RealisticInputs {
  context: ScenarioContext;
  settings: RealisticSettings;
  stack: BenchStack;
  worker: WorkerProcess;
  result: SideBySide;
  load: { before?: number; after?: number };
}

export function renderRealistic(inputs: RealisticInputs): ScenarioReport {
  const { context, settings, stack, worker, result } = inputs;
  const c = compare(result.records, result.mcp);
  const codeTasks = result.records.filter((r) => r.plan.code);
  const events = stats(result.records.filter(completedOk).map((r) => r.facts!.history?.events));
  const codeLatency = between(
    codeTasks,
    (r) => r.codeSentAt,
    (r) => r.facts?.appendAt,
  );
  const rows: TargetRow[] = [
    {
      measure: 'Workflows completed, task finalized',
      target: `all ${c.tasks}`,
      measured: `${c.oursCompleted} / ${c.tasks}`,
      met: c.oursCompleted === c.tasks,
    },
    {
      measure: 'API requests, ours / MCP client (same tasks)',
      target: '— (targets: learned rounds)',
      measured: ratioText(c),
      met: undefined,
    },
    {
      measure: 'Task end → workflow closed',
      target: `p50 < ${CLOSE_P50_TARGET_MS / 1000} s`,
      measured: closeText(c),
      met: c.endToClosed ? c.endToClosed.p50 < CLOSE_P50_TARGET_MS : false,
    },
    {
      measure: 'History events per task',
      target: `< ${HISTORY_EVENTS_TARGET}`,
      measured: events ? `p50 ${events.p50} · max ${events.max}` : 'n/a',
      met: events ? events.max < HISTORY_EVENTS_TARGET : false,
    },
    ...(codeTasks.length
      ? [
          {
            measure: 'submitCode → append request',
            target: '—',
            measured: codeLatency
              ? `p50 ${fmtMs(codeLatency.p50)} · max ${fmtMs(codeLatency.max)} (${codeLatency.n} codes)`
              : 'n/a',
            met: undefined,
          },
        ]
      : []),
    {
      measure: 'Worker peak RSS',
      target: '—',
      measured: `${fmt(mb(worker.sampler.peakEverKb() ?? NaN), 0)} MB`,
      met: undefined,
    },
  ];
  const lines = [
    REALISTIC_HEADING,
    '',
    ...quickBanner(context.config.quick),
    ...environmentLines(context.env, inputs.load),
    `- **Tasks:** ${settings.tasks}, each a job of its own (its own instruction text, so nothing learned from one applies to another), running ` +
      `${fmt(settings.minDurationMs / 1000, 0)}–${fmt(settings.maxDurationMs / 1000, 0)} s (uniform), started at random over ${fmt(settings.startSpreadMs / 1000, 0)} s; ` +
      `${codeTasks.length} stop at a one-time-code form and get their code as soon as the emulator shows the form.`,
    `- **Emulator:** its default mode, queued ${QUEUE_MS} ms, default awaiting lag; ${describeFeatures(stack.features)}.`,
    '- **Worker:** one process of `node lib/src/worker.js`, default settings; no polling options in the input.',
    `- ${MCP_COUNTING}`,
    '',
    ...targetTable(rows),
    '',
    ...missLines(rows),
    '',
    ...DISTRIBUTION_HEADER,
    ...comparisonDistributions(c, result.records, result.mcp),
    distributionRow('History events per task', events),
    '',
    ...fairnessChecks(summarizeRequests(stack.emulator.requests), result.records, result.mcp, stack.durations.misses),
    `- Wall time: ${fmtMs(result.outcome.endedAt - result.outcome.firstStartAt)} from the first start to the last close` +
      (result.outcome.deadlineHit ? ' (**deadline hit**: unfinished tasks count as not completed)' : '') +
      (result.outcome.workerDied ? ` (**${result.outcome.workerDied}**)` : '') +
      '.',
  ];
  return {
    heading: REALISTIC_HEADING,
    markdown: lines.join('\n'),
    rows,
    raw: { records: result.records, mcp: result.mcp, features: stack.features },
  };
}
