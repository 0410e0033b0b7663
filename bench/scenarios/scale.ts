// Scale: many concurrent tasks on one worker process at its defaults, started in one burst, some
// with one-time codes during and after it: docs/benchmarks-method.md#scale.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { Random } from '../../dev/random';
import { WORKER_MALLOC_ENV, WORKER_NODE_FLAGS } from '../../dev/worker-child';
import { collectFacts, summarizeRequests } from '../collect';
import type { ScenarioSettings } from '../config';
import { fmt, fmtMs, log, mb } from '../format';
import { MCP_POLL_MS } from '../mcp-client';
import { CodeMaker, plainInput, PROJECT } from '../plan';
import { distributions, row, spread, typicalHistory } from '../report/markdown';
import { runTasks, type RunOutcome } from '../run';
import { QUEUE_MS, scenario } from '../scenario';
import { runTargetOf, type BenchStack } from '../stack';
import { between, stats } from '../statistics';
import { openSteps } from '../time-series';
import { at, completedOk, count, type PlannedCode, type PlannedTask, type TaskRecord } from '../task';
import { completedRow, notCompleted } from '../twins';
import { memoryBreakdown, type TimedProbe } from './scale-memory';

const TASK_QUEUE = 'bench-scale';
const PROBE_EVERY_MS = 10_000;
const BUILD_BUNDLE = resolve(__dirname, '../../scripts/build-workflow-bundle.js');
const [f0, f2] = [(v: number) => fmt(v, 0), (v: number) => fmt(v, 2)];
const TARGETS = { requestsPerTaskMinute: 10, historyEvents: 60, closeP50Ms: 3_000, codeP50Ms: 300, peakRssMb: 600 };
/** The MCP client's polls alone, before any create: 60 s / its 3-s interval. */
const MCP_REQUESTS_PER_MINUTE = 60_000 / MCP_POLL_MS;

/** WORKER_MAX_CONCURRENT_ACTIVITIES for this many tasks, when the worker's default (5,000) is too few. */
function slotsFor(tasks: number): Record<string, string> | undefined {
  return tasks + 100 > 5_000 ? { WORKER_MAX_CONCURRENT_ACTIVITIES: String(tasks + 100) } : undefined;
}

/** The image's workflow bundle (Dockerfile): built by the same script, into a temporary file. */
export function buildWorkflowBundle(): string {
  const file = join(mkdtempSync(join(os.tmpdir(), 'bench-bundle-')), 'workflow-bundle.js');
  execFileSync(process.execPath, [BUILD_BUNDLE, file], { stdio: 'ignore' });
  return file;
}

function planScale(settings: ScenarioSettings<'scale'>, seed: number): PlannedTask[] {
  const codes = new CodeMaker(new Random(seed));
  const { tasks, lateCodes } = settings;
  const codeTasks = settings.burstCodes + lateCodes;
  const spread = (i: number, n: number, of: number) => Math.floor(((i + 1) * n) / of) > Math.floor((i * n) / of);
  let codeIndex = 0;
  return Array.from({ length: tasks }, (_, i): PlannedTask => {
    const tag = `#m${i}`;
    const isCode = spread(i, codeTasks, tasks);
    // Late ones spread evenly among the code tasks, so both kinds span the whole burst.
    const late = isCode && spread(codeIndex++, lateCodes, codeTasks);
    const [when, delayMs] = late ? ['after-burst' as const, settings.lateCodeDelayMs] : ['awaiting' as const, 0];
    const code: PlannedCode | undefined = isCode ? { value: codes.next(), tag, when, delayMs } : undefined;
    const action = `Benchmark crawl ${tag} [duration=${Math.round(settings.durationMs / 1000)}s]${code ? ' [needs-code]' : ''}`;
    const group = !isCode ? 'plain' : late ? 'code after burst' : 'code during burst';
    // prettier-ignore
    return { workflowId: `bench-scale-${i}`, group, startAtMs: 0, durationMs: settings.durationMs, code, input: plainInput(action) };
  });
}

