// Scale: many concurrent tasks on one worker process at its defaults, started in one burst, some
// with one-time codes during and after it: docs/benchmarks-method.md#scale.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Random } from '../../dev/random';
import type { MemoryProbeReport } from '../../dev/memory-probe';
import { WORKER_MALLOC_ENV, WORKER_NODE_FLAGS } from '../../dev/worker-child';
import { collectFacts, summarizeRequests } from '../collect';
import { fmt, fmtMs, log, mb } from '../format';
import { MCP_POLL_MS } from '../mcp-client';
import { CodeMaker, plainInput, PROJECT } from '../plan';
import { bounded, distributions, row, spread, typicalHistory } from '../report/markdown';
import { runTasks } from '../run';
import { QUEUE_MS, scenario } from '../scenario';
import { runTargetOf, type BenchStack } from '../stack';
import { between, stats, type Stats } from '../statistics';
import { openSteps } from '../time-series';
import { closeSteps, latencyTable, messageSteps, missReason } from '../report/latency-steps';
import { at, completedOk, count, type PlannedTask, type TaskRecord } from '../task';
import { completedRow, notCompleted } from '../twins';
import { memoryBreakdown, memoryReason } from './scale-memory';

const TASK_QUEUE = 'bench-scale';
const [f0, f2] = [(v: number) => fmt(v, 0), (v: number) => fmt(v, 2)];
// Issue 36: the tails hold on a busy machine as on a quiet one; the code p50 is judged on a quiet one.
const TARGETS = { requestsPerTaskMinute: 10, historyEvents: 60, peakRssMb: 500 };
const CLOSE = { p50: 3_000, p99: 5_000 };
const CODE = { p99: 2_000, max: 5_000 };
const QUIET_CODE_P50_MS = 300;
/** The MCP client's polls alone, before any create: 60 s / its 3-s interval. */
const MCP_REQUESTS_PER_MINUTE = 60_000 / MCP_POLL_MS;

/** The image's workflow bundle (Dockerfile): built by the same script, into a temporary file. */
export function buildWorkflowBundle(): string {
  const file = join(mkdtempSync(join(os.tmpdir(), 'bench-bundle-')), 'workflow-bundle.js');
  execFileSync(process.execPath, [require.resolve('../../scripts/build-workflow-bundle'), file], { stdio: 'ignore' });
  return file;
}

