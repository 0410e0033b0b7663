// The scale section, as the old bench's main run reported it (same measures, same targets), with
// the one-time-code latency split into codes sent during the start burst and after it.
import os from 'node:os';
import { summarizeRequests } from '../../collect';
import type { ScaleSettings } from '../../config';
import type { RecordedRequest } from '../../../src/emulator';
import { describeFeatures } from '../../emulator/probe';
import { slotsFor } from './plan';
import { fmt, fmtMs, mb } from '../../format';
import { MCP_POLL_MS } from '../../mcp-client';
import {
  DISTRIBUTION_HEADER,
  distributionRow,
  missLines,
  quickBanner,
  targetTable,
  type TargetRow,
} from '../../report/markdown';
import { environmentLines } from '../../report/environment';
import type { RunOutcome } from '../../run';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import type { BenchStack } from '../../stack';
import { between, stats, type Stats } from '../../statistics';
import { completedOk, type TaskRecord } from '../../task';
import type { WorkerProcess } from '../../worker-process';
import { memoryBreakdown, type TimedProbe } from './memory';
import { WORKER_MALLOC_ENV, WORKER_NODE_FLAGS } from '../../../dev/worker-child';
import { typicalHistory } from '../../report/typical-history';

export const SCALE_HEADING = '## Scale: many concurrent tasks on one worker';

const TARGETS = {
  requestsPerTaskMinute: 10,
  historyEvents: 60,
  closeP50Ms: 3_000,
  codeP50Ms: 300,
  peakRssMb: 600,
} as const;
/** The MCP client's polls alone, before any create: 60 s / its 3-s interval. */
const MCP_REQUESTS_PER_MINUTE = 60_000 / MCP_POLL_MS;

interface ScaleInputs {
  context: ScenarioContext;
  settings: ScaleSettings;
  stack: BenchStack;
  worker: WorkerProcess;
  records: TaskRecord[];
  outcome: RunOutcome;
  requests: RecordedRequest[];
  load: { before?: number; after?: number };
  /** The memory probe's answers during the run, every 10 s. */
  memoryProbes: TimedProbe[];
}

/** The measures every part of the section uses, computed once. */
function measures(inputs: ScaleInputs) {
  const { records, outcome, worker } = inputs;
  const done = records.filter(completedOk);
  const plain = done.filter((r) => !r.plan.code);
  const coded = done.filter((r) => r.plan.code);
  const perMinute = (rs: TaskRecord[]) =>
    stats(
      rs.map((r) =>
        r.facts!.requests !== undefined && r.facts!.taskMinutes ? r.facts!.requests / r.facts!.taskMinutes : undefined,
      ),
    );
  // By when the code was actually sent: a code meant for "as soon as the form shows" whose task
  // started at the end of the burst is sent after it.
  const burstEnd = outcome.allStartedAt ?? Infinity;
  const codeLatency = (duringBurst: boolean) =>
    between(
      records.filter((r) => r.codeSentAt !== undefined && r.codeSentAt < burstEnd === duringBurst),
      (r) => r.codeSentAt,
      (r) => r.facts?.appendAt,
    );
  const closes = records.map((r) => r.facts?.closeTime).filter((t): t is number => t !== undefined);
  const windowEnd = closes.length === records.length && closes.length > 0 ? Math.max(...closes) : outcome.endedAt;
  return {
    done,
    plain,
    coded,
    requests: stats(done.map((r) => r.facts!.requests)),
    rpm: perMinute(done),
    rpmPlain: perMinute(plain),
    rpmCoded: perMinute(coded),
    events: stats(done.map((r) => r.facts!.history?.events)),
    eventsPlain: stats(plain.map((r) => r.facts!.history?.events)),
    eventsCoded: stats(coded.map((r) => r.facts!.history?.events)),
    close: between(
      done,
      (r) => r.facts!.endedAt,
      (r) => r.facts!.closeTime,
    ),
    codeBurst: codeLatency(true),
    codeLate: codeLatency(false),
    codesAfterBurst: records.filter((r) => r.codeSentAt !== undefined && r.codeSentAt >= burstEnd).length,
    codeRpc: between(
      records,
      (r) => r.codeSentAt,
      (r) => r.codeAcceptedAt,
    ),
    windowStart: outcome.firstStartAt,
    windowEnd,
    rssPeakKb: worker.sampler.peakEverKb(),
    rssUnderLoadKb: worker.sampler.peakRssKb(outcome.firstStartAt, windowEnd),
    // The idle worker (start-up done, nothing started yet): what each task adds is measured from it.
    rssIdleKb: worker.sampler.lastRssKbBefore(outcome.firstStartAt),
  };
}
type ScaleMeasures = ReturnType<typeof measures>;

