// History stays bounded: when the server suggests it (here after a few events, through the
// dev server's dynamic config), browserTask continues as new once its handlers are done,
// carrying the execution ID and the instructions not yet sent. No second create.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { appendInstructionsSignal } from '../src/workflows/messages';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';

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
      polling: { initialIntervalMs: 200, maxIntervalMs: 400, heartbeatTimeoutMs: 5_000, maxSpanMs: 300 },
    }),
  );
  // Instructions keep arriving across runs; some are queued while a run hands over.
  for (let i = 1; i <= 3; i++) {
    await eventually(`appendable ${i}`, async () => (await stack.tasks.state(handle.workflowId)).awaitingInput, 30_000);
    await handle.signal(appendInstructionsSignal, { instructions: [{ action: `step ${i} [duration=1s]` }] });
    await stack.tasks.addInstructions(handle.workflowId, [{ action: `update step ${i}` }]);
  }
  await eventually('awaiting at the end', async () => (await stack.tasks.state(handle.workflowId)).awaitingInput, 30_000);
  await stack.tasks.complete(handle.workflowId);
  const result = await handle.result();
  assert.equal(result.status, 'stopped');

  const runs = [];
  for await (const run of stack.env.client.workflow.list({ query: `WorkflowId = '${handle.workflowId}'` })) runs.push(run);
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
