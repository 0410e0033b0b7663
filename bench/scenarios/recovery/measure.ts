// Crash recovery: two worker processes share the task queue while long tasks are polled. One of
// them is SIGKILLed at a random moment (as the OOM killer or a lost machine would), and the bench
// times, from the kill, until every poll it held runs again on another worker (a new attempt
// started, as the server records it); a new worker then takes the dead one's place. Then the
// Temporal dev server is paused (SIGSTOP, as an unreachable server) while tasks end, so the polls
// that see those ends cannot report them; the bench times each workflow's close from the moment
// the server is back.
import os from 'node:os';
import { hostname } from 'node:os';
import type { Client } from '@temporalio/client';
import { BrowserTasks } from '../../../src/starters/tasks';
import { Random } from '../../../dev/random';
import { sleep } from '../../../dev/async';
import { emulatorEndTime } from '../../emulator/end-time';
import { log } from '../../format';
import { taskInput, uniform } from '../../plan';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import { pauseTemporal } from '../../temporal-outage';
import { withStack, type BenchStack } from '../../stack';
import type { WorkerProcess } from '../../worker-process';
import { renderRecovery, type KillTrial, type OutageTask } from './report';

const TASK_QUEUE = 'bench-recovery';
const POLL_ACTIVITY = 'browserAIPollTask';
/** Long enough to outlive every kill; cancelled at the end. */
const HELD_TASK_MS = 60 * 60_000;
const HELD_TASKS = 8;
const OUTAGE_TASKS = 6;
const WATCH_MS = 250;
const GIVE_UP_MS = 11 * 60_000;

export async function measureRecovery(context: ScenarioContext): Promise<ScenarioReport> {
  const settings = context.config.recovery;
  const rng = new Random(context.config.seed * 104_729 + 3);
  const loadBefore = os.loadavg()[0];
  return withStack({ queueMs: QUEUE_MS }, async (stack) => {
    const workers = [await stack.startWorker('default', TASK_QUEUE), await stack.startWorker('default', TASK_QUEUE)];
    const client = stack.temporal.client;
    const tasks = new BrowserTasks(client, TASK_QUEUE);
    const held: string[] = [];
    for (let i = 0; i < HELD_TASKS; i++) {
      const workflowId = `bench-recovery-held-${i}`;
      const input = taskInput(stack, {
        text: `Recovery job ${i}: watch https://r${i}.example.com for an hour`,
        durationMs: HELD_TASK_MS,
      });
      await tasks.start(input, { workflowId });
      held.push(workflowId);
    }
    await waitFor(async () => (await pollsOf(client, held)).size === held.length, 120_000);

    const trials: KillTrial[] = [];
    for (let k = 0; k < settings.kills; k++) {
      // A random moment in the heartbeat cycle: right after a heartbeat is the worst case, right before the best.
      await sleep(uniform(rng, 5_000, 50_000));
      const polls = await pollsOf(client, held);
      const victim = workers.find((w) => [...polls.values()].some((p) => p.identity === identityOf(w)));
      if (!victim) throw new Error('no worker holds a poll');
      const lost = [...polls].filter(([, p]) => p.identity === identityOf(victim));
      const killedAt = Date.now();
      victim.kill();
      log(`recovery: kill ${k + 1}/${settings.kills}: SIGKILL to a worker holding ${lost.length} polls`);
      const resumedAfterMs: number[] = [];
      for (const [workflowId] of lost) {
        const at = await waitFor(async () => {
          const poll = (await pollsOf(client, [workflowId])).get(workflowId);
          return poll && poll.startedAtMs > killedAt && poll.identity !== identityOf(victim) ? poll.startedAtMs : 0;
        }, GIVE_UP_MS);
        resumedAfterMs.push(at ? at - killedAt : NaN);
      }
      trials.push({ polls: lost.length, resumedAfterMs });
      log(
        `recovery: kill ${k + 1}: polls running again after ${resumedAfterMs.map((ms) => `${Math.round(ms)} ms`).join(', ')}`,
      );
      workers.splice(workers.indexOf(victim), 1);
      workers.push(await stack.startWorker('default', TASK_QUEUE));
    }

    const outage = settings.outageMs > 0 ? await measureOutage(stack, tasks, settings.outageMs, rng) : undefined;
    await Promise.all(
      held.map((id) =>
        client.workflow
          .getHandle(id)
          .cancel()
          .catch(() => undefined),
      ),
    );
    return renderRecovery({
      context,
      settings,
      stack,
      trials,
      outage,
      load: { before: loadBefore, after: os.loadavg()[0] },
    });
  });
}

