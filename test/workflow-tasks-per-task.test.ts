// Fewer workflow tasks per task: the poll that sees the end brings the results (no activity of
// their own), and the create answers at once, so a message signalled meanwhile is not held
// behind its look (docs/design/polling.md). Read from the stored history of each run.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type temporal } from '@temporalio/proto';
import { appendInstructionsSignal } from '../src/contract/messages';
import { startStack, storedRuns, taskInput, type Stack } from './helpers/stack';

type Event = temporal.api.history.v1.IHistoryEvent;

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

async function eventsOf(workflowId: string): Promise<Event[]> {
  const runs = await storedRuns(stack.env.client, workflowId);
  return runs.flatMap((run) => run.history.events ?? []);
}

/** The activity types scheduled, in order. */
function scheduled(events: Event[]): string[] {
  return events.flatMap((e) => {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}

function timeMs(event: Event | undefined): number {
  assert.ok(event?.eventTime, 'the event has a time');
  return Number(event.eventTime.seconds ?? 0) * 1_000 + Math.floor((event.eventTime.nanos ?? 0) / 1_000_000);
}

describe('workflow tasks per task', () => {
  test('the poll that sees the end brings the results: no activity of their own reads them', async () => {
    const handle = await stack.tasks.start(taskInput());
    const result = await handle.result();
    assert.equal(result.status, 'finalized');
    assert.ok(result.results.length > 0, 'the outcome carries the results');
    const events = await eventsOf(handle.workflowId);
    const types = scheduled(events);
    assert.ok(!types.includes('browserAIGetResults'), `no results-read activity: ${types.join(', ')}`);
    // What a plain task costs stays as it was: a create, at most two polls (the look a second after
    // a queued create, then the one that sees the end), two upserts.
    assert.ok(types.length <= 3, `activities: ${types.join(', ')}`);
    const upserts = events.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes).length;
    assert.ok(upserts <= 2, `${upserts} search-attribute upserts`);
  });

  test('a results read that fails with the end is made by the workflow itself', async () => {
    stack.emulator.inject({ method: 'GET', path: /^\/results\//, status: 500 });
    const handle = await stack.tasks.start(taskInput());
    const result = await handle.result();
    assert.equal(result.status, 'finalized');
    assert.ok(result.results.length > 0, 'the outcome carries the results');
    const types = scheduled(await eventsOf(handle.workflowId));
    assert.equal(types.filter((t) => t === 'browserAIGetResults').length, 1, types.join(', '));
  });

  test('an instruction signalled with the start is sent without waiting for the create to look again', async () => {
    const workflowId = `held-${randomUUID()}`;
    // Queued for a while: a create that looked a second after its `queued` answer would hold the
    // append for that second.
    await stack.env.client.workflow.signalWithStart('browserTask', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [taskInput({ instructions: [{ action: 'Open the page [duration=2s]' }] })],
      signal: appendInstructionsSignal,
      signalArgs: [{ instructions: [{ action: 'Then read the footer' }] }],
    });
    const result = await stack.tasks.handle(workflowId).result();
    assert.equal(result.status, 'finalized');
    const events = await eventsOf(workflowId);
    const signaled = events.find(
      (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'appendInstructions',
    );
    const append = events.find(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'browserAIAppendInstructions',
    );
    const createScheduled = events.find(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'browserAICreateTask',
    );
    const createStarted = events.find(
      (e) =>
        e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === createScheduled?.eventId?.toString(),
    );
    const createCompleted = events.find(
      (e) =>
        e.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === createScheduled?.eventId?.toString(),
    );
    // The create sends one request and answers: it no longer waits a second to look again.
    const createMs = timeMs(createCompleted) - timeMs(createStarted);
    assert.ok(createMs < 1_000, `the create took ${createMs} ms`);
    // The append goes out in the workflow task that took the create's answer.
    const tookTheAnswer = events.find(
      (e) => Number(e.eventId) > Number(createCompleted!.eventId) && e.workflowTaskCompletedEventAttributes,
    );
    assert.ok(append && signaled && tookTheAnswer, 'signal, append and workflow task in history');
    assert.equal(
      String(append.activityTaskScheduledEventAttributes!.workflowTaskCompletedEventId),
      String(tookTheAnswer.eventId),
      'the append is scheduled by the workflow task that took the create answer',
    );
  });
});