export const measureScale = scenario({
  heading: '## Scale: many concurrent tasks on one worker',
  stack: ({ config }) => ({ queueMs: QUEUE_MS, emulatorMode: config.scale.emulatorMode }),
  plan: (_stack, { config }) => planScale(config.scale, config.seed),
  async measure(stack, plan, { config: { scale: settings } }) {
    // As the image runs it; past the default 5,000 activity slots, a poll slot per task.
    const worker = await stack.startWorker('default', TASK_QUEUE, {
      WORKER_WORKFLOW_BUNDLE: buildWorkflowBundle(),
      ...slotsFor(settings.tasks),
      ...(settings.cachedWorkflows ? { WORKER_MAX_CACHED_WORKFLOWS: String(settings.cachedWorkflows) } : {}),
    });
    const records = plan.map((p): TaskRecord => ({ plan: p }));
    const { length } = records;
    log(`scale: ${length} tasks, ${settings.burstCodes} + ${settings.lateCodes} of them with codes`);
    // Starting takes about 1 s per 100 workflows on 2 cores; then the tasks, the late codes and slack:
    // 8 min, and past 2,000 tasks 100 ms more per task (10,000 closed at about 12 a second here, the
    // dev server on the same 2 cores replaying workflows the worker's cache could not hold).
    const slack = length * 15 + settings.durationMs + settings.lateCodeDelayMs + 8 * 60_000;
    const deadlineAt = Date.now() + slack + Math.max(0, length - 2_000) * 100;
    const target = runTargetOf(stack, worker, TASK_QUEUE, PROJECT);
    // Where the memory goes, asked every 10 s: the answer taken at the largest RSS is reported.
    const probes: TimedProbe[] = [];
    const probe = () => void worker.probeMemory().then((report) => report && probes.push({ at: Date.now(), report }));
    const probing = setInterval(probe, PROBE_EVERY_MS);
    const options = { batch: settings.batch, deadlineAt, label: 'scale' };
    const outcome = await runTasks(records, target, options).finally(() => clearInterval(probing));
    worker.sampler.sample();
    log('scale: collecting per-task results and histories');
    await collectFacts(stack.temporal.client, records, stack.emulator, [...stack.emulator.requests]);
    return { records, outcome, probes };
  },
  report({ outcome, records, probes }, stack, { config: { scale: settings } }) {
    const m = measures(records, outcome, stack);
    const plainLabel = `… plain ${fmt(settings.durationMs / 1000, 0)}-s tasks`;
    const slots = slotsFor(settings.tasks)?.WORKER_MAX_CONCURRENT_ACTIVITIES;
    const env = Object.entries(WORKER_MALLOC_ENV).map(([k, v]) => `${k}=${v}`);
    return {
      rows: targetRows(settings, m),
      setup: [
        `- **Tasks:** ${settings.tasks} concurrent \`browserTask\` workflows, each \`[duration=${fmt(settings.durationMs / 1000, 0)}s]\` after ${QUEUE_MS} ms queued, started in one burst in batches of ${settings.batch}. ${settings.burstCodes} \`[needs-code]\` tasks get their code as soon as the form shows, ${settings.lateCodes} ${fmt(settings.lateCodeDelayMs / 1000, 0)} s after the last start: [how](docs/benchmarks-method.md#scale).`,
        `- **Worker:** one process, \`node lib/src/worker.js\`, default settings${slots ? ` but WORKER_MAX_CONCURRENT_ACTIVITIES=${slots} (a poll slot per task)` : ''}${settings.cachedWorkflows ? `, WORKER_MAX_CACHED_WORKFLOWS=${settings.cachedWorkflows}` : ''}, as the image runs it: the prebuilt workflow bundle, \`node ${WORKER_NODE_FLAGS.join(' ')}\`, ${env.join(' ')}; sampled every 500 ms from \`/proc/<pid>\`.`,
        `- **Wall time:** first start → last close ${fmtMs(m.windowEnd - m.windowStart)}, of which the start burst ${fmtMs((outcome.allStartedAt ?? m.windowEnd) - m.windowStart)}.${outcome.deadlineHit ? ' **The deadline was hit: unfinished tasks count as not completed.**' : ''}${outcome.workerDied ? ` **${outcome.workerDied}.**` : ''}`,
      ],
      details: [
        ...distributions([
          ['API requests per task', m.requests],
          ['API requests per task-minute', m.rpm, f2],
          [plainLabel, m.rpmPlain, f2],
          ['… `[needs-code]` tasks', m.rpmCoded, f2],
          ['History events per task', m.events],
          [plainLabel, m.eventsPlain],
          ['… `[needs-code]` tasks', m.eventsCoded],
          ['Task end → workflow closed (ms)', m.close, f0],
          ['submitCode → append request, during the burst (ms)', m.codeBurst, f0],
          ['submitCode → append request, after the burst (ms)', m.codeLate, f0],
          ['submitCode RPC round trip (ms)', m.codeRpc, f0],
        ]),
        '',
        ...latencyBreakdown(m, records),
        '',
        ...memoryBreakdown(probes, settings.tasks),
        '',
        'Where the history events go (the task with the median count of each kind):',
        '',
        `- plain task: ${typicalHistory(m.plain)}`,
        `- \`[needs-code]\` task: ${typicalHistory(m.coded)}`,
        '',
        ...checks(records, stack, m),
        '',
        'How each figure is measured: [docs/benchmarks-method.md](docs/benchmarks-method.md#per-task-figures).',
      ],
      raw: { records, outcome, samples: stack.workers[0]?.sampler.samples, memoryProbes: probes },
    };
  },
});

