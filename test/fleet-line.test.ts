// Slow: a line of 10,000 acquires and 2,000 grants through one limiter on a real dev server.
//
// The fleet limiter at the size of a real backlog (docs/design/fleet-limit.md): 10,000 acquires sent
// as the workers send them (one update at a time, up to 500 requests each), then 2,000 grants as the
// holders release, across several continue-as-new runs. The limiter answers every acquire, grants
// strictly in order, continues as new with a record that stays small (the back of the line is left
// out and asks again with its ticket), and every run replays; no workflow task of it fails. The
// limiter's workflow-task latencies are printed, not asserted (the bench measures them).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { FleetLimit, fleetLimiterActivities } from '../src/activities/fleet';
import {
  limiterStateQuery,
  releaseSlotSignal,
  type SlotAnswer,
  type SlotRequest,
  type SlotTicket,
} from '../src/contract/fleet-messages';
import { eventually, startTemporal, storedRuns, workflowBundle } from './helpers/stack';

const LINE = 10_000;
const LIMIT = 50;
const ROUNDS = 40;
/** An acquire the test never cancels. */
const NEVER = new AbortController().signal;

let env: TestWorkflowEnvironment;
let limiterWorker: Worker;
let limiterRun: Promise<void>;
const queue = `fleet-line-${randomUUID()}`;
const fleet = new FleetLimit(
  // The holder check would find the stand-in holders gone: it runs once an hour here.
  { maxRunning: LIMIT, checkIntervalMs: 3_600_000, account: `line-${randomUUID().slice(0, 8)}`, taskQueue: queue },
  '',
);
let holderWorkflowId: string;

before(async () => {
  env = await startTemporal();
  limiterWorker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue: queue,
    workflowBundle: await workflowBundle(),
    activities: fleetLimiterActivities(),
  });
  limiterRun = limiterWorker.run();
  // The 10,000 waiters stand in for tasks: they share one running workflow (of a type nobody runs),
  // so the limiter's grant signals are delivered, and each has a holder ID of its own.
  holderWorkflowId = `fleet-line-holders-${randomUUID()}`;
  await env.client.workflow.start('nobodyRunsThis', { workflowId: holderWorkflowId, taskQueue: `${queue}-none` });
});
after(async () => {
  await env?.client.workflow
    .getHandle(fleet.limiterId)
    .terminate('test done')
    .catch(() => undefined);
  await env?.client.workflow
    .getHandle(holderWorkflowId)
    .terminate('test done')
    .catch(() => undefined);
  if (limiterWorker?.getState() === 'RUNNING') limiterWorker.shutdown();
  await limiterRun;
  await env?.teardown();
});

const request = (i: number): SlotRequest => ({
  holderId: `${holderWorkflowId}/waiter-${String(i).padStart(5, '0')}`,
  workflowId: holderWorkflowId,
  runId: `waiter-${i}`,
  project: 'line',
  priority: 3,
  fairnessKey: 'line',
  fairnessWeight: 1,
});
const indexOf = (holderId: string) => Number(holderId.slice(holderId.lastIndexOf('-') + 1));

/** An acquire as a create's activity makes it: refused while the limiter continues as new, it is retried. */
async function acquire(i: number, ticket?: SlotTicket): Promise<SlotAnswer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fleet.acquire(
        env.client,
        { request: request(i), ...(ticket ? { ticket } : {}) },
        Date.now() + 120_000,
        NEVER,
      );
    } catch (err) {
      if (attempt >= 10) throw err;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}

const limiter = () => env.client.workflow.getHandle(fleet.limiterId);
const state = () => limiter().query(limiterStateQuery);

