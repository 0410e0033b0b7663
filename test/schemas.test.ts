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
import { FailureType } from '../src/contract/errors';
import { WEBHOOK_EVENT_TYPES } from '../src/contract/input';
import { nextInputRequestUpdate, stateQuery } from '../src/contract/messages';
import { generateSchemas, SCHEMAS_DIR } from '../scripts/schemas';
import { assertMatchesSchema, readSchema, validatorOf } from './helpers/schemas';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';

test('schemas/ is what the TypeScript types generate (run `npm run schemas` after changing a type)', () => {
  const fresh = generateSchemas();
  assert.deepEqual(readdirSync(SCHEMAS_DIR).sort(), [...fresh.keys()].sort(), 'the same files');
  for (const [name, text] of fresh) {
    assert.equal(readFileSync(join(SCHEMAS_DIR, name), 'utf8'), text, `schemas/${name} is stale: run npm run schemas`);
  }
  const contract = readSchema('contract.json') as { failureTypes: string[]; webhooks: Record<string, unknown> };
  assert.deepEqual(contract.failureTypes, Object.values(FailureType));
  assert.deepEqual(Object.keys(contract.webhooks), WEBHOOK_EVENT_TYPES);
});

test('the failure schema says which failure types always carry the outcome so far', () => {
  const validate = validatorOf('WorkflowFailure');
  const outcome = {
    executionId: 'e',
    status: 'stopped',
    started: null,
    completed: null,
    result: null,
    error: null,
    results: [],
  };
  for (const type of ['BrowserAITaskFailed', 'AwaitingInputTimeout', 'CodesRefused', 'TotpSecretNotFound']) {
    assert.equal(validate({ type, message: 'm', details: [outcome] }), true, `${type} with the outcome`);
    assert.equal(validate({ type, message: 'm' }), false, `${type} without a detail`);
    assert.equal(validate({ type, message: 'm', details: [{ problems: ['p'] }] }), false, `${type} with problems`);
  }
  assert.equal(validate({ type: 'Timeout', message: 'm' }), true, 'Timeout before the create has no detail');
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

test('the code loop: nextInputRequest asked as another SDK asks it, its answers, the open request in state, CodesRefused and TotpSecretNotFound', async () => {
  const handle = await stack.tasks.start(
    taskInput({ instructions: [{ action: 'Log in [rejects-code]' }], maxCodeAttempts: 1 }),
  );
  // The update with its argument as plain JSON, as a Python or Go caller sends it.
  const next = (after: number) => handle.executeUpdate(nextInputRequestUpdate, { args: [{ after }] });
  const asked = await next(0);
  assertMatchesSchema('InputRequestWait', asked, 'the answer to a code request');
  assert.ok(asked.kind === 'input-requested' && asked.open, JSON.stringify(asked));
  assertMatchesSchema('InputRequest', asked.request, 'the request on its own');
  const state = await handle.query(stateQuery);
  assert.deepEqual(state.inputRequest, asked.request);
  assertMatchesSchema('BrowserTaskState', state, 'the state with an open request');

  await stack.tasks.submitCode(handle.workflowId, '111111');
  const finished = await next(asked.request.sequence);
  assertMatchesSchema('InputRequestWait', finished, 'the answer once the task finished');
  assert.ok(finished.kind === 'finished', JSON.stringify(finished));
  assert.equal(finished.finished.failureType, FailureType.CodesRefused);
  assertMatchesSchema('TaskFinished', finished.finished, 'how the task finished, on its own');
  const refused = await failureOf(handle.result());
  assert.equal(refused.type, FailureType.CodesRefused);
  assertMatchesSchema('WorkflowFailure', refused, 'a CodesRefused failure');

  const totp = await stack.tasks.start(
    taskInput({ instructions: [{ action: 'Log in [needs-totp=gitlab]' }], totpSecretName: 'gitlab' }),
  );
  const notHeld = await failureOf(totp.result());
  assert.equal(notHeld.type, FailureType.TotpSecretNotFound);
  assertMatchesSchema('WorkflowFailure', notHeld, 'a TotpSecretNotFound failure');
});