export function renderScale(inputs: ScaleInputs): ScenarioReport {
  const { context, settings, stack, records, outcome } = inputs;
  const m = measures(inputs);
  const rows = targetRows(inputs, m);
  const lines = [
    SCALE_HEADING,
    '',
    ...quickBanner(context.config.quick),
    ...environmentLines(context.env, inputs.load),
    `- **Tasks:** ${settings.tasks} concurrent \`browserTask\` workflows, each \`[duration=${fmt(settings.durationMs / 1000, 0)}s]\` after ${QUEUE_MS} ms queued, ` +
      `started in one burst in batches of ${settings.batch}. ${settings.burstCodes} are \`[needs-code]\` tasks whose code is sent as soon as the emulator shows the form ` +
      `(most of them during the burst); ${settings.lateCodes} get theirs ${fmt(settings.lateCodeDelayMs / 1000, 0)} s after the last start (the bench looks every 500 ms, in-process). ` +
      'Code latencies are split by when the code was actually sent: before or after the last start returned.',
    `- **Emulator:** ${settings.emulatorMode} mode (as the old bench, whose 500-task run this generalises); ${describeFeatures(stack.features)}.`,
    `- **Worker:** one process, \`node lib/src/worker.js\`, default settings${slotsFor(settings.tasks) ? ` but WORKER_MAX_CONCURRENT_ACTIVITIES=${slotsFor(settings.tasks)!.WORKER_MAX_CONCURRENT_ACTIVITIES} (a poll slot per task)` : ''}${settings.maxCachedWorkflows ? `, WORKER_MAX_CACHED_WORKFLOWS=${settings.maxCachedWorkflows}` : ''}, as the image runs it: the prebuilt workflow bundle, \`node ${WORKER_NODE_FLAGS.join(' ')}\`, ${Object.entries(
      WORKER_MALLOC_ENV,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}; sampled every 500 ms from \`/proc/<pid>\`.`,
    `- **Wall time:** first start → last close ${fmtMs(m.windowEnd - m.windowStart)}, of which the start burst ${fmtMs((outcome.allStartedAt ?? m.windowEnd) - m.windowStart)}.` +
      (outcome.deadlineHit ? ' **The deadline was hit: unfinished tasks count as not completed.**' : '') +
      (outcome.workerDied ? ` **${outcome.workerDied}.**` : ''),
    '',
    ...targetTable(rows),
    '',
    ...missLines(rows),
    '',
    ...distributions(m, settings),
    '',
    ...latencyBreakdown(m, records),
    '',
    ...memoryBreakdown(inputs.memoryProbes, settings.tasks),
    '',
    'Where the history events go (the task with the median count of each kind):',
    '',
    `- plain task: ${typicalHistory(m.plain)}`,
    `- \`[needs-code]\` task: ${typicalHistory(m.coded)}`,
    '',
    ...checks(inputs, m),
    '',
    ...howMeasured(),
  ];
  return {
    heading: SCALE_HEADING,
    markdown: lines.join('\n'),
    rows,
    raw: { records, outcome, samples: inputs.worker.sampler.samples, memoryProbes: inputs.memoryProbes },
  };
}