/** The measures every part of the section uses, computed once. */
function measures(records: TaskRecord[], outcome: RunOutcome, stack: BenchStack) {
  const done = records.filter(completedOk);
  const plain = done.filter((r) => !r.plan.code);
  const coded = done.filter((r) => r.plan.code);
  // By when the code was actually sent: a code meant for "as soon as the form shows" whose task
  // started at the end of the burst is sent after it.
  const burstEnd = outcome.allStartedAt ?? Infinity;
  const sent = (duringBurst: boolean) =>
    records.filter((r) => r.codeSentAt !== undefined && r.codeSentAt < burstEnd === duringBurst);
  const closes = records.map(at.closed).filter((t): t is number => t !== undefined);
  const windowEnd = closes.length === records.length && closes.length > 0 ? Math.max(...closes) : outcome.endedAt;
  const { sampler } = stack.workers[0]!;
  const { firstStartAt: windowStart } = outcome;
  // prettier-ignore
  return {
    records, done, plain, coded, windowStart, windowEnd,
    requests: stats(done.map(count.requests)),
    rpm: stats(done.map(count.perMinute)), rpmPlain: stats(plain.map(count.perMinute)), rpmCoded: stats(coded.map(count.perMinute)),
    events: stats(done.map(count.events)), eventsPlain: stats(plain.map(count.events)), eventsCoded: stats(coded.map(count.events)),
    close: between(done, at.ended, at.closed),
    codeBurst: between(sent(true), at.codeSent, at.appended),
    codeLate: between(sent(false), at.codeSent, at.appended),
    codesAfterBurst: sent(false).length,
    codeRpc: between(records, at.codeSent, at.codeAccepted),
    rssPeakKb: sampler.peakEverKb(),
    rssUnderLoadKb: sampler.peakRssKb(windowStart, windowEnd),
    // The idle worker (start-up done, nothing started yet): what each task adds is measured from it.
    rssIdleKb: sampler.lastRssKbBefore(windowStart),
    cpuAvg: sampler.cpuPercent(windowStart, windowEnd),
    cpuPeak: sampler.peakCpuPercent(windowStart, windowEnd),
  };
}
type ScaleMeasures = ReturnType<typeof measures>;

function targetRows(settings: ScenarioSettings<'scale'>, m: ScaleMeasures) {
  const { rpm, events, close, codeLate, rssPeakKb: peak, rssUnderLoadKb: loaded, rssIdleKb: idle } = m;
  const T = TARGETS;
  const mcpTimes = rpm ? ` = ${fmt(MCP_REQUESTS_PER_MINUTE / rpm.p50, 1)}× this worker's p50` : '';
  const lateMet = !!codeLate && codeLate.p50 < T.codeP50Ms && codeLate.n === m.codesAfterBurst;
  const rss = peak && `${f0(mb(peak))} MB (max of VmHWM and samples; under load ${fmt(loaded && mb(loaded), 0)} MB)`;
  const perTask = loaded && idle && `${f0((loaded - idle) / settings.tasks)} KB (idle worker ${f0(mb(idle))} MB)`;
  // prettier-ignore
  return [
    row('API requests per task-minute', `≤ ${T.requestsPerTaskMinute} (max)`, spread(rpm, f2), !!rpm && rpm.max <= T.requestsPerTaskMinute),
    row('API requests per task (create included)', '—', spread(m.requests, f0)),
    row(`MCP client (polls every ${MCP_POLL_MS / 1000} s), computed`, '—', `${MCP_REQUESTS_PER_MINUTE} per task-minute${mcpTimes}`),
    row('History events per task', `< ${T.historyEvents} (max)`, spread(events, f0), !!events && events.max < T.historyEvents),
    row('Task end → workflow closed', `p50 < ${fmtMs(T.closeP50Ms)}`, spread(close, fmtMs), !!close && close.p50 < T.closeP50Ms),
    row('submitCode → append request, codes sent after the start burst', `p50 < ${T.codeP50Ms} ms`, spread(codeLate, fmtMs), m.codesAfterBurst ? lateMet : undefined),
    row('submitCode → append request, codes sent during the start burst', '— (reported)', spread(m.codeBurst, fmtMs)),
    row('Worker peak RSS', `< ${T.peakRssMb} MB`, rss || 'n/a', !!peak && mb(peak) < T.peakRssMb),
    row('Memory per task (RSS under load − idle worker, / tasks)', '—', perTask || 'n/a'),
    row('Worker CPU (% of one core)', '—', `avg ${fmt(m.cpuAvg, 1)} % · peak 5-s window ${fmt(m.cpuPeak, 0)} %`),
    completedRow('Tasks completed (workflow COMPLETED, task finalized)', m.records),
  ];
}

