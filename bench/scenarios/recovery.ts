// Crash recovery (issue 17: both within a minute at the defaults): a SIGKILLed worker, timed until
// every poll it held runs again elsewhere; a paused dev server, timed from its return to each
// close. How: docs/benchmarks-method.md#crash-recovery.
import { hostname } from 'node:os';
import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { sleep, within } from '../../dev/async';
import { Random } from '../../dev/random';
import { BrowserTasks } from '../../src/starters/tasks';
import { DEFAULTS, type BrowserTaskInput } from '../../src/contract/input';
import { fmt, fmtMs, log } from '../format';
import { taskInput, uniform } from '../plan';
import { distributions, row } from '../report/markdown';
import { scenario } from '../scenario';
import type { BenchStack } from '../stack';
import { between, stats } from '../statistics';
import type { WorkerProcess } from '../worker-process';

const TASK_QUEUE = 'bench-recovery';
/** Long enough to outlive every kill; cancelled at the end. */
const HELD_TASK_MS = 60 * 60_000;
const HELD_TASKS = 8;
const OUTAGE_TASKS = 6;
const OUTAGE_LEAD_MS = 30_000;
const GIVE_UP_MS = 11 * 60_000;
/** Issue 36: a SIGKILLed worker's polls run elsewhere within 30 s (the median over kills). */
const KILL_TARGET_MS = 30_000;
/** The server back after an outage → each workflow that ended meanwhile closed. */
const OUTAGE_TARGET_MS = 60_000;

type Planned = { workflowId: string; input: BrowserTaskInput };

