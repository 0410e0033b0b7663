// The fleet-wide limit on running BrowserAI tasks (docs/fleet.md), end to end: two real worker
// processes with BROWSERAI_FLEET_LIMIT=2 share one limiter workflow on a real dev server, against
// the emulator over HTTP. The limit holds across both, through SIGKILLs; a task cancelled while it
// waits sends nothing; a terminated holder's slot comes back within the check interval; slots go
// by priority, then round the fairness keys; a create the account refuses (429) waits with its
// slot instead of failing. Every test ends with no slot held.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { FleetLimit } from '../src/activities/fleet';
import { BrowserAIEmulator, emulatorOptionsFromEnv } from '../src/emulator';
import { limiterStateQuery, releaseSlotSignal } from '../src/contract/fleet-messages';
import { stateQuery } from '../src/contract/messages';
import { TestFleet, waitsForSlot } from './helpers/fleet';
import { eventually, startTemporal, workflowBundleFile } from './helpers/stack';

const LIMIT = 2;
/** The limiter's check of its holders, shortened from 60 s so a terminated holder is found fast. */
const CHECK_INTERVAL_MS = 1_000;
const STOP = /^\/tasks\/[^/]+\/command$/;
/** An acquire the test never cancels. */
const NEVER = new AbortController().signal;

let env: TestWorkflowEnvironment;
let emulator: BrowserAIEmulator;
let fleet: TestFleet;

before(async () => {
  let bundlePath: string;
  [env, emulator, bundlePath] = await Promise.all([
    startTemporal(),
    BrowserAIEmulator.start({ queueMs: 100, ...emulatorOptionsFromEnv(process.env) }),
    workflowBundleFile(),
  ]);
  fleet = new TestFleet(env, emulator, bundlePath, {
    BROWSERAI_FLEET_LIMIT: String(LIMIT),
    BROWSERAI_FLEET_CHECK_INTERVAL_MS: String(CHECK_INTERVAL_MS),
  });
  await fleet.startWorkers(2);
});
after(async () => {
  await fleet?.killWorkers();
  await emulator?.close();
  await env?.teardown();
});

const limiter = () => fleet.limiter();
const start = (name: string, seconds: number, overrides?: Parameters<TestFleet['start']>[2]) =>
  fleet.start(name, seconds, overrides);
const creates = (name: string) => fleet.creates(name);
const noSlotHeld = () => fleet.noSlotHeld();
const waitingForSlot = (handle: WorkflowHandle) => waitsForSlot(handle);

test('the limit holds across two worker processes: never more than 2 tasks run at once', async () => {
  emulator.resetPeakRunning();
  const handles = await Promise.all(Array.from({ length: 6 }, (_, i) => start(`across-${i}`, 1)));
  const results = await Promise.all(handles.map((h) => h.result()));
  assert.ok(results.every((r) => r.status === 'finalized'));
  assert.equal(emulator.peakRunning(), LIMIT, 'the emulator saw at most the limit running, and the limit used');
  for (let i = 0; i < 6; i++) assert.equal(creates(`across-${i}`), 1);
  const state = await limiter();
  assert.ok(state.granted >= 6);
  await noSlotHeld();
});

test('BrowserAI refusing a create past its own limit (429) is waited out with the slot kept, never AmbiguousRequest', async () => {
  emulator.setMaxRunningTasks(1);
  try {
    const first = await start('account-a', 2);
    await eventually('the first task runs', async () => creates('account-a') === 1);
    const second = await start('account-b', 1);
    const [a, b] = await Promise.all([first.result(), second.result()]);
    assert.equal(a.status, 'finalized');
    assert.equal(b.status, 'finalized');
    const refused = emulator.requests.filter(
      (r) => r.status === 429 && JSON.stringify(r.body).includes('Crawl account-b '),
    ).length;
    assert.ok(refused >= 1, 'the account refused the second create at least once');
  } finally {
    emulator.setMaxRunningTasks(0);
  }
  await noSlotHeld();
});

