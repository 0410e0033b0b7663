// History stays bounded: when the server suggests it (here after a few events, through the
// dev server's dynamic config), browserTask continues as new once its handlers are done,
// carrying the execution ID and the instructions not yet sent. No second create.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { appendInstructionsSignal } from '../src/contract/messages';
import { eventually, startStack, storedRuns, taskInput, type Stack } from './helpers/stack';

let stack: Stack;
before(async () => {
  stack = await startStack({ temporalArgs: ['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=25'] });
});
after(async () => {
  await stack?.stop();
});

test('continues as new under a long task without creating it twice or losing instructions', async () => {
  const handle = await stack.tasks.start(
    taskInput({
      awaitable: true,
      instructions: [{ action: 'Long session [duration=4s]' }],
      polling: { initialIntervalMs: 250, maxIntervalMs: 400, heartbeatTimeoutMs: 5_000, maxSpanMs: 300 },
    }),
  );
  // Instructions keep arriving across runs; some are queued while a run hands over.
  for (let i = 1; i <= 3; i++) {
    await eventually(`appendable ${i}`, async () => (await stack.tasks.state(handle.workflowId)).awaitingInput, 30_000);
    await handle.signal(appendInstructionsSignal, { instructions: [{ action: `step ${i} [duration=1s]` }] });
    await stack.tasks.addInstructions(handle.workflowId, [{ action: `update step ${i}` }]);
  }
  await eventually(
    'awaiting at the end',
    async () => (await stack.tasks.state(handle.workflowId)).awaitingInput,
    30_000,
  );
  await stack.tasks.complete(handle.workflowId);
  const result = await handle.result();
  assert.equal(result.status, 'stopped');

  const runs = [];
  for await (const run of stack.env.client.workflow.list({ query: `WorkflowId = '${handle.workflowId}'` }))
    runs.push(run);
  assert.ok(runs.length > 1, `expected several runs, got ${runs.length}`);
  assert.equal(stack.emulator.count('POST', /^\/tasks$/), 1, 'one create across all runs');
  const task = stack.emulator.task(result.executionId)!;
  const sent = task.instructions.map((i) => i.action);
  for (let i = 1; i <= 3; i++) {
    assert.equal(sent.filter((a) => a.startsWith(`step ${i} `)).length, 1, `step ${i} sent once`);
    assert.equal(sent.filter((a) => a === `update step ${i}`).length, 1, `update step ${i} sent once`);
  }
});

test('a run continued as new while awaiting input still says it awaits input', async () => {
  const handle = await stack.tasks.start(taskInput({ awaitable: true, awaitingInputTimeoutMs: 60_000 }));
  await eventually('awaiting', async () => (await stack.tasks.state(handle.workflowId)).awaitingInput);
  const firstRunId = (await handle.describe()).runId;
  // Invalid signals are dropped by the workflow, but each one grows the history: enough of
  // them make the server suggest continue-as-new while the task sits in `awaiting`.
  for (let i = 0; i < 8; i++) await handle.signal(appendInstructionsSignal, { instructions: [] });
  await eventually('a new run', async () => (await handle.describe()).runId !== firstRunId);
  const state = await stack.tasks.state(handle.workflowId);
  assert.equal(state.awaitingInput, true);
  assert.equal(state.status, 'awaiting');
  await stack.tasks.complete(handle.workflowId);
  assert.equal((await handle.result()).status, 'stopped');
});

