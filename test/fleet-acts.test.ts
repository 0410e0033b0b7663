// Slow: a limiter queue left unserved for longer than a create's attempt (a minute), and every act of an operator on the limiter.
//
// The fleet limit under what operators do (docs/fleet.md, its runbook for a limiter that is slow,
// stuck or gone): two real worker processes with BROWSERAI_FLEET_LIMIT=1 on a real dev server,
// against the emulator over HTTP, the limiter served by a worker in this process that the test
// stops and starts. The limit holds (the emulator never sees two sessions at once) when the
// limiter's queue is unserved for longer than an attempt, when the limiter is terminated,
// cancelled, reset or continued as new, when a waiting task is terminated and started again under
// its ID, when a holder is paused, when a task is reset after its release, and when a worker is
// configured with another limit. No session is ever left that no slot holds and no workflow stops.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { fleetLimiterActivities } from '../src/activities/fleet';
import { BrowserAIEmulator, emulatorOptionsFromEnv } from '../src/emulator';
import { BrowserTasks } from '../src/starters/tasks';
import { releaseSlotSignal, setFleetLimitsUpdate } from '../src/contract/fleet-messages';
import { holdsSlot as holds, TestFleet, waitsForSlot as waits } from './helpers/fleet';
import { eventually, startTemporal, storedRuns, workflowBundle, workflowBundleFile } from './helpers/stack';

const LIMIT = 1;
/** The limiter's holder check and a waiter's soonest ask again, shortened from 60 s. */
const CHECK_INTERVAL_MS = 1_000;

let env: TestWorkflowEnvironment;
let emulator: BrowserAIEmulator;
let fleet: TestFleet;
let limiterQueue: string;
let limiterWorker: { worker: Worker; running: Promise<void> } | undefined;

async function serveLimiter(): Promise<void> {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue: limiterQueue,
    workflowBundle: await workflowBundle(),
    activities: fleetLimiterActivities(),
    shutdownGraceTime: 500,
  });
  limiterWorker = { worker, running: worker.run() };
}

async function stopServingLimiter(): Promise<void> {
  if (!limiterWorker) return;
  if (limiterWorker.worker.getState() === 'RUNNING') limiterWorker.worker.shutdown();
  await limiterWorker.running.catch(() => undefined);
  limiterWorker = undefined;
}

before(async () => {
  let bundlePath: string;
  [env, emulator, bundlePath] = await Promise.all([
    // Workflow pause is off by default on the dev server (an experimental feature): one test pauses a holder.
    startTemporal(['--dynamic-config-value', 'frontend.WorkflowPauseEnabled=true']),
    BrowserAIEmulator.start({ queueMs: 100, ...emulatorOptionsFromEnv(process.env) }),
    workflowBundleFile(),
  ]);
  limiterQueue = `fleet-limiter-${randomUUID()}`;
  fleet = new TestFleet(env, emulator, bundlePath, {
    BROWSERAI_FLEET_LIMIT: String(LIMIT),
    BROWSERAI_FLEET_CHECK_INTERVAL_MS: String(CHECK_INTERVAL_MS),
    BROWSERAI_FLEET_TASK_QUEUE: limiterQueue,
    // The limiter runs on the worker this test stops and starts, never on these.
    BROWSERAI_FLEET_SERVE_LIMITER: 'false',
  });
  await fleet.startWorkers(2);
  await serveLimiter();
});
after(async () => {
  await fleet?.killWorkers();
  await stopServingLimiter();
  await emulator?.close();
  await env?.teardown();
});
afterEach(async () => {
  // Every act ends with the limit used and given back: nothing held, nothing waiting, nothing running at BrowserAI.
  await eventually('no slot is held and no session runs', async () => {
    const state = await fleet.limiter();
    return (
      state.held === 0 && state.waiting === 0 && emulator.peakRunning() <= LIMIT && emulator.runningTasks().length === 0
    );
  });
});

const limiter = () => fleet.limiter();
const start = (...args: Parameters<TestFleet['start']>) => fleet.start(...args);
const creates = (name: string) => fleet.creates(name);

async function finalized(...handles: WorkflowHandle[]): Promise<void> {
  const results = await Promise.all(handles.map((h) => h.result()));
  for (const r of results) assert.equal(r.status, 'finalized');
}