/** Where the latency goes, from history event times and emulator arrivals (one clock: all on this machine). */
function latencyBreakdown(m: ScaleMeasures, records: TaskRecord[]): string[] {
  const coded = records.filter((r) => r.plan.code && r.facts);
  type Moment = (r: TaskRecord) => number | undefined;
  const steps: Array<[string, TaskRecord[], Moment, Moment]> = [
    ['Task end → last `GET /tasks` (polling schedule)', m.done, at.ended, at.lastGet],
    ['Last `GET /tasks` → pollTask completed', m.done, at.lastGet, at.pollCompleted],
    ['pollTask completed → workflow closed (results fetch, completion)', m.done, at.pollCompleted, at.closed],
    ['Code form shown (first seen by the bench) → code submitted', coded, at.awaitingSeen, at.codeSent],
    ['submitCode call → WorkflowExecutionSignaled', coded, at.codeSent, at.signaled],
    ['Signaled → appendInstructions scheduled (workflow task)', coded, at.signaled, at.appendScheduled],
    ['Scheduled → activity started (dispatch to the worker)', coded, at.appendScheduled, at.appendStarted],
    ['Activity started → `POST …/instructions` arrives', coded, at.appendStarted, at.appended],
  ];
  const table = distributions(steps.map(([label, items, from, to]) => [label, between(items, from, to), f0]));
  return ['### Where the latency goes', '', '| Step | n | min | p50 | mean | p99 | max |', ...table.slice(1)];
}

function checks(records: TaskRecord[], stack: BenchStack, m: ScaleMeasures): string[] {
  const summary = summarizeRequests(stack.emulator.requests);
  const codeTasks = records.filter((r) => r.plan.code);
  const typedOnce = codeTasks.filter((r) => r.facts?.codesReceived?.join() === r.plan.code!.value).length;
  const worker = stack.workers[0]!;
  const { windowStart: from, windowEnd: to } = m;
  const opened = records.flatMap((r) =>
    r.startCalledAt && r.facts?.closeTime ? [[r.startCalledAt, r.facts.closeTime] as const] : [],
  );
  return [
    `- Creates: ${summary.createsByProject[PROJECT] ?? 0} \`POST /tasks\` for ${records.filter((r) => r.firstRunId).length} workflows; stop commands: ${summary.stops}; non-2xx answers: ${summary.non2xx}; total API requests: ${summary.total}.`,
    `- One-time codes typed exactly once: ${typedOnce} / ${codeTasks.length}.`,
    `- Most workflows open at once (start call → close): ${Math.max(0, ...openSteps(opened).map((s) => s.open))} of ${records.length}.`,
    `- Continued-as-new: ${records.filter((r) => (r.facts?.history?.runs ?? 1) > 1).length} workflows.`,
    `- Worker log lines with WARN: ${worker.warnLines}, with ERROR: ${worker.errorLines}.`,
    `- CPU around the worker, first start → last close: Temporal dev server ${fmt(stack.server.cpuPercent(from, to), 0)} % of one core (peak 5-s window ${fmt(stack.server.peakCpuPercent(from, to), 0)} %); whole machine ${fmt(stack.machine.busyPercent(from, to, os.cpus().length), 0)} % busy.`,
    ...notCompleted(records),
  ];
}