export const measureRecovery = scenario({
  heading: '## Crash recovery: a killed worker, a Temporal outage',
  plan(stack, { config: { recovery: settings, seed } }) {
    const rng = new Random(seed * 104_729 + 3);
    const input = (text: string, durationMs: number) => taskInput(stack, { text, durationMs });
    const held = Array.from({ length: HELD_TASKS }, (_, i): Planned => {
      const text = `Recovery job ${i}: watch https://r${i}.example.com for an hour`;
      return { workflowId: `bench-recovery-held-${i}`, input: input(text, HELD_TASK_MS) };
    });
    // Tasks that end between 10 s into the outage and 10 s before its end.
    const { outageMs } = settings;
    const outage = Array.from({ length: outageMs > 0 ? OUTAGE_TASKS : 0 }, (_, i): Planned => {
      const endsAt = uniform(rng, Math.min(10_000, outageMs / 4), Math.max(outageMs - 10_000, outageMs / 2));
      const workflowId = `bench-recovery-outage-${i}`;
      return { workflowId, input: input(`Outage job ${workflowId}: open o.example.com`, OUTAGE_LEAD_MS + endsAt) };
    });
    return { held, outage, rng };
  },
  async measure(stack, { held, outage, rng }, { config: { recovery: settings } }) {
    const startWorker = () => stack.startWorker('default', TASK_QUEUE);
    // The SDK's default worker identity.
    const identityOf = (worker: WorkerProcess) => `${worker.process.child.pid}@${hostname()}`;
    const workers = [await startWorker(), await startWorker()];
    const client = stack.temporal.client;
    const tasks = new BrowserTasks(client, TASK_QUEUE);
    const heldIds = held.map((t) => t.workflowId);
    for (const task of held) await tasks.start(task.input, { workflowId: task.workflowId });
    await waitFor(async () => (await pollsOf(client, heldIds)).size === held.length, 120_000);
    // Per poll the killed worker held: kill → its next attempt started on another worker (NaN: never).
    const trials: { polls: number; resumedAfterMs: number[]; timeoutLeftMs: number[]; attempts: number[] }[] = [];
    for (let k = 0; k < settings.kills; k++) {
      // A random moment in the heartbeat cycle: right after a heartbeat is the worst case, right before the best.
      await sleep(uniform(rng, 5_000, 50_000));
      const polls = await pollsOf(client, heldIds);
      const victim = workers.find((w) => [...polls.values()].some((p) => p.identity === identityOf(w)));
      if (!victim) throw new Error('no worker holds a poll');
      const lost = new Map([...polls].filter(([, p]) => p.identity === identityOf(victim)));
      const killedAt = Date.now();
      victim.kill();
      log(`recovery: kill ${k + 1}/${settings.kills}: SIGKILL to a worker holding ${lost.size} polls`);
      const resumedAt = new Map<string, number>();
      await waitFor(async () => {
        for (const [id, poll] of await pollsOf(client, [...lost.keys()]))
          if (poll.startedAtMs > killedAt && poll.identity !== identityOf(victim))
            resumedAt.set(id, resumedAt.get(id) ?? poll.startedAtMs);
        return resumedAt.size === lost.size;
      }, GIVE_UP_MS);
      const resumedAfterMs = [...lost.keys()].map((id) => (resumedAt.get(id) ?? NaN) - killedAt);
      // The server gives a poll up when its heartbeat timeout runs out after the last heartbeat it had.
      const timeoutLeftMs = [...lost.values()].map((p) => p.lastHeartbeatMs + DEFAULTS.heartbeatTimeoutMs - killedAt);
      trials.push({
        polls: lost.size,
        resumedAfterMs,
        timeoutLeftMs,
        attempts: [...lost.values()].map((p) => p.attempt),
      });
      log(`recovery: kill ${k + 1}: polls running again after ${resumedAfterMs.map((ms) => fmtMs(ms)).join(', ')}`);
      workers.splice(workers.indexOf(victim), 1);
      workers.push(await startWorker());
    }
    const outageResult = outage.length ? await measureOutage(stack, tasks, outage, settings.outageMs) : undefined;
    await Promise.allSettled(heldIds.map((id) => client.workflow.getHandle(id).cancel()));
    return { trials, outage: outageResult };
  },
  report({ trials, outage }, _stack, { config: { recovery: settings } }) {
    // A kill is recovered once the last of its polls runs again.
    const perKill = trials.map((t) => Math.max(...t.resumedAfterMs));
    const killStats = stats(perKill);
    const afterOutage = outage?.tasks.map((t) => (t.closedAt ?? NaN) - outage.resumedAt) ?? [];
    const [perKillText, afterText] = [perKill, afterOutage].map((values) => values.map((v) => fmtMs(v)).join(', '));
    const killed = killStats && `p50 ${fmtMs(killStats.p50)} · max ${fmtMs(killStats.max)} (${perKillText})`;
    const back = afterOutage.length > 0 && `max ${fmtMs(Math.max(...afterOutage))} (${afterText})`;
    const [killTarget, outageTarget] = [KILL_TARGET_MS, OUTAGE_TARGET_MS].map((ms) => `≤ ${fmtMs(ms)}`);
    const f0 = (v: number) => fmt(v, 0);
    const [timeoutLeft, afterTimeout] = [
      stats(trials.flatMap((t) => t.timeoutLeftMs)),
      stats(trials.flatMap((t) => t.resumedAfterMs.map((ms, i) => ms - t.timeoutLeftMs[i]!))),
    ];
    const killWhy =
      timeoutLeft &&
      afterTimeout &&
      `a poll is given up only when its heartbeat timeout (${fmtMs(DEFAULTS.heartbeatTimeoutMs)}) runs out after the last heartbeat the server had: at the kill that was p50 ${fmtMs(timeoutLeft.p50)} away (a kill lands anywhere in the heartbeat cycle), and the retry started p50 ${fmtMs(afterTimeout.p50)} after it ran out (the poll's retry backoff: the polls killed were on attempt p50 ${fmt(stats(trials.flatMap((t) => t.attempts))?.p50, 0)}, and each kill adds one). A shorter timeout is sooner at the cost of more heartbeats, each a billed action: docs/design/polling.md.`;
    return {
      // prettier-ignore
      rows: [
        row(`SIGKILL of one of two workers → all its polls running on another worker, median of ${trials.length} kills`, killTarget, killed || 'n/a', !!killStats && perKill.every(Number.isFinite) && killStats.p50 <= KILL_TARGET_MS, killWhy || undefined),
        ...(outage ? [row(`Temporal outage of ${fmtMs(outage.outageMs)} while ${outage.tasks.length} tasks end: server back → workflow closed, max`, outageTarget, back || 'n/a', !!back && afterOutage.every((v) => v <= OUTAGE_TARGET_MS))] : []),
      ],
      setup: [
        `- **Setup:** two worker processes at their defaults (\`polling.heartbeatTimeoutMs\` ${fmtMs(DEFAULTS.heartbeatTimeoutMs)}) on one task queue, ${HELD_TASKS} tasks of an hour being polled; ${settings.kills} kills${outage ? `, then ${outage.tasks.length} tasks ending inside a ${fmtMs(outage.outageMs)} pause of the dev server` : ''}: [how](docs/benchmarks-method.md#crash-recovery).`,
      ],
      // prettier-ignore
      details: distributions([
        ['Kill → a poll it held runs elsewhere (ms), every poll', stats(trials.flatMap((t) => t.resumedAfterMs)), f0],
        ['… kill → its heartbeat timeout ran out (ms)', timeoutLeft, f0],
        ['… timeout ran out → running elsewhere (ms)', afterTimeout, f0],
        ['Polls held by the killed worker', stats(trials.map((t) => t.polls))],
        ...(outage ? [['Server back → workflow closed (ms)', stats(afterOutage), f0], ['Task end → workflow closed, across the outage (ms)', between(outage.tasks, (t) => t.endedAt, (t) => t.closedAt), f0]] as const : []),
      ]),
      raw: { trials, outage },
    };
  },
});