test('the limiter queue unserved for longer than a create attempt: the create waits, then is sent once; no unowned session', async () => {
  emulator.resetPeakRunning();
  await stopServingLimiter();
  const handle = await start('unserved', 1);
  // The create's attempt lasts a minute; its acquire gives up before it can no longer send, records
  // that it sent nothing, and the retry asks again. Before, the attempt that timed out still sent
  // the create when the limiter answered, and the retry failed AmbiguousRequest: a session billed,
  // never stopped, held by no slot.
  await eventually(
    'two create attempts gave up waiting for the limiter: over a minute',
    async () => ((await handle.describe()).raw.pendingActivities ?? []).some((a) => (a.attempt ?? 0) >= 3),
    120_000,
  );
  assert.equal(creates('unserved'), 0, 'nothing was sent while the limiter could not answer');
  await serveLimiter();
  await finalized(handle);
  assert.equal(creates('unserved'), 1, 'the create was sent once');
});

for (const act of ['terminated', 'cancelled'] as const) {
  test(`the limiter ${act} while tasks hold and wait: waiters ask again, a new limiter counts the holder first`, async () => {
    emulator.resetPeakRunning();
    const holder = await start(`${act}-holder`, 6);
    await holds(holder);
    const waiters = [await start(`${act}-waiter-1`, 1), await start(`${act}-waiter-2`, 1)];
    for (const w of waiters) await waits(w);
    const handle = env.client.workflow.getHandle(fleet.limiterId);
    const lineage = (await limiter()).lineage;
    if (act === 'terminated') await handle.terminate('an operator ends a stuck limiter');
    else await handle.cancel();
    // The waiters hear nothing and ask again; the first ask starts a new limiter, whose census finds
    // the holder before it grants anything: the limit holds meanwhile.
    const after = await eventually('a new limiter runs', async () => {
      const state = await limiter();
      return state.lineage !== lineage && !state.takingCensus && state;
    });
    assert.ok(after.claimed >= 1, 'the new limiter counted the holder it found');
    await finalized(holder, ...waiters);
    const timeline = emulator
      .listTasks()
      .filter((t) => t.instructions.some((i) => i.action.includes(`${act}-`)))
      .map(
        (t) =>
          `${t.instructions[0]?.action} ${t.createdAt} -> ${t.endedAt ? new Date(t.endedAt).toISOString() : 'open'}`,
      );
    assert.equal(
      emulator.peakRunning(),
      LIMIT,
      `never more than the limit ran at once:\n${timeline.join('\n')}\n${JSON.stringify(after)}`,
    );
    for (const name of [`${act}-holder`, `${act}-waiter-1`, `${act}-waiter-2`]) assert.equal(creates(name), 1);
  });
}

test('the limiter terminated with a line: the new one puts the waiters back in order from its census, before they ask', async () => {
  emulator.resetPeakRunning();
  const handle = env.client.workflow.getHandle(fleet.limiterId);
  const holder = await start('line-holder', 4);
  await holds(holder);
  // From here on the line's waiters ask again after 30 s at the soonest: only a census can bring
  // them back sooner.
  await handle.executeUpdate(setFleetLimitsUpdate, { args: [{ checkIntervalMs: 30_000 }] });
  // One after the other: two tasks started together may ask in either order, and the order checked
  // below is the old line's.
  const waiters = [];
  for (const name of ['line-waiter-1', 'line-waiter-2']) {
    const waiter = await start(name, 1);
    await waits(waiter);
    waiters.push(waiter);
  }
  const lineage = (await limiter()).lineage;
  await handle.terminate('an operator ends a stuck limiter');
  // A task started now starts a new limiter (with the workers' 1-s check), whose census finds the
  // holder and both waiters.
  const newcomer = await start('line-newcomer', 1);
  const after = await eventually('a new limiter runs', async () => {
    const state = await limiter();
    return state.lineage !== lineage && !state.takingCensus && state;
  });
  assert.equal(after.rejoined, 2, `both waiters are back in line without asking: ${JSON.stringify(after)}`);
  assert.ok(after.claimed >= 1, 'and the holder is counted');
  const begun = Date.now();
  await finalized(holder, ...waiters, newcomer);
  assert.ok(Date.now() - begun < 30_000, 'the waiters ran before they would have asked again');
  const createdAt = (name: string) =>
    Date.parse(
      emulator.listTasks().find((t) => t.instructions.some((i) => i.action.includes(`Crawl ${name} `)))!.createdAt,
    );
  assert.ok(createdAt('line-waiter-1') < createdAt('line-waiter-2'), 'the waiters kept their order');
  assert.equal(emulator.peakRunning(), LIMIT, 'never more than the limit ran at once');
});