test('a task waiting for a slot shows it, and cancelled then sends nothing (no create, no stop)', async () => {
  const blockers = await Promise.all([start('block-a', 30), start('block-b', 30)]);
  await eventually('both blockers hold slots', async () => (await limiter()).held === LIMIT);
  const stopsBefore = emulator.count('POST', STOP);
  const waiter = await start('waiter', 1);
  await waitingForSlot(waiter);
  const state = await waiter.query(stateQuery);
  assert.equal(state.status, 'waiting_for_slot');
  assert.ok(state.fleetSlot && !state.fleetSlot.held && state.fleetSlot.positionWhenQueued === 1);
  const described = await eventually('the waiting status is published', async () => {
    const d = await waiter.describe();
    return d.searchAttributes.BrowserAIStatus?.[0] === 'waiting_for_slot' && d;
  });
  assert.ok(described);
  const metadata = await waiter.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  assert.match(metadata.currentDetails ?? '', /Waiting for a fleet slot since .*number 1 in line/);
  await waiter.cancel();
  await assert.rejects(waiter.result(), (err: unknown) => {
    assert.ok(err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure);
    return true;
  });
  assert.equal(creates('waiter'), 0, 'no create for the cancelled waiter');
  assert.equal(emulator.count('POST', STOP), stopsBefore, 'no stop for the cancelled waiter');
  assert.equal((await limiter()).waiting, 0, 'the waiter left the line');
  await Promise.all(blockers.map((b) => b.cancel()));
  await noSlotHeld();
});

test('the wait counts toward none of the task time limits', async () => {
  const blockers = await Promise.all([start('slow-a', 4), start('slow-b', 4)]);
  await eventually('both blockers hold slots', async () => (await limiter()).held === LIMIT);
  // Waits about 4 s, runs 1 s: a 3-s timeout that counted the wait would fail it.
  const patient = await start('patient', 1, { timeoutMs: 3_000 });
  await waitingForSlot(patient);
  assert.equal((await patient.result()).status, 'finalized');
  await Promise.all(blockers.map((b) => b.result()));
  await noSlotHeld();
});

test('slots go by priority first, then round the fairness keys', async () => {
  const blockers = await Promise.all([start('prio-block-a', 3), start('prio-block-b', 3)]);
  await eventually('both blockers hold slots', async () => (await limiter()).held === LIMIT);
  const batch: WorkflowHandle[] = [];
  for (let i = 1; i <= 4; i++) {
    batch.push(await start(`tenant-a-${i}`, 1, { fairnessKey: 'tenant-a' }));
    await waitingForSlot(batch.at(-1)!);
  }
  const single = await start('tenant-b-1', 1, { fairnessKey: 'tenant-b' });
  await waitingForSlot(single);
  const urgent = await start('urgent', 1, { fairnessKey: 'tenant-c', priority: 1 });
  await waitingForSlot(urgent);
  const urgentState = await urgent.query(stateQuery);
  assert.ok(urgentState.fleetSlot && !urgentState.fleetSlot.held);
  assert.equal(urgentState.fleetSlot.positionWhenQueued, 1, 'priority 1 goes to the head of the line');
  await Promise.all([...blockers, ...batch, single, urgent].map((h) => h.result()));
  const order = (await limiter()).recentGrants.slice(-6).map((id) => id.replace(/^fleet-(.*)-[0-9a-f-]{36}$/, '$1'));
  assert.deepEqual(order, ['urgent', 'tenant-a-1', 'tenant-b-1', 'tenant-a-2', 'tenant-a-3', 'tenant-a-4']);
  await noSlotHeld();
});

test('SIGKILL of every worker while tasks hold and wait for slots: the slots stay held, work resumes, none leaks', async () => {
  emulator.resetPeakRunning();
  const polling = { initialIntervalMs: 250, maxIntervalMs: 1_000, heartbeatTimeoutMs: 2_000 };
  const handles = await Promise.all([
    start('kill-1', 3, { polling }),
    start('kill-2', 3, { polling }),
    start('kill-3', 1, { polling }),
  ]);
  // Killed once both creates were answered: a create cut mid-request is AmbiguousRequest, with or without a limit.
  await eventually('two run and one waits', async () => {
    const states = await Promise.all(handles.map((h) => h.query(stateQuery)));
    return (
      states.filter((s) => s.executionId !== null).length === LIMIT && states.some((s) => s.fleetSlot?.held === false)
    );
  });
  await fleet.killWorkers();
  await fleet.startWorkers(1);
  const state = await limiter();
  assert.equal(state.held + state.waiting, 3, 'the holders and the waiter kept their places');
  const results = await Promise.all(handles.map((h) => h.result()));
  assert.ok(results.every((r) => r.status === 'finalized'));
  for (const name of ['kill-1', 'kill-2', 'kill-3']) assert.equal(creates(name), 1, `${name} created once`);
  assert.ok(emulator.peakRunning() <= LIMIT);
  await noSlotHeld();
});

