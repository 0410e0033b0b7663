// What a Temporal reset (`temporal workflow reset`, the UI's Reset) does to a browserTask. A reset
// terminates the current run WITHOUT running any of its code (no cancellation, no stop) and starts
// a new run from the history up to the chosen workflow task: whatever the discarded part of the
// history did at BrowserAI stays done, and the new run does again what it has no record of.
// These tests pin the behaviour that holds; it is documented (docs/operations.md, "Resetting a workflow"), not a bug that workflow code can fix.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { stateQuery } from '../src/contract/messages';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const { ResetReapplyType, ResetReapplyExcludeType } = temporal.api.enums.v1;
/** How the reset treats the signals after the reset point: the deprecated type, or the exclusion list that replaces it. */
type Reapply = Pick<
  temporal.api.workflowservice.v1.IResetWorkflowExecutionRequest,
  'resetReapplyType' | 'resetReapplyExcludeTypes'
>;
const REAPPLY: Record<'SIGNAL (default)' | 'NONE' | 'exclude Signal', Reapply> = {
  'SIGNAL (default)': { resetReapplyType: ResetReapplyType.RESET_REAPPLY_TYPE_SIGNAL },
  NONE: { resetReapplyType: ResetReapplyType.RESET_REAPPLY_TYPE_NONE },
  // What docs/operations.md recommends (`temporal workflow reset --reapply-exclude Signal`).
  'exclude Signal': { resetReapplyExcludeTypes: [ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL] },
};

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

/** Creates whose instructions carry this text. */
const createsWith = (text: string) =>
  stack.emulator.requests.filter(
    (r) => r.method === 'POST' && r.path === '/tasks' && JSON.stringify(r.body ?? '').includes(text),
  ).length;
/** Appends (codes included) sent to this task. */
const appendsTo = (executionId: string) =>
  stack.emulator.count('POST', new RegExp(`^/tasks/${executionId}/instructions$`));

async function awaitingInput(handle: WorkflowHandle): Promise<string> {
  const state = await eventually('awaiting input', async () => {
    const s = await handle.query(stateQuery);
    return s.awaitingInput && s.executionId ? s : undefined;
  });
  return state.executionId!;
}

/** A `[needs-code]` task waiting for its code; `marker` (no digits: digits would read as a code) finds its creates. */
async function startWaitingForCode(marker: string, extra = '') {
  const handle = await stack.tasks.start(
    // A bounded wait for input, so a run that waits for a code it will never get ends within the test.
    taskInput({
      instructions: [{ action: `Log in to the portal [needs-code] ${marker} ${extra}`.trim() }],
      awaitingInputTimeoutMs: 60_000,
    }),
  );
  const executionId = await awaitingInput(handle);
  const { runId } = await handle.describe();
  const events = (await stack.env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory()).events ?? [];
  return { handle, executionId, runId, events };
}

const isCreate = (e: HistoryEvent) => /create/i.test(e.activityTaskScheduledEventAttributes?.activityType?.name ?? '');

function firstWorkflowTaskCompleted(events: HistoryEvent[]): HistoryEvent {
  const event = events.find((e) => e.workflowTaskCompletedEventAttributes);
  assert.ok(event, 'a WorkflowTaskCompleted event');
  return event;
}

/** The WorkflowTaskCompleted right after the create activity's ActivityTaskCompleted. */
function workflowTaskAfterCreate(events: HistoryEvent[]): HistoryEvent {
  const scheduled = events.find(isCreate);
  assert.ok(scheduled, `a create activity in ${events.map((e) => e.eventType).join(',')}`);
  const completed = events.find(
    (e) => Number(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? -1) === Number(scheduled.eventId),
  );
  assert.ok(completed, 'the create completed');
  const next = events.find(
    (e) => e.workflowTaskCompletedEventAttributes && Number(e.eventId) > Number(completed.eventId),
  );
  assert.ok(next, 'a workflow task completed after the create');
  return next;
}

async function reset(
  handle: WorkflowHandle,
  runId: string,
  to: HistoryEvent,
  reapply: Reapply = REAPPLY['SIGNAL (default)'],
): Promise<WorkflowHandle> {
  const { runId: newRunId } = await stack.env.client.workflowService.resetWorkflowExecution({
    namespace: stack.env.namespace ?? 'default',
    workflowExecution: { workflowId: handle.workflowId, runId },
    workflowTaskFinishEventId: to.eventId,
    reason: 'test',
    requestId: randomUUID(),
    ...reapply,
  });
  assert.ok(newRunId && newRunId !== runId, 'the reset started a new run');
  const old = await stack.env.client.workflow.getHandle(handle.workflowId, runId).describe();
  assert.equal(old.status.name, 'TERMINATED', 'the reset terminated the old run');
  return stack.env.client.workflow.getHandle(handle.workflowId, newRunId);
}