test('the limiter reset to its first workflow task: the limit holds', async () => {
  emulator.resetPeakRunning();
  const holder = await start('reset-holder', 5);
  await holds(holder);
  const waiters = [await start('reset-waiter-1', 1), await start('reset-waiter-2', 1)];
  for (const w of waiters) await waits(w);
  const { runId } = await env.client.workflow.getHandle(fleet.limiterId).describe();
  const [run] = (await storedRuns(env.client, fleet.limiterId)).filter((r) => r.runId === runId);
  const firstTask = run!.history.events!.find((e) => e.workflowTaskCompletedEventAttributes)!;
  await env.client.workflowService.resetWorkflowExecution({
    namespace: env.namespace ?? 'default',
    workflowExecution: { workflowId: fleet.limiterId, runId },
    reason: 'an operator resets the limiter',
    workflowTaskFinishEventId: firstTask.eventId,
    requestId: randomUUID(),
  });
  await finalized(holder, ...waiters);
  assert.equal(emulator.peakRunning(), LIMIT, 'never more than the limit ran at once');
});

test('the limiter continues as new while tasks hold and wait: the limit holds and the line is kept', async () => {
  emulator.resetPeakRunning();
  const holder = await start('can-holder', 4);
  await holds(holder);
  const waiters = [await start('can-waiter-1', 1), await start('can-waiter-2', 1)];
  for (const w of waiters) await waits(w);
  const handle = env.client.workflow.getHandle(fleet.limiterId);
  const { runId } = await handle.describe();
  // Releases of nobody cost the limiter an event each: a burst of them brings its continue-as-new
  // (at 1,000 events), sent 20 at a time. Then the burst ends, as bursts do: a limiter under a
  // signal stream with no gap cannot complete a continue-as-new (the server refuses it while
  // new events arrive).
  for (let sent = 0; sent < 1_100; sent += 20) {
    await Promise.all(
      Array.from({ length: 20 }, () => handle.signal(releaseSlotSignal, { holderId: `nobody-${randomUUID()}` })),
    );
  }
  const run = env.client.workflow.getHandle(fleet.limiterId, runId);
  await eventually(
    'the limiter continues as new',
    async () => (await run.describe()).status.name === 'CONTINUED_AS_NEW',
    60_000,
  );
  await finalized(holder, ...waiters);
  assert.equal(emulator.peakRunning(), LIMIT, 'never more than the limit ran at once');
});

test('a waiting task terminated and started again under its ID never takes the old run grant', async () => {
  emulator.resetPeakRunning();
  const holder = await start('reuse-holder', 3);
  await holds(holder);
  const workflowId = `acts-reused-${randomUUID()}`;
  const first = await start('reused-first', 1, {}, workflowId);
  await waits(first);
  // Next in line after the first: the slot the limiter frees when it finds the first gone is its.
  const next = await start('reused-next', 2);
  await waits(next);
  await first.terminate('batch retry-failed starts it again');
  // As `batch retry-failed` does: the same workflow ID, a new workflow.
  const again = await env.client.workflow.start('browserTask', {
    args: [fleet.input('reused-again', 1)],
    taskQueue: fleet.taskQueue,
    workflowId,
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  });
  await waits(again);
  // The first's turn comes with the holder's end: its grant must not start the new workflow, which
  // would then run beside the next one once the limiter finds the first gone.
  await finalized(holder, next, again);
  assert.equal(emulator.peakRunning(), LIMIT, 'never more than the limit ran at once');
  assert.equal(creates('reused-first'), 0);
  assert.equal(creates('reused-again'), 1);
});