test('a terminated holder frees its slot within the check interval, also when it came to an idle limiter', async () => {
  // The limiter is idle first (it held slots, all were released): an acquire granted at once then
  // tells no one, and a limiter that timed no check for it kept a terminated holder's slot for good.
  await (await start('before-idle', 1)).result();
  await noSlotHeld();
  await sleep(3 * CHECK_INTERVAL_MS); // past the last check and its timer: nothing left to wake the limiter
  const holder = await start('terminated', 30);
  await eventually('it holds a slot', async () => (await holder.query(stateQuery)).fleetSlot?.held === true);
  const before = await limiter();
  await holder.terminate('an operator ends it');
  const freedAt = Date.now();
  // Bounded, not timed: the check runs every CHECK_INTERVAL_MS, and on a busy 2-core machine its
  // activity and the limiter's workflow task can wait seconds in their queues.
  await eventually('its slot is reclaimed', async () => (await limiter()).held === 0, 30_000);
  const elapsed = Date.now() - freedAt;
  assert.ok(elapsed < CHECK_INTERVAL_MS + 29_000, `reclaimed after ${elapsed} ms`);
  assert.equal((await limiter()).reclaimed, before.reclaimed + 1);
  await noSlotHeld();
});

test('an acquire the limiter refuses is retried: the create is sent once, never AmbiguousRequest', async () => {
  // The bench saw creates fail as AmbiguousRequest with no worker killed: their acquire reached the
  // limiter as it continued as new ("workflow is closing"), and the retry took that failed attempt,
  // which sent nothing, for a lost request. Standing in for the closing limiter: another workflow
  // under the limiter's ID, which has no acquire update, so every acquire is refused.
  const running = await env.client.workflow
    .getHandle(fleet.limiterId)
    .describe()
    .catch(() => undefined);
  if (running?.status.name === 'RUNNING') {
    await noSlotHeld();
    await env.client.workflow.getHandle(fleet.limiterId).terminate('the test puts another workflow in its place');
  }
  const impostor = await env.client.workflow.start('browserAIBatch', {
    workflowId: fleet.limiterId,
    taskQueue: fleet.taskQueue,
    args: [{ concurrency: 1, total: 1 }],
  });
  const handle = await start('refused-acquire', 1);
  await eventually('a create attempt was refused', async () => {
    const { raw } = await handle.describe();
    return (raw.pendingActivities ?? []).some((a) => (a.attempt ?? 0) >= 2);
  });
  await impostor.terminate('the limiter may start again');
  assert.equal((await handle.result()).status, 'finalized');
  assert.equal(creates('refused-acquire'), 1);
  await noSlotHeld();
});

test('the limiter continues as new before its run is long to replay, its record carried', async () => {
  // A worker without the limiter in its cache (the one that had it was killed, or an outage cut it
  // off) replays the whole run inside one workflow task: the run continues as new at 1,000 events.
  const limit = new FleetLimit(
    { maxRunning: 1_000, account: `history-${randomUUID().slice(0, 8)}`, taskQueue: 'browserai-fleet-limiter' },
    '',
  );
  const handle = env.client.workflow.getHandle(limit.limiterId);
  const place = { priority: 3, fairnessKey: 'history', fairnessWeight: 1, project: fleet.project, runId: 'r' };
  const acquire = (holderId: string) =>
    limit.acquire(env.client, { request: { ...place, holderId, workflowId: holderId } }, Date.now() + 30_000, NEVER);
  const pair = async () => {
    const holderId = randomUUID();
    // Refused while the limiter continues as new: retried, as a create's activity would.
    await acquire(holderId).catch(() => sleep(500).then(() => acquire(holderId)));
    await handle.signal(releaseSlotSignal, { holderId });
  };
  // The first acquire starts the limiter, which grants nothing until its census (of a limiter
  // lost before it: none here) is done; the holder kept across continue-as-new asks after it.
  await pair();
  await eventually('the census is done', async () => !(await handle.query(limiterStateQuery)).takingCensus);
  const kept = randomUUID();
  assert.deepEqual(await acquire(kept), { held: true });
  const firstRun = env.client.workflow.getHandle(limit.limiterId, (await handle.describe()).runId);
  // A pair adds 4 to 9 events (the update, the release, their workflow tasks): pairs until the run
  // continues as new, at most 1,500 of them.
  let left = 1_500;
  const continued = async () => (await firstRun.describe()).status.name !== 'RUNNING';
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (left-- > 0 && (left % 50 !== 0 || !(await continued()))) await pair();
    }),
  );
  const described = await firstRun.describe();
  assert.equal(described.status.name, 'CONTINUED_AS_NEW', `the first run has ${described.historyLength} events`);
  assert.ok(described.historyLength <= 1_100, `the first run had ${described.historyLength} events`);
  const state = await handle.query(limiterStateQuery);
  assert.deepEqual(
    state.holders.map((h) => h.holderId),
    [kept],
    'the holder from before is carried across continue-as-new',
  );
  await handle.terminate('test done');
});