function targetRows(inputs: ScaleInputs, m: ScaleMeasures): TargetRow[] {
  const { settings } = inputs;
  const p = (s: Stats | undefined, f: (v: number) => string) =>
    s ? `p50 ${f(s.p50)} · p99 ${f(s.p99)} · max ${f(s.max)}` : 'n/a';
  const cpuAvg = inputs.worker.sampler.cpuPercent(m.windowStart, m.windowEnd);
  const cpuPeak = inputs.worker.sampler.peakCpuPercent(m.windowStart, m.windowEnd);
  return [
    {
      measure: 'API requests per task-minute',
      target: `≤ ${TARGETS.requestsPerTaskMinute} (max)`,
      measured: p(m.rpm, (v) => fmt(v, 2)),
      met: m.rpm ? m.rpm.max <= TARGETS.requestsPerTaskMinute : false,
    },
    {
      measure: 'API requests per task (create included)',
      target: '—',
      measured: p(m.requests, (v) => fmt(v, 0)),
      met: undefined,
    },
    {
      measure: `MCP client (polls every ${MCP_POLL_MS / 1000} s), computed`,
      target: '—',
      measured:
        `${MCP_REQUESTS_PER_MINUTE} per task-minute` +
        (m.rpm ? ` = ${fmt(MCP_REQUESTS_PER_MINUTE / m.rpm.p50, 1)}× this worker's p50` : ''),
      met: undefined,
    },
    {
      measure: 'History events per task',
      target: `< ${TARGETS.historyEvents} (max)`,
      measured: p(m.events, (v) => fmt(v, 0)),
      met: m.events ? m.events.max < TARGETS.historyEvents : false,
    },
    {
      measure: 'Task end → workflow closed',
      target: `p50 < ${fmtMs(TARGETS.closeP50Ms)}`,
      measured: p(m.close, fmtMs),
      met: m.close ? m.close.p50 < TARGETS.closeP50Ms : false,
    },
    {
      measure: 'submitCode → append request, codes sent after the start burst',
      target: `p50 < ${TARGETS.codeP50Ms} ms`,
      measured: p(m.codeLate, fmtMs),
      met:
        m.codesAfterBurst === 0
          ? undefined
          : m.codeLate
            ? m.codeLate.p50 < TARGETS.codeP50Ms && m.codeLate.n === m.codesAfterBurst
            : false,
    },
    {
      measure: 'submitCode → append request, codes sent during the start burst',
      target: '— (reported)',
      measured: p(m.codeBurst, fmtMs),
      met: undefined,
    },
    {
      measure: 'Worker peak RSS',
      target: `< ${TARGETS.peakRssMb} MB`,
      measured: m.rssPeakKb
        ? `${fmt(mb(m.rssPeakKb), 0)} MB (max of VmHWM and samples; under load ${fmt(m.rssUnderLoadKb && mb(m.rssUnderLoadKb), 0)} MB)`
        : 'n/a',
      met: m.rssPeakKb ? mb(m.rssPeakKb) < TARGETS.peakRssMb : false,
    },
    {
      measure: 'Memory per task (RSS under load − idle worker, / tasks)',
      target: '—',
      measured:
        m.rssUnderLoadKb && m.rssIdleKb
          ? `${fmt((m.rssUnderLoadKb - m.rssIdleKb) / settings.tasks, 0)} KB (idle worker ${fmt(mb(m.rssIdleKb), 0)} MB)`
          : 'n/a',
      met: undefined,
    },
    {
      measure: 'Worker CPU (% of one core)',
      target: '—',
      measured: `avg ${fmt(cpuAvg, 1)} % · peak 5-s window ${fmt(cpuPeak, 0)} %`,
      met: undefined,
    },
    {
      measure: 'Tasks completed (workflow COMPLETED, task finalized)',
      target: `all ${settings.tasks}`,
      measured: `${m.done.length} / ${settings.tasks}`,
      met: m.done.length === settings.tasks,
    },
  ];
}

function distributions(m: ScaleMeasures, settings: ScaleSettings): string[] {
  const f2 = (v: number) => fmt(v, 2);
  const f0 = (v: number) => fmt(v, 0);
  return [
    ...DISTRIBUTION_HEADER,
    distributionRow('API requests per task', m.requests),
    distributionRow('API requests per task-minute', m.rpm, f2),
    distributionRow(`… plain ${fmt(settings.durationMs / 1000, 0)}-s tasks`, m.rpmPlain, f2),
    distributionRow('… `[needs-code]` tasks', m.rpmCoded, f2),
    distributionRow('History events per task', m.events),
    distributionRow(`… plain ${fmt(settings.durationMs / 1000, 0)}-s tasks`, m.eventsPlain),
    distributionRow('… `[needs-code]` tasks', m.eventsCoded),
    distributionRow('Task end → workflow closed (ms)', m.close, f0),
    distributionRow('submitCode → append request, during the burst (ms)', m.codeBurst, f0),
    distributionRow('submitCode → append request, after the burst (ms)', m.codeLate, f0),
    distributionRow('submitCode RPC round trip (ms)', m.codeRpc, f0),
  ];
}

/** Where the latency goes, from history event times and emulator arrivals (one clock: all on this machine). */
function latencyBreakdown(m: ScaleMeasures, records: TaskRecord[]): string[] {
  const f0 = (v: number) => fmt(v, 0);
  const coded = records.filter((r) => r.plan.code && r.facts);
  const h = (r: TaskRecord) => r.facts!.history;
  return [
    '### Where the latency goes',
    '',
    '| Step | n | min | p50 | mean | p99 | max |',
    '|---|---|---|---|---|---|---|',
    distributionRow(
      'Task end → last `GET /tasks` (polling schedule)',
      between(
        m.done,
        (r) => r.facts!.endedAt,
        (r) => r.facts!.lastGetAt,
      ),
      f0,
    ),
    distributionRow(
      'Last `GET /tasks` → pollTask completed',
      between(
        m.done,
        (r) => r.facts!.lastGetAt,
        (r) => h(r)?.lastPollCompletedAt,
      ),
      f0,
    ),
    distributionRow(
      'pollTask completed → workflow closed (results fetch, completion)',
      between(
        m.done,
        (r) => h(r)?.lastPollCompletedAt,
        (r) => r.facts!.closeTime,
      ),
      f0,
    ),
    distributionRow(
      'Code form shown (first seen by the bench) → code submitted',
      between(
        coded,
        (r) => r.awaitingSeenAt,
        (r) => r.codeSentAt,
      ),
      f0,
    ),
    distributionRow(
      'submitCode call → WorkflowExecutionSignaled',
      between(
        coded,
        (r) => r.codeSentAt,
        (r) => h(r)?.signaledAt,
      ),
      f0,
    ),
    distributionRow(
      'Signaled → appendInstructions scheduled (workflow task)',
      between(
        coded,
        (r) => h(r)?.signaledAt,
        (r) => h(r)?.appendScheduledAt,
      ),
      f0,
    ),
    distributionRow(
      'Scheduled → activity started (dispatch to the worker)',
      between(
        coded,
        (r) => h(r)?.appendScheduledAt,
        (r) => h(r)?.appendStartedAt,
      ),
      f0,
    ),
    distributionRow(
      'Activity started → `POST …/instructions` arrives',
      between(
        coded,
        (r) => h(r)?.appendStartedAt,
        (r) => r.facts!.appendAt,
      ),
      f0,
    ),
  ];
}

