// An attempt's time budget counts from when it started, not from when it was scheduled (issue 16,
// section 1). Creates and code sends that wait over a minute in the task queue, behind polls that
// hold a worker's only activity slot, are answered by a slow BrowserAI (2.5 s): every workflow
// completes, with one create and each code typed once. Real dev server, real worker, the emulator
// over HTTP. Takes about three minutes: the waits are what the test is about.
// Slow: sends must wait over a minute in the task queue, their start-to-close timeout.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Worker } from '@temporalio/worker';
import { BrowserTasks } from '../src/starters/tasks';
import { createWorker } from '../src/create-worker';
import type { BrowserTaskResult } from '../src/contract/input';
import { eventually, startStack, taskInput, workflowBundle, type Stack } from './helpers/stack';

/** Over a minute in the queue: the 56-s wait left a create 1 s to be answered. */
const HOLD = '[duration=70s]';
const SLOW_ANSWER_MS = 2_500;
const BURST = 3;

let stack: Stack;
let worker: Worker;
let running: Promise<void>;
let tasks: BrowserTasks;
before(async () => {
  stack = await startStack();
  const taskQueue = `one-slot-${randomUUID()}`;
  // One activity slot: a running task's poll holds it, and everything else waits in the queue.
  worker = await createWorker({
    connection: stack.env.nativeConnection,
    namespace: stack.env.namespace ?? 'default',
    taskQueue,
    client: stack.browserai,
    workflowBundle: await workflowBundle(),
    maxConcurrentActivityTaskExecutions: 1,
    shutdownGraceTime: 1_000,
  });
  running = worker.run();
  tasks = new BrowserTasks(stack.env.client, taskQueue);
});
after(async () => {
  worker?.shutdown();
  await running?.catch(() => undefined);
  await stack?.stop();
});

const marker = () => `marker-${randomUUID()}`;

/** Starts a task that runs 70 s, and returns once its poll holds the worker's one slot. */
async function holdTheSlot(): Promise<WorkflowHandle> {
  const handle = await tasks.start(taskInput({ instructions: [{ action: `${marker()} hold ${HOLD}` }] }));
  await eventually(
    'the holder to poll its running task',
    async () => {
      const { status } = await tasks.state(handle.workflowId);
      const { raw } = await handle.describe();
      const started = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
      return (
        status === 'running' &&
        raw.pendingActivities?.some((a) => a.activityType?.name === 'browserAIPollTask' && a.state === started)
      );
    },
    60_000,
  );
  return handle;
}

/** How long each attempt of `activityType` waited in the task queue (started minus scheduled), in ms. */
async function queueWaits(handle: WorkflowHandle, activityType: string): Promise<number[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const ms = (t: temporal.api.history.v1.IHistoryEvent) =>
    Number(t.eventTime?.seconds ?? 0) * 1_000 + Math.floor((t.eventTime?.nanos ?? 0) / 1e6);
  const scheduled = new Map<string, number>();
  const waits: number[] = [];
  for (const event of events) {
    const id = String(event.eventId);
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === activityType) scheduled.set(id, ms(event));
    const startedOf = event.activityTaskStartedEventAttributes?.scheduledEventId;
    if (startedOf != null && scheduled.has(String(startedOf)))
      waits.push(ms(event) - scheduled.get(String(startedOf))!);
  }
  return waits;
}

test(
  'creates and code sends that waited over a minute in the queue are answered slowly and still delivered once',
  { timeout: 6 * 60_000 },
  async () => {
    // Breaks if an attempt's budget counted from when it was scheduled: after a 70-s wait it would
    // give the 2.5-s answers below 1 s, and every create and code would end AmbiguousRequest.
    stack.emulator.inject({ method: 'POST', path: /^\/tasks$/, delayMs: SLOW_ANSWER_MS, times: 100 });
    stack.emulator.inject({
      method: 'POST',
      path: /^\/tasks\/[^/]+\/instructions$/,
      delayMs: SLOW_ANSWER_MS,
      times: 100,
    });
    const firstHolder = await holdTheSlot();
    const markers = Array.from({ length: BURST }, marker);
    const burst = await Promise.all(
      markers.map((m) => tasks.start(taskInput({ instructions: [{ action: `${m} log in [needs-code]` }] }))),
    );
    for (const handle of burst) {
      await eventually(
        'the code form',
        async () => (await tasks.state(handle.workflowId)).status === 'awaiting',
        3 * 60_000,
      );
    }
    const secondHolder = await holdTheSlot();
    const codes = burst.map((_, i) => String(481_200 + i));
    await Promise.all(burst.map((handle, i) => tasks.submitCode(handle.workflowId, codes[i]!)));

    for (const handle of [firstHolder, secondHolder, ...burst]) {
      const result: BrowserTaskResult = await handle.result();
      assert.equal(result.status, 'finalized', handle.workflowId);
    }
    for (const [i, m] of markers.entries()) {
      const created = stack.emulator.listTasks().filter((t) => t.instructions.some((x) => x.action.includes(m)));
      assert.equal(created.length, 1, `one create for ${m}`);
      assert.deepEqual(created[0]!.codesReceived, [codes[i]], 'the code typed once');
    }
    // The situation the test is about happened: creates and code sends waited over a minute.
    for (const handle of burst) {
      const [createWait] = await queueWaits(handle, 'browserAICreateTask');
      const [codeWait] = await queueWaits(handle, 'browserAIAppendInstructions');
      assert.ok(createWait! > 60_000, `the create waited ${createWait} ms in the queue`);
      assert.ok(codeWait! > 60_000, `the code send waited ${codeWait} ms in the queue`);
    }
  },
);