test('a paused holder keeps its slot; unpaused it ends and the next runs', async () => {
  emulator.resetPeakRunning();
  const holder = await start('paused-holder', 2);
  await holds(holder);
  const waiter = await start('paused-waiter', 1);
  await waits(waiter);
  const { runId } = await holder.describe();
  const execution = { namespace: env.namespace ?? 'default', workflowId: holder.workflowId, runId };
  await env.client.workflowService.pauseWorkflowExecution({
    ...execution,
    reason: 'an operator looks',
    requestId: randomUUID(),
  });
  await eventually('the holder is paused', async () => (await holder.describe()).status.name === 'PAUSED');
  // Several holder checks go by: a paused workflow still runs, so its slot stays held.
  await sleep(4 * CHECK_INTERVAL_MS);
  const state = await limiter();
  assert.deepEqual(
    state.holders.map((h) => h.workflowId),
    [holder.workflowId],
  );
  assert.equal(state.reclaimed, (await limiter()).reclaimed);
  assert.equal(creates('paused-waiter'), 0, 'the waiter still waits');
  await env.client.workflowService.unpauseWorkflowExecution({ ...execution, reason: 'done', requestId: randomUUID() });
  await finalized(holder, waiter);
  assert.equal(emulator.peakRunning(), LIMIT);
});

test('a task reset after its release acquires again before it creates again', async () => {
  emulator.resetPeakRunning();
  const first = await start('reset-task', 1);
  await finalized(first);
  const holder = await start('reset-task-holder', 4);
  await holds(holder);
  const { runId } = await first.describe();
  const [run] = (await storedRuns(env.client, first.workflowId)).filter((r) => r.runId === runId);
  const firstTask = run!.history.events!.find((e) => e.workflowTaskCompletedEventAttributes)!;
  await env.client.workflowService.resetWorkflowExecution({
    namespace: env.namespace ?? 'default',
    workflowExecution: { workflowId: first.workflowId, runId },
    reason: 'an operator runs it again',
    workflowTaskFinishEventId: firstTask.eventId,
    requestId: randomUUID(),
  });
  const again = env.client.workflow.getHandle(first.workflowId);
  await waits(again);
  await finalized(holder, again);
  assert.equal(emulator.peakRunning(), LIMIT, 'the reset task waited for the holder');
  assert.equal(creates('reset-task'), 2, 'created once per run');
});

test('a worker configured with another limit is served under the limiter one and warns; the update changes it', async () => {
  // The limiter runs with the limit of the workers that started it (1)...
  await finalized(await start('other-limit-first', 1));
  emulator.resetPeakRunning();
  // ...and a worker of another task queue, sharing the account's limiter, is configured with 3.
  const otherQueue = `${fleet.taskQueue}-other`;
  const other = fleet.startWorker({ BROWSERAI_FLEET_LIMIT: '3' }, otherQueue);
  assert.ok(await other.ready);
  const otherTasks = new BrowserTasks(env.client, otherQueue);
  try {
    const handles = await Promise.all(
      Array.from({ length: 4 }, (_, i) => otherTasks.start(fleet.input(`other-limit-${i}`, 1))),
    );
    await eventually('the worker configured otherwise warns', () =>
      other.outputTail.some((line) => /other fleet limits than the limiter enforces/.test(line)),
    );
    await finalized(...handles);
    assert.equal(emulator.peakRunning(), LIMIT, 'the limit in force held, whichever worker created');
    const state = await limiter();
    assert.equal(state.limits.maxRunning, LIMIT);
    // The update is the one way to change the limit; every worker then warns until configured alike.
    const handle = env.client.workflow.getHandle(fleet.limiterId);
    const before = await handle.executeUpdate(setFleetLimitsUpdate, { args: [{ maxRunning: 2 }] });
    assert.equal(before.maxRunning, LIMIT);
    assert.equal((await limiter()).limits.maxRunning, 2);
    await assert.rejects(handle.executeUpdate(setFleetLimitsUpdate, { args: [{ maxRunning: 0 }] }), (err: Error) =>
      /maxRunning must be an integer/.test(String(err.cause)),
    );
    await handle.executeUpdate(setFleetLimitsUpdate, { args: [{ maxRunning: LIMIT }] });
  } finally {
    await other.signal('SIGTERM', 5_000);
  }
});