/** Starts the tasks, pauses the server while they end, and times each close from the server's return. */
async function measureOutage(stack: BenchStack, tasks: BrowserTasks, planned: Planned[], outageMs: number) {
  for (const task of planned) await tasks.start(task.input, { workflowId: task.workflowId });
  await sleep(OUTAGE_LEAD_MS - 2_000);
  const resumedAt = await stack.pauseTemporal(outageMs, 'recovery');
  // The close time is the server's own: the result only says when to read it.
  const endOf = async (workflowId: string) => {
    const handle = stack.temporal.client.workflow.getHandle(workflowId);
    const closed = handle.result().catch(() => undefined);
    const result = await within(GIVE_UP_MS, closed);
    const closedAt = (await handle.describe().catch(() => undefined))?.closeTime?.getTime();
    return { workflowId, endedAt: result && stack.emulator.task(result.executionId)?.endedAt, closedAt };
  };
  return { outageMs, resumedAt, tasks: await Promise.all(planned.map((t) => endOf(t.workflowId))) };
}

/** The running poll of each workflow (its worker and when its current attempt started). */
async function pollsOf(client: Client, workflowIds: string[]) {
  const found = new Map<string, { identity: string; startedAtMs: number; lastHeartbeatMs: number; attempt: number }>();
  for (const workflowId of workflowIds) {
    const { raw } = await client.workflow.getHandle(workflowId).describe();
    const poll = raw.pendingActivities?.find((a) => a.activityType?.name === 'browserAIPollTask');
    // STARTED is 2 in the API's enum (SCHEDULED 1, CANCEL_REQUESTED 3).
    if (!poll || poll.state !== 2 || !poll.lastWorkerIdentity || !poll.lastStartedTime) continue;
    const startedAtMs = tsToMs(poll.lastStartedTime);
    // The server keeps the last heartbeat across attempts; a new attempt's timeout runs from its start.
    const lastHeartbeatMs = Math.max(startedAtMs, poll.lastHeartbeatTime ? tsToMs(poll.lastHeartbeatTime) : 0);
    found.set(workflowId, {
      identity: poll.lastWorkerIdentity,
      startedAtMs,
      lastHeartbeatMs,
      attempt: poll.attempt ?? 1,
    });
  }
  return found;
}

/** Checks every 250 ms until `check` holds or `timeoutMs` passes; a failed check counts as not yet. */
async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !(await check().catch(() => false))) await sleep(250);
}
