// Signals: many short tasks at once on one worker, every n-th sent `appendInstructions` while it
// runs. The tail of a message held back (signal → append request) and of a close held back (task
// end → workflow closed) when every workflow wakes within seconds of the others.
import { Random } from '../../dev/random';
import { fmt, fmtMs, log, mb } from '../format';
import { plainInput, PROJECT, uniform } from '../plan';
import { closeSteps, latencyTable, messageSteps, missReason } from '../report/latency-steps';
import { bounded, distributions, row, spread } from '../report/markdown';
import { runTasks } from '../run';
import { QUEUE_MS, scenario } from '../scenario';
import { runTargetOf } from '../stack';
import { between } from '../statistics';
import { at, completedOk, type PlannedTask, type TaskRecord } from '../task';
import { completedRow, notCompleted } from '../twins';
import { collectFacts, summarizeRequests } from '../collect';

const TASK_QUEUE = 'bench-signals';
/** Issue 36's targets, on a busy machine as on a quiet one. */
const MESSAGE = { p99: 2_000, max: 5_000 };
const CLOSE = { p99: 5_000 };
/** A signal goes out this long after its task's start call at the earliest: the task runs by then. */
const SIGNAL_FROM_MS = 2_000;

export const measureSignals = scenario({
  heading: '## Signals: short tasks at once, instructions appended while they run',
  stack: ({ config }) => ({ queueMs: QUEUE_MS, mode: config.signals.emulatorMode }),
  plan(_stack, { config: { signals: settings, seed } }) {
    const rng = new Random(seed * 7_919 + 36);
    const seconds = Math.round(settings.durationMs / 1000);
    return Array.from({ length: settings.tasks }, (_, i): PlannedTask => {
      const tag = `#s${i}`;
      // Every n-th, at a moment drawn within the first half of its run.
      const signal =
        i % settings.signalEvery === settings.signalEvery - 1
          ? {
              tag,
              afterMs: Math.round(uniform(rng, SIGNAL_FROM_MS, Math.max(SIGNAL_FROM_MS, settings.durationMs / 2))),
            }
          : undefined;
      const input = plainInput(`Benchmark listing ${tag} [duration=${seconds}s]`);
      return {
        workflowId: `bench-signals-${i}`,
        group: signal ? 'signalled' : 'plain',
        startAtMs: 0,
        durationMs: settings.durationMs,
        signal,
        input,
      };
    });
  },
  async measure(stack, plan, { config: { signals: settings } }) {
    const worker = await stack.startWorker('default', TASK_QUEUE);
    const records = plan.map((p): TaskRecord => ({ plan: p }));
    log(`signals: ${records.length} tasks, ${records.filter((r) => r.plan.signal).length} of them signalled`);
    const deadlineAt = Date.now() + records.length * 15 + 2 * settings.durationMs + 5 * 60_000;
    const target = runTargetOf(stack, worker, TASK_QUEUE, PROJECT);
    const outcome = await runTasks(records, target, { deadlineAt, label: 'signals' });
    await collectFacts(stack.temporal.client, records, stack.emulator);
    return { records, outcome };
  },
  report({ records, outcome }, stack, { config: { signals: settings } }) {
    const done = records.filter(completedOk);
    const signalled = records.filter((r) => r.plan.signal);
    const message = between(signalled, at.signalSent, at.appended);
    const close = between(done, at.ended, at.closed);
    const [messageBounds, closeBounds] = [bounded(message, MESSAGE, fmtMs), bounded(close, CLOSE, fmtMs)];
    const { sampler, warnLines, errorLines } = stack.workers[0]!;
    const closes = done.map(at.closed).filter((t): t is number => t !== undefined);
    const to = closes.length ? Math.max(...closes) : outcome.endedAt;
    const cpu = `avg ${fmt(sampler.cpuPercent(outcome.firstStartAt, to), 1)} % · peak 5-s window ${fmt(sampler.peakCpuPercent(outcome.firstStartAt, to), 0)} %`;
    const appends = signalled.map((r) => {
      const own = stack.emulator.requests.filter(
        (q) => q.method === 'POST' && q.path === `/tasks/${r.facts?.executionId}/instructions`,
      );
      return own.length;
    });
    const summary = summarizeRequests(stack.emulator.requests);
    const messageWhy = missReason(signalled, messageSteps(at.signalSent), messageBounds.over);
    const f0 = (v: number) => fmt(v, 0);
    // prettier-ignore
    return {
      rows: [
        completedRow('Tasks completed (workflow COMPLETED, task finalized)', records),
        row('appendInstructions signal → append request', messageBounds.target, spread(message, fmtMs), messageBounds.met && message!.n === signalled.length, messageWhy),
        row('Task end → workflow closed', closeBounds.target, spread(close, fmtMs), closeBounds.met, missReason(done, closeSteps(), closeBounds.over)),
        row('Worker peak RSS', '—', `${fmt(mb(sampler.peakEverKb() ?? NaN), 0)} MB`),
        row('Worker CPU (% of one core)', '—', cpu),
      ],
      setup: [
        `- **Tasks:** ${settings.tasks} concurrent \`browserTask\` workflows, each \`[duration=${fmt(settings.durationMs / 1000, 0)}s]\` after ${QUEUE_MS} ms queued, started in one burst in batches of 50; every ${settings.signalEvery}th (${signalled.length}) is sent \`appendInstructions\` once the emulator shows it running, ${fmtMs(SIGNAL_FROM_MS)} to half its run after its start (uniform), and runs its duration again from the append.`,
        '- **Worker:** one process of `node lib/src/worker.js`, default settings; no polling options in the input.',
        `- **Wall time:** first start → last close ${fmtMs(to - outcome.firstStartAt)}, of which the start burst ${fmtMs((outcome.allStartedAt ?? to) - outcome.firstStartAt)}.${outcome.deadlineHit ? ' **The deadline was hit: unfinished tasks count as not completed.**' : ''}${outcome.workerDied ? ` **${outcome.workerDied}.**` : ''}`,
      ],
      details: [
        ...distributions([
          ['appendInstructions signal → append request (ms)', message, f0],
          ['Task end → workflow closed (ms)', close, f0],
        ]),
        '',
        '### Where the latency goes',
        '',
        ...latencyTable('Signal → append request', signalled, messageSteps(at.signalSent)),
        '',
        ...latencyTable('Task end → workflow closed', done, closeSteps()),
        '',
        `- Appends received per signalled task: ${appends.filter((n) => n === 1).length} of ${signalled.length} exactly once; signals that failed: ${signalled.filter((r) => r.signalError).length}.`,
        `- Creates: ${summary.createsByProject[PROJECT] ?? 0} \`POST /tasks\` for ${records.filter((r) => r.firstRunId).length} workflows; stop commands: ${summary.stops}; non-2xx answers: ${summary.non2xx}.`,
        `- Worker log lines with WARN: ${warnLines}, with ERROR: ${errorLines}.`,
        ...notCompleted(records),
      ],
      raw: { records, outcome, samples: sampler.samples },
    };
  },
});