/**
 * Tasks that end while the server is paused: started so that they end between 10 s into the
 * outage and 10 s before its end; their polls see the end and cannot report it.
 */
async function measureOutage(
  stack: BenchStack,
  tasks: BrowserTasks,
  outageMs: number,
  rng: Random,
): Promise<{ outageMs: number; resumedAt: number; tasks: OutageTask[] }> {
  const client = stack.temporal.client;
  const leadMs = 30_000;
  const planned = Array.from({ length: OUTAGE_TASKS }, (_, i) => ({
    workflowId: `bench-recovery-outage-${i}`,
    durationMs: Math.round(
      leadMs + uniform(rng, Math.min(10_000, outageMs / 4), Math.max(outageMs - 10_000, outageMs / 2)),
    ),
  }));
  for (const task of planned)
    await tasks.start(
      taskInput(stack, {
        text: `Outage job ${task.workflowId}: open https://o.example.com`,
        durationMs: task.durationMs,
      }),
      { workflowId: task.workflowId },
    );
  await sleep(leadMs - 2_000);
  const resumedAt = await pauseTemporal(outageMs, 'recovery');
  const closed = new Map<string, number>();
  await waitFor(async () => {
    for (const task of planned) {
      if (closed.has(task.workflowId)) continue;
      const description = await client.workflow
        .getHandle(task.workflowId)
        .describe()
        .catch(() => undefined);
      if (description?.closeTime) closed.set(task.workflowId, description.closeTime.getTime());
    }
    return closed.size === planned.length;
  }, GIVE_UP_MS);
  return {
    outageMs,
    resumedAt,
    tasks: await Promise.all(
      planned.map(async (task) => {
        const result = await client.workflow
          .getHandle(task.workflowId)
          .result()
          .catch(() => undefined);
        return {
          workflowId: task.workflowId,
          endedAt: result ? emulatorEndTime(stack.emulator, result.executionId) : undefined,
          closedAt: closed.get(task.workflowId),
        };
      }),
    ),
  };
}

interface HeldPoll {
  identity: string;
  startedAtMs: number;
}

/** The running poll of each workflow (its worker and when its current attempt started). */
async function pollsOf(client: Client, workflowIds: string[]): Promise<Map<string, HeldPoll>> {
  const found = new Map<string, HeldPoll>();
  for (const workflowId of workflowIds) {
    const { raw } = await client.workflow.getHandle(workflowId).describe();
    const poll = raw.pendingActivities?.find((a) => a.activityType?.name === POLL_ACTIVITY);
    // STARTED is 2 in the API's enum (SCHEDULED 1, CANCEL_REQUESTED 3).
    if (!poll || poll.state !== 2 || !poll.lastWorkerIdentity || !poll.lastStartedTime) continue;
    const startedAtMs =
      Number(poll.lastStartedTime.seconds) * 1000 + Math.floor((poll.lastStartedTime.nanos ?? 0) / 1e6);
    found.set(workflowId, { identity: poll.lastWorkerIdentity, startedAtMs });
  }
  return found;
}

/** The SDK's default worker identity. */
function identityOf(worker: WorkerProcess): string {
  return `${worker.process.child.pid}@${hostname()}`;
}

/** Polls `check` until it returns something truthy (returned) or `timeoutMs` passes (0). */
async function waitFor<T>(check: () => Promise<T>, timeoutMs: number): Promise<T | 0> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    await sleep(WATCH_MS);
  }
  return 0;
}
