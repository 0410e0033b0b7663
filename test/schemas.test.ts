// The shipped schemas are the types' own (schemas/ equals what `npm run schemas` generates now),
// and what the workflows really send back — results, the `state` answer, update answers and
// failures with their details — matches them.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FAIL_ERROR } from '../src/emulator/scenario';
import { FailureType } from '../src/errors';
import { stateQuery } from '../src/workflows/messages';
import { generateSchemas, SCHEMAS_DIR } from '../scripts/schemas';
import { assertMatchesSchema, readSchema } from './helpers/schemas';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';

test('schemas/ is what the TypeScript types generate (run `npm run schemas` after changing a type)', () => {
  const fresh = generateSchemas();
  assert.deepEqual(readdirSync(SCHEMAS_DIR).sort(), [...fresh.keys()].sort(), 'the same files');
  for (const [name, text] of fresh) {
    assert.equal(readFileSync(join(SCHEMAS_DIR, name), 'utf8'), text, `schemas/${name} is stale: run npm run schemas`);
  }
  const contract = readSchema('contract.json') as { failureTypes: string[] };
  assert.deepEqual(contract.failureTypes, Object.values(FailureType));
});

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

/** A workflow's failure as every SDK shows it: type, message, details. */
async function failureOf(result: Promise<unknown>): Promise<{ type: string; message: string; details?: unknown[] }> {
  const err = await result.then(
    () => assert.fail('the workflow should fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure, String(err));
  const { type, message, details } = err.cause;
  return { type: type!, message, ...(details?.length ? { details: [...details] } : {}) };
}

test('a code task: the state answers, the update answers and the result match their schemas', async () => {
  const handle = await stack.tasks.start(
    taskInput({ instructions: [{ action: 'Log in [needs-code]' }], awaitable: true }),
    { waitForExecutionId: true },
  );
  assertMatchesSchema('ExecutionId', handle.executionId);
  assertMatchesSchema('BrowserTaskState', await handle.query(stateQuery), 'the state before the code');
  const awaiting = await eventually('awaiting input', async () => {
    const state = await handle.query(stateQuery);
    return state.awaitingInput && state;
  });
  assertMatchesSchema('BrowserTaskState', awaiting, 'the state while awaiting');
  await stack.tasks.submitCode(handle.workflowId, '482913');
  const answer = await stack.tasks.addInstructions(handle.workflowId, [{ action: 'Open the invoices page' }]);
  assertMatchesSchema('TaskExecutionAnswer', answer, 'the addInstructions answer');
  await stack.tasks.complete(handle.workflowId);
  const result = await handle.result();
  assertMatchesSchema('BrowserTaskResult', result, 'the result');
  assert.equal(result.stopConfirmed, true, 'complete stopped the session: the result carries stopConfirmed');
  assertMatchesSchema('BrowserTaskState', await handle.query(stateQuery), 'the state once ended');
});

test('failures and their details match the failure schema: refused input, a failed task, a task never created', async () => {
  const client = stack.env.client;
  const start = (workflowType: string, input: unknown) =>
    client.workflow.execute(workflowType, {
      taskQueue: stack.taskQueue,
      workflowId: `schemas-${workflowType}-${Date.now()}-${Math.random()}`,
      args: [input],
    });
  const refused = await failureOf(start('browserTask', { ...taskInput(), timeoutMS: 60_000 }));
  assert.equal(refused.type, FailureType.InvalidInput);
  assert.match(refused.message, /input has no field "timeoutMS"/);
  assertMatchesSchema('WorkflowFailure', refused, 'an InvalidInput failure');

  const failed = await failureOf(start('browserTask', taskInput({ instructions: [{ action: 'Open it [fail]' }] })));
  assert.equal(failed.type, FailureType.BrowserAITaskFailed);
  assert.equal((failed.details?.[0] as { error?: string }).error, FAIL_ERROR);
  assertMatchesSchema('WorkflowFailure', failed, 'a BrowserAITaskFailed failure');

  const notFound = await failureOf(start('runSavedTask', { name: 'no saved task of this name' }));
  assert.equal(notFound.type, FailureType.SavedTaskNotFound);
  assertMatchesSchema('WorkflowFailure', notFound, 'a SavedTaskNotFound failure');
  assert.equal((notFound.details?.[0] as { status?: number }).status, 404, 'the detail is what BrowserAI answered');
});