describe('reset', () => {
  test(
    'to before the create was answered: the new run creates a second task, the first is left awaiting with no stop',
    { timeout: 120_000 },
    async () => {
      const marker = 'reset before the create';
      const { handle, executionId: first, runId, events } = await startWaitingForCode(marker);
      assert.equal(createsWith(marker), 1);

      const newRun = await reset(handle, runId, firstWorkflowTaskCompleted(events));
      const second = await awaitingInput(newRun);

      // Documented behaviour, not a bug we can fix from workflow code: the reset threw away the
      // history that held the create's answer (the execution ID), so the new run creates again;
      // and a reset terminates the old run without running its code, so nothing stops the first task.
      assert.notEqual(second, first, 'the new run created its own task');
      assert.equal(createsWith(marker), 2, 'two creates at BrowserAI');
      const orphan = stack.emulator.task(first)!;
      assert.equal(orphan.status, 'awaiting', 'the first task is left waiting for a code');
      assert.equal(orphan.stopCommands, 0, 'and nobody stopped it');

      await stack.tasks.submitCode(handle.workflowId, '604218');
      const result = await newRun.result();
      assert.equal(result.executionId, second);
      assert.equal(result.status, 'finalized');
      assert.deepEqual(stack.emulator.task(second)!.codesReceived, ['604218']);
      assert.deepEqual(stack.emulator.task(first)!.codesReceived, [], 'the first task never gets the code');
      assert.equal(stack.emulator.task(first)!.status, 'awaiting');
    },
  );

  for (const name of ['SIGNAL (default)', 'NONE'] as const) {
    test(
      `to after the create, code submitted after the reset (reapply ${name}): one create, the code typed once`,
      { timeout: 120_000 },
      async () => {
        const marker = `reset after the create, code later, reapply ${name.split(' ')[0]!.toLowerCase()}`;
        const { handle, executionId, runId, events } = await startWaitingForCode(marker);
        const newRun = await reset(handle, runId, workflowTaskAfterCreate(events), REAPPLY[name]);
        assert.equal(await awaitingInput(newRun), executionId, 'the new run knows the task from the kept history');
        await stack.tasks.submitCode(handle.workflowId, '731904');
        const result = await newRun.result();
        assert.equal(result.executionId, executionId);
        assert.equal(result.status, 'finalized');
        // Observed: the history kept the create's answer, and no signal preceded the reset.
        assert.equal(createsWith(marker), 1, 'one create');
        assert.equal(appendsTo(executionId), 1, 'one code append');
        assert.deepEqual(stack.emulator.task(executionId)!.codesReceived, ['731904']);
      },
    );
  }

  // The case that matters: the code was typed, then the history is reset to before it was sent.
  for (const [name, typed] of [
    ['SIGNAL (default)', 2],
    ['NONE', 1],
    ['exclude Signal', 1],
  ] as const) {
    test(
      `to after the create, code typed BEFORE the reset (reapply ${name}): the code is typed ${typed === 2 ? 'twice' : 'once'}`,
      { timeout: 120_000 },
      async () => {
        const marker = `reset after the create, code typed, reapply ${name.replace(/\W+/g, ' ').toLowerCase()}`;
        // The run after the code lasts 10 s: the task is still running when the reset lands.
        const { handle, executionId, runId } = await startWaitingForCode(marker, '[duration=10s]');
        await stack.tasks.submitCode(handle.workflowId, '582017');
        await eventually('the code typed', () => stack.emulator.task(executionId)!.codesReceived.length === 1);
        await eventually('the workflow saw the answer', async () => {
          const s = await handle.query(stateQuery);
          return s.pendingInstructions === 0 && !s.awaitingInput;
        });
        // Reset the way a person would, a while later: once BrowserAI itself no longer says
        // `awaiting` (it keeps saying so for a moment after an append). A run that has no record of
        // the code and reads that stale `awaiting` would wait for input until awaitingInputTimeoutMs.
        await eventually(
          'BrowserAI says running',
          async () => (await stack.browserai.getTask(executionId)).status === 'running',
        );
        const events =
          (await stack.env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory()).events ?? [];
        const newRun = await reset(handle, runId, workflowTaskAfterCreate(events), REAPPLY[name]);
        const result = await newRun.result();
        assert.equal(result.executionId, executionId);
        assert.equal(result.status, 'finalized');
        assert.equal(createsWith(marker), 1, 'one create');
        // Documented behaviour: with the default reapply (SIGNAL) the new run receives the
        // submitCode signal again, has no record of the append the old run made, and types the
        // code a second time; with signals excluded (NONE, or --reapply-exclude Signal) it never
        // hears of the code, and the task (which already has it) finishes on its own.
        assert.equal(appendsTo(executionId), typed, `${typed} code append(s)`);
        assert.deepEqual(stack.emulator.task(executionId)!.codesReceived, Array(typed).fill('582017'));
      },
    );
  }
});