export const measureScale = scenario({
  heading: '## Scale: many concurrent tasks on one worker',
  stack: ({ config }) => ({ queueMs: QUEUE_MS, mode: config.scale.emulatorMode }),
  plan(_stack, { config: { scale: settings, seed } }) {
    const { tasks, burstCodes, lateCodes, lateCodeDelayMs, durationMs } = settings;
    const codes = new CodeMaker(new Random(seed));
    const codeTasks = burstCodes + lateCodes;
    const spread = (i: number, n: number, of: number) => Math.floor(((i + 1) * n) / of) > Math.floor((i * n) / of);
    let codeIndex = 0;
    return Array.from({ length: tasks }, (_, i): PlannedTask => {
      const tag = `#m${i}`;
      const isCode = spread(i, codeTasks, tasks);
      // Late ones spread evenly among the code tasks, so both kinds span the whole burst.
      const late = isCode && spread(codeIndex++, lateCodes, codeTasks);
      const [when, delayMs] = late ? ['after-burst' as const, lateCodeDelayMs] : ['awaiting' as const, 0];
      const code = isCode ? { value: codes.next(), tag, when, delayMs } : undefined;
      const action = `Benchmark crawl ${tag} [duration=${Math.round(durationMs / 1000)}s]${code ? ' [needs-code]' : ''}`;
      const group = !isCode ? 'plain' : late ? 'code after burst' : 'code during burst';
      return { workflowId: `bench-scale-${i}`, group, startAtMs: 0, durationMs, code, input: plainInput(action) };
    });
  },
  async measure(stack, plan, { config: { scale: settings } }) {
    // As the image runs it; past the default 5,000 activity slots, a poll slot per task.
    const slots = settings.tasks + 100 > 5_000 ? String(settings.tasks + 100) : undefined;
    const worker = await stack.startWorker('default', TASK_QUEUE, {
      WORKER_WORKFLOW_BUNDLE: buildWorkflowBundle(),
      ...(slots ? { WORKER_MAX_CONCURRENT_ACTIVITIES: slots } : {}),
      ...(settings.cachedWorkflows ? { WORKER_MAX_CACHED_WORKFLOWS: String(settings.cachedWorkflows) } : {}),
    });
    const records = plan.map((p): TaskRecord => ({ plan: p }));
    log(`scale: ${records.length} tasks, ${settings.burstCodes} + ${settings.lateCodes} of them with codes`);
    // Starting takes about 1 s per 100 workflows on 2 cores; then the tasks, the late codes and slack:
    // 8 min, and past 2,000 tasks 100 ms more per task (10,000 closed at about 12 a second here, the
    // dev server on the same 2 cores replaying workflows the worker's cache could not hold).
    const slack = records.length * 15 + settings.durationMs + settings.lateCodeDelayMs + 8 * 60_000;
    const deadlineAt = Date.now() + slack + Math.max(0, records.length - 2_000) * 100;
    const target = runTargetOf(stack, worker, TASK_QUEUE, PROJECT);
    // Where the memory goes, asked every 10 s: the answer taken at the largest RSS is reported.
    const probes: Array<{ at: number; report: MemoryProbeReport }> = [];
    const probe = () => void worker.probeMemory().then((report) => report && probes.push({ at: Date.now(), report }));
    const probing = setInterval(probe, 10_000);
    const options = { batch: settings.batch, deadlineAt, label: 'scale' };
    const outcome = await runTasks(records, target, options).finally(() => clearInterval(probing));
    worker.sampler.sample();
    log('scale: collecting per-task results and histories');
    await collectFacts(stack.temporal.client, records, stack.emulator);
    return { records, outcome, probes, slots };
  },
  report({ outcome, records, probes, slots }, stack, { config: { scale: settings }, hogs }) {
    const done = records.filter(completedOk);
    const [plain, coded] = [done.filter((r) => !r.plan.code), done.filter((r) => r.plan.code)];
    const [requests, rpm, events] = [count.requests, count.perMinute, count.events].map((n) => stats(done.map(n)));
    const close = between(done, at.ended, at.closed);
    const closeBounds = bounded(close, CLOSE, fmtMs);
    // By when the code was actually sent: a code meant for "as soon as the form shows" whose task
    // started at the end of the burst is sent after it.
    const [sentDuring, sentAfter] = [true, false].map((during) =>
      records.filter((r) => r.codeSentAt !== undefined && r.codeSentAt < (outcome.allStartedAt ?? Infinity) === during),
    );
    const [codeBurst, codeLate] = [sentDuring, sentAfter].map((sent) => between(sent, at.codeSent, at.appended));
    // Every code sent must have arrived, or its latency is missing from the figures.
    const judge = (s: Stats | undefined, sent: TaskRecord[], bounds: typeof CODE & { p50?: number }) => {
      const judged = bounded(s, bounds, fmtMs);
      const why = missReason(sent, messageSteps(at.codeSent), judged.over);
      return { ...judged, met: sent.length ? judged.met && s!.n === sent.length : undefined, why };
    };
    const burstBounds = judge(codeBurst, sentDuring, CODE);
    const lateBounds = judge(codeLate, sentAfter, hogs ? CODE : { p50: QUIET_CODE_P50_MS, ...CODE });
    const closes = records.map(at.closed).filter((t): t is number => t !== undefined);
    const [from, to] = [outcome.firstStartAt, closes.length === records.length ? Math.max(...closes) : outcome.endedAt];
    const { sampler } = stack.workers[0]!;
    const [peak, loaded] = [sampler.peakEverKb(), sampler.peakRssKb(from, to)];
    // The idle worker (start-up done, nothing started yet): what each task adds is measured from it.
    const idle = sampler.lastRssKbBefore(from);
    const rss = peak && `${f0(mb(peak))} MB (max of VmHWM and samples; under load ${fmt(loaded && mb(loaded), 0)} MB)`;
    const perTask = loaded && idle && `${f0((loaded - idle) / settings.tasks)} KB (idle worker ${f0(mb(idle))} MB)`;
    const cpu = `avg ${fmt(sampler.cpuPercent(from, to), 1)} % · peak 5-s window ${fmt(sampler.peakCpuPercent(from, to), 0)} %`;
    const mcpTimes = rpm ? ` = ${fmt(MCP_REQUESTS_PER_MINUTE / rpm.p50, 1)}× this worker's p50` : '';
    const seconds = fmt(settings.durationMs / 1000, 0);
    const env = Object.entries(WORKER_MALLOC_ENV).map(([k, v]) => `${k}=${v}`);
    return {
      // prettier-ignore
      rows: [
        row('API requests per task-minute', `≤ ${TARGETS.requestsPerTaskMinute} (max)`, spread(rpm, f2), !!rpm && rpm.max <= TARGETS.requestsPerTaskMinute, busiestReason(done)),
        row('API requests per task (create included)', '—', spread(requests, f0)),
        row(`MCP client (polls every ${MCP_POLL_MS / 1000} s), computed`, '—', `${MCP_REQUESTS_PER_MINUTE} per task-minute${mcpTimes}`),
        row('History events per task', `< ${TARGETS.historyEvents} (max)`, spread(events, f0), !!events && events.max < TARGETS.historyEvents),
        row('Task end → workflow closed', closeBounds.target, spread(close, fmtMs), closeBounds.met, missReason(done, closeSteps(), closeBounds.over)),
        row('submitCode → append request, codes sent after the start burst', lateBounds.target, spread(codeLate, fmtMs), lateBounds.met, lateBounds.why),
        row('submitCode → append request, codes sent during the start burst', burstBounds.target, spread(codeBurst, fmtMs), burstBounds.met, burstBounds.why),
        row('Worker peak RSS', `< ${TARGETS.peakRssMb} MB`, rss || 'n/a', !!peak && mb(peak) < TARGETS.peakRssMb, memoryReason(probes)),
        row('Memory per task (RSS under load − idle worker, / tasks)', '—', perTask || 'n/a'),
        row('Worker CPU (% of one core)', '—', cpu),
        completedRow('Tasks completed (workflow COMPLETED, task finalized)', records),
      ],
      setup: [
        `- **Tasks:** ${settings.tasks} concurrent \`browserTask\` workflows, each \`[duration=${seconds}s]\` after ${QUEUE_MS} ms queued, started in one burst in batches of ${settings.batch}. ${settings.burstCodes} \`[needs-code]\` tasks get their code as soon as the form shows, ${settings.lateCodes} ${fmt(settings.lateCodeDelayMs / 1000, 0)} s after the last start: [how](docs/benchmarks-method.md#scale).`,
        `- **Worker:** one process, \`node lib/src/worker.js\`, default settings${slots ? ` but WORKER_MAX_CONCURRENT_ACTIVITIES=${slots} (a poll slot per task)` : ''}${settings.cachedWorkflows ? `, WORKER_MAX_CACHED_WORKFLOWS=${settings.cachedWorkflows}` : ''}, as the image runs it: the prebuilt workflow bundle, \`node ${WORKER_NODE_FLAGS.join(' ')}\`, ${env.join(' ')}; sampled every 500 ms from \`/proc/<pid>\`.`,
        `- **Wall time:** first start → last close ${fmtMs(to - from)}, of which the start burst ${fmtMs((outcome.allStartedAt ?? to) - from)}.${outcome.deadlineHit ? ' **The deadline was hit: unfinished tasks count as not completed.**' : ''}${outcome.workerDied ? ` **${outcome.workerDied}.**` : ''}`,
      ],
      details: [
        ...distributions([
          ['API requests per task', requests],
          ['API requests per task-minute', rpm, f2],
          [`… plain ${seconds}-s tasks`, stats(plain.map(count.perMinute)), f2],
          ['… `[needs-code]` tasks', stats(coded.map(count.perMinute)), f2],
          ['History events per task', events],
          [`… plain ${seconds}-s tasks`, stats(plain.map(count.events))],
          ['… `[needs-code]` tasks', stats(coded.map(count.events))],
          ['Task end → workflow closed (ms)', close, f0],
          ['submitCode → append request, during the burst (ms)', codeBurst, f0],
          ['submitCode → append request, after the burst (ms)', codeLate, f0],
          ['submitCode RPC round trip (ms)', between(records, at.codeSent, at.codeAccepted), f0],
          [
            'Code form shown (first seen by the bench) → code submitted (ms)',
            between(records, at.awaitingSeen, at.codeSent),
            f0,
          ],
        ]),
        '',
        '### Where the latency goes',
        '',
        ...latencyTable(
          'submitCode → append request, codes sent after the start burst',
          sentAfter,
          messageSteps(at.codeSent),
        ),
        '',
        ...latencyTable(
          'submitCode → append request, codes sent during the start burst',
          sentDuring,
          messageSteps(at.codeSent),
        ),
        '',
        ...latencyTable('Task end → workflow closed', done, closeSteps()),
        '',
        ...memoryBreakdown(probes, settings.tasks),
        '',
        'Where the history events go (the task with the median count of each kind):',
        '',
        `- plain task: ${typicalHistory(plain)}`,
        `- \`[needs-code]\` task: ${typicalHistory(coded)}`,
        '',
        ...checks(records, stack, from, to),
        '',
        'How each figure is measured: [docs/benchmarks-method.md](docs/benchmarks-method.md#per-task-figures).',
      ],
      raw: { records, outcome, samples: sampler.samples, memoryProbes: probes },
    };
  },
});

/** The task with the most requests per minute: what it made them of (a miss's reason). */
function busiestReason(done: TaskRecord[]): string | undefined {
  const busiest = [...done].sort((a, b) => (count.perMinute(b) ?? 0) - (count.perMinute(a) ?? 0))[0]?.facts;
  if (!busiest?.requests || !busiest.taskMinutes) return undefined;
  return `the busiest task made ${busiest.requests} requests in ${fmt(busiest.taskMinutes, 2)} min (polls while it ran: ${busiest.getsBeforeEnd ?? 'n/a'}; the rest: its create, the poll that saw the end, the results, any instructions).`;
}

function checks(records: TaskRecord[], stack: BenchStack, from: number, to: number): string[] {
  const summary = summarizeRequests(stack.emulator.requests);
  const codeTasks = records.filter((r) => r.plan.code);
  const typedOnce = codeTasks.filter((r) => r.facts?.codesReceived?.join() === r.plan.code!.value).length;
  const worker = stack.workers[0]!;
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