test('a line of 10,000: every acquire answered in order, grants in order across continue-as-new, every run replays', async () => {
  // 1. The line: the first acquire starts the limiter, which grants nothing until its census (of a
  // limiter lost before it, none here) is done; then 10,000 acquires at once, 500 to an update.
  await acquire(0);
  await eventually('the new limiter has taken its census', async () => (await state()).takingCensus === false);
  const answers = await Promise.all(Array.from({ length: LINE }, (_, i) => acquire(i)));
  const tickets = new Map<number, SlotTicket>();
  answers.forEach((answer, i) => {
    if (i < LIMIT) assert.deepEqual(answer, { held: true }, `request ${i} holds a slot`);
    else {
      assert.ok(!answer.held, `request ${i} waits`);
      assert.equal(answer.position, i - LIMIT + 1, `request ${i} is number ${i - LIMIT + 1} in line`);
      assert.ok(answer.askAgainMs >= fleet.limits.checkIntervalMs, 'it asks again no sooner than a check interval');
      tickets.set(i, answer.ticket);
    }
  });
  let seen = await state();
  assert.equal(seen.held, LIMIT);
  // The waiters a continue-as-new left out of its record ask again, as waiting tasks do when they
  // hear nothing: with their tickets they get their places back.
  const rejoin = async (from: number, when: string) => {
    // The head of the line is carried; the back was left out. Asking again may itself bring the
    // next continue-as-new, which leaves out the back again: they ask until the line is whole.
    for (let tries = 1; seen.waiting < LINE - from; tries++) {
      assert.ok(tries <= 5, `${when}: the line is whole again within 5 asks (${seen.waiting} of ${LINE - from})`);
      const carried = seen.waiting;
      const left = Array.from({ length: LINE - from - carried }, (_, k) => from + carried + k);
      const asked = await Promise.all(left.map((i) => acquire(i, tickets.get(i))));
      asked.forEach((answer, k) => {
        assert.ok(!answer.held, 'a waiter asking again still waits');
        assert.ok(answer.position <= carried + k + 1, 'a waiter asking again is never behind its place');
      });
      seen = await state();
      rejoined++;
    }
  };
  let rejoined = 0;
  await rejoin(LIMIT, 'after the acquires');

  // 2. 2,000 grants: each round the 50 holders release, and the next 50 in line must hold.
  let next = LIMIT;
  for (let round = 1; round <= ROUNDS; round++) {
    const holders = seen.holders.map((h) => h.holderId);
    await Promise.all(holders.map((holderId) => limiter().signal(releaseSlotSignal, { holderId })));
    seen = await eventually(
      `round ${round}: the next ${LIMIT} hold`,
      async () => {
        const now = await state().catch(() => undefined);
        return now && now.released >= round * LIMIT && now.held === LIMIT && now;
      },
      60_000,
    );
    const expected = Array.from({ length: LIMIT }, (_, k) => next + k);
    assert.deepEqual(
      seen.holders.map((h) => indexOf(h.holderId)).sort((a, b) => a - b),
      expected,
      `round ${round}: the slots went to the next ${LIMIT} in line`,
    );
    next += LIMIT;
    await rejoin(next, `after round ${round}`);
  }
  assert.equal(seen.granted, LIMIT + ROUNDS * LIMIT);
  assert.ok(rejoined > 0, 'some continue-as-new left waiters out, and they got their places back');

  // 3. Every run: continued as new with a small record, no workflow task failed, and it replays.
  const runs = await storedRuns(env.client, fleet.limiterId);
  assert.ok(runs.length >= 2, `the limiter continued as new (${runs.length} runs)`);
  const taskLatencies: number[] = [];
  const taskDurations: number[] = [];
  for (const run of runs) {
    const events = run.history.events ?? [];
    const failed = events.filter((e) => e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes);
    const why = failed.map((e) => {
      const f = e.workflowTaskFailedEventAttributes;
      return f
        ? `failed (cause ${f.cause}): ${f.failure?.message}`
        : `timed out (${e.workflowTaskTimedOutEventAttributes?.timeoutType})`;
    });
    assert.equal(failed.length, 0, `run ${run.runId}: no workflow task failed or timed out: ${why.join('; ')}`);
    const input = events[0]?.workflowExecutionStartedEventAttributes?.input;
    const inputBytes = temporal.api.common.v1.Payloads.encode(input ?? {}).finish().length;
    assert.ok(inputBytes < 1024 * 1024, `run ${run.runId}: its carried record is ${inputBytes} bytes (< 1 MiB)`);
    const at = (e: temporal.api.history.v1.IHistoryEvent) =>
      Number(e.eventTime?.seconds ?? 0) * 1_000 + (e.eventTime?.nanos ?? 0) / 1e6;
    const scheduled = new Map<string, number>();
    const started = new Map<string, number>();
    for (const e of events) {
      if (e.workflowTaskScheduledEventAttributes) scheduled.set(String(e.eventId), at(e));
      const s = e.workflowTaskStartedEventAttributes;
      if (s) {
        taskLatencies.push(at(e) - scheduled.get(String(s.scheduledEventId))!);
        started.set(String(e.eventId), at(e));
      }
      const c = e.workflowTaskCompletedEventAttributes;
      if (c) taskDurations.push(at(e) - started.get(String(c.startedEventId))!);
    }
  }
  // The first replay includes the replay worker's start (loading the bundle); the rest are the runs'.
  const replayMs: number[] = [];
  let replayStartedAt = Date.now();
  const replays = Worker.runReplayHistories(
    { workflowBundle: await workflowBundle() },
    runs.map((run) => ({ workflowId: fleet.limiterId, history: run.history })),
  );
  for await (const replay of replays) {
    assert.equal(replay.error, undefined, `run ${replay.runId} replays`);
    replayMs.push(Date.now() - replayStartedAt);
    replayStartedAt = Date.now();
  }
  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] ?? 0;
  console.log(
    `limiter: ${runs.length} runs, ${taskLatencies.length} workflow tasks; scheduled -> started p50 ${pct(taskLatencies, 0.5).toFixed(0)} ms, ` +
      `p99 ${pct(taskLatencies, 0.99).toFixed(0)} ms; started -> completed p50 ${pct(taskDurations, 0.5).toFixed(0)} ms, ` +
      `p99 ${pct(taskDurations, 0.99).toFixed(0)} ms, max ${Math.max(...taskDurations).toFixed(0)} ms; ` +
      `replays ${replayMs.map((ms) => `${ms} ms`).join(', ')} (the first with the replay worker's start)`,
  );
});