/** Every JSON payload of a ContinuedAsNew event's input, decoded (the default converter's json/plain). */
function continuedAsNewInput(event: {
  workflowExecutionContinuedAsNewEventAttributes?: {
    input?: { payloads?: Array<{ data?: Uint8Array | null }> | null } | null;
  } | null;
}): unknown[] {
  return (event.workflowExecutionContinuedAsNewEventAttributes?.input?.payloads ?? []).map((p) => {
    try {
      return JSON.parse(Buffer.from(p.data ?? []).toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
  });
}

/** Every `pending` list anywhere in a value: where the carried state keeps the instructions not yet sent. */
function pendingLists(value: unknown): unknown[][] {
  if (!value || typeof value !== 'object') return [];
  const own =
    'pending' in value && Array.isArray((value as { pending: unknown }).pending)
      ? [(value as { pending: unknown[] }).pending]
      : [];
  return [...own, ...Object.values(value).flatMap(pendingLists)];
}

test(
  'instructions still queued when the run continues as new reach BrowserAI exactly once, in order',
  { timeout: 120_000 },
  async () => {
    const handle = await stack.tasks.start(taskInput({ awaitable: true, awaitingInputTimeoutMs: 60_000 }));
    const { executionId } = await eventually('awaiting', async () => {
      const s = await stack.tasks.state(handle.workflowId);
      return s.awaitingInput ? s : undefined;
    });
    const firstRunId = (await handle.describe()).runId;
    const appendPath = new RegExp(`^/tasks/${executionId}/instructions$`);
    // The first append hangs on the wire for a while; the two after it can only queue behind it.
    stack.emulator.inject({ method: 'POST', path: appendPath, delayMs: 4_000 });
    const steps = ['queued step A', 'queued step B', 'queued step C'];
    await handle.signal(appendInstructionsSignal, { instructions: [{ action: steps[0]! }] });
    await eventually('the first append on the wire', () =>
      stack.emulator.requests.some((r) => r.method === 'POST' && appendPath.test(r.path) && r.status === 0),
    );
    await handle.signal(appendInstructionsSignal, { instructions: [{ action: steps[1]! }] });
    await handle.signal(appendInstructionsSignal, { instructions: [{ action: steps[2]! }] });
    // Dropped (invalid) signals that only grow the history: the server suggests continue-as-new
    // while the first append is still on the wire and the other two wait behind it.
    for (let i = 0; i < 8; i++) await handle.signal(appendInstructionsSignal, { instructions: [] });
    assert.equal(
      stack.emulator.count('POST', appendPath),
      1,
      'B and C were still queued when the history grew past the limit',
    );

    await eventually('a new run', async () => (await handle.describe()).runId !== firstRunId, 30_000);
    await eventually(
      'every step sent',
      () =>
        stack.emulator.task(executionId!)!.instructions.filter((i) => i.action.startsWith('queued step')).length >= 3,
      30_000,
    );
    await eventually(
      'awaiting at the end',
      async () => (await stack.tasks.state(handle.workflowId)).awaitingInput,
      30_000,
    );
    await stack.tasks.complete(handle.workflowId);
    const result = await handle.result();
    assert.equal(result.status, 'stopped');

    const sent = stack.emulator
      .task(executionId!)!
      .instructions.map((i) => i.action)
      .filter((a) => a.startsWith('queued step'));
    assert.deepEqual(sent, steps, 'each instruction reached BrowserAI exactly once, in the order sent');
    assert.equal(stack.emulator.count('POST', appendPath), 3, 'three appends, none repeated');

    const runs = await storedRuns(stack.env.client, handle.workflowId);
    assert.ok(runs.length > 1, `expected several runs, got ${runs.length}`);
    const first = runs.find((run) => run.runId === firstRunId)!;
    const last = first.history.events?.at(-1);
    assert.ok(last?.workflowExecutionContinuedAsNewEventAttributes, 'the first run ended by continuing as new');
    const carried = continuedAsNewInput(last).flatMap(pendingLists).flat();
    const carriedText = JSON.stringify(carried);
    assert.ok(
      carried.length > 0,
      `the first run carried no pending instructions into the next: ${JSON.stringify(continuedAsNewInput(last))}`,
    );
    assert.ok(
      steps.slice(1).some((step) => carriedText.includes(step)),
      `what was carried is not B or C: ${carriedText}`,
    );
  },
);