/** The largest number of workflows between their start call and their close at one moment. */
function mostOpenAtOnce(records: TaskRecord[]): number {
  const edges = records
    .filter((r) => r.startCalledAt !== undefined && r.facts?.closeTime !== undefined)
    .flatMap((r) => [
      { at: r.startCalledAt!, step: 1 },
      { at: r.facts!.closeTime!, step: -1 },
    ])
    .sort((a, b) => a.at - b.at || a.step - b.step);
  let open = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (open += edge.step));
  return most;
}

function checks(inputs: ScaleInputs, m: ScaleMeasures): string[] {
  const { records, worker, stack } = inputs;
  const summary = summarizeRequests(inputs.requests);
  const codeTasks = records.filter((r) => r.plan.code);
  const typedOnce = codeTasks.filter(
    (r) => r.facts?.codesReceived?.length === 1 && r.facts.codesReceived[0] === r.plan.code!.value,
  ).length;
  const cores = os.cpus().length;
  const failures = records.filter((r) => !completedOk(r));
  return [
    `- Creates: ${summary.createsByProject.bench ?? 0} \`POST /tasks\` for ${records.filter((r) => r.firstRunId).length} workflows; stop commands: ${summary.stops}; ` +
      `non-2xx answers: ${summary.non2xx}; total API requests: ${summary.total}.`,
    `- One-time codes typed exactly once: ${typedOnce} / ${codeTasks.length}.`,
    `- Most workflows open at once (start call → close): ${mostOpenAtOnce(records)} of ${records.length}.`,
    `- Continued-as-new: ${records.filter((r) => (r.facts?.history?.runs ?? 1) > 1).length} workflows.`,
    `- Worker log lines with WARN: ${worker.warnLines}, with ERROR: ${worker.errorLines}.`,
    `- CPU around the worker, first start → last close: Temporal dev server ${fmt(stack.server.cpuPercent(m.windowStart, m.windowEnd), 0)} % of one core ` +
      `(peak 5-s window ${fmt(stack.server.peakCpuPercent(m.windowStart, m.windowEnd), 0)} %); whole machine ${fmt(stack.machine.busyPercent(m.windowStart, m.windowEnd, cores), 0)} % busy.`,
    ...failures
      .slice(0, 5)
      .map(
        (r) =>
          `- Not completed: \`${r.plan.workflowId}\`: ${r.startError ?? r.facts?.failure ?? r.facts?.status ?? 'not closed'}`,
      ),
    ...(failures.length > 5 ? [`- … and ${failures.length - 5} more not completed.`] : []),
  ];
}

function howMeasured(): string[] {
  return [
    '### How it is measured',
    '',
    '- **API requests per task**: every request the emulator recorded for the task: its `POST /tasks` plus every request naming its execution ID ' +
      "(`GET /tasks/{id}`, `GET /results/{id}`, `POST|PUT /tasks/{id}/instructions`, `POST /tasks/{id}/command`); per task-minute: divided by the task's " +
      "emulated lifetime (create → end, so a `[needs-code]` task's minutes include its wait for the code).",
    '- **History events per task**: `fetchHistory()` event count, summed over every run if the workflow continued as new.',
    "- **Task end → workflow closed**: from the emulator's recorded end of the task to the workflow's `closeTime` (`describe()`).",
    '- **submitCode → append request**: from just before the client sends `submitCode` to the arrival of `POST /tasks/{id}/instructions` at the emulator ' +
      '(one clock: both in the bench process).',
    '- **Worker peak RSS**: the worker process alone: the larger of its kernel high-water mark (`VmHWM`, start-up included, when the workflow bundle is built) and ' +
      'the largest `VmRSS` sample. CPU is `utime + stime` from `/proc/<pid>/stat`, in % of one core; the peak is the busiest 5-s window.',
  ];
}
