// Nothing BrowserAI sends can terminate, wedge or stall a workflow: every hostile answer the
// emulator can give (its markers in scenario.ts, faults for error bodies) ends in a workflow that
// completes or fails typed within seconds, with one task created, nothing left running and no
// secret in history. Each case names what it broke before its fix. Every workflow here has a short
// overall timeout, so a broken case fails the test in a minute, not in hours.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { EmulatedTask } from '../src/emulator';
import { InvalidInputError } from '../src/starters/tasks';
import { startSearchAttributes, withSearchAttributeFallback } from '../src/starters/search-attributes-fallback';
import type { BrowserTaskInput, BrowserTaskResult } from '../src/contract/input';
import {
  addInstructionsUpdate,
  appendInstructionsSignal,
  stateQuery,
  submitCodeSignal,
} from '../src/contract/messages';
import { BrowserAIProject, BrowserAIStatus } from '../src/contract/search-attributes';
import { ending, eventually, startStack, storedHistory, storedRuns, taskInput, type Stack } from './helpers/stack';

let stack: Stack;
before(async () => {
  // Continue-as-new is suggested after a few events, so the carried state is exercised on every case.
  stack = await startStack({ temporalArgs: ['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=30'] });
});
after(async () => {
  await stack?.stop();
});

/** Long enough for every case that works (a few seconds); a case that wedges ends TaskTimeout by then. */
const TIMEOUT_MS = 60_000;
/** How long a test waits for the workflow to end: a workflow still open then failed its test. */
const ENDED_WITHIN_MS = TIMEOUT_MS + 30_000;
/** What the bounds mark a cut value with (src/browserai/bounds.ts, src/activities/trim.ts). */
const CUT = /cut by browserai-temporal|truncated by browserai-temporal/;

function start(action: string, overrides: Partial<BrowserTaskInput> = {}): Promise<WorkflowHandle> {
  return stack.tasks.start(taskInput({ instructions: [{ action }], timeoutMs: TIMEOUT_MS, ...overrides }));
}

const newMarker = () => `marker-${randomUUID()}`;

function tasksWith(marker: string): EmulatedTask[] {
  return stack.emulator.listTasks().filter((task) => task.instructions.some((i) => i.action.includes(marker)));
}

async function completed(handle: WorkflowHandle): Promise<BrowserTaskResult> {
  const { result, failure } = await ending(handle, ENDED_WITHIN_MS);
  if (failure) {
    const cause = failure instanceof WorkflowFailedError ? failure.cause : failure;
    assert.fail(
      `expected the workflow to complete, it ended: ${cause instanceof ApplicationFailure ? `${cause.type}: ` : ''}${String((cause as Error)?.message).slice(0, 300)}`,
    );
  }
  return result!;
}

async function typedFailure(handle: WorkflowHandle): Promise<ApplicationFailure> {
  const { failure } = await ending(handle, ENDED_WITHIN_MS);
  assert.ok(failure instanceof WorkflowFailedError, `expected a failed workflow, got ${String(failure)}`);
  assert.ok(failure.cause instanceof ApplicationFailure, `expected a typed failure, got ${failure.cause}`);
  return failure.cause;
}

test('a status of 3,000 characters: the search attribute gets it cut, and the workflow completes', async () => {
  // Broke: the upsert of BrowserAIStatus over 2 KB made the server terminate the workflow (no ending, no stop).
  const handle = await start(`${newMarker()} crawl [long-status=3000] [duration=4s]`);
  const shown = await eventually('the long status shown', async () => {
    const status = (await handle.describe()).typedSearchAttributes.get(BrowserAIStatus);
    return typeof status === 'string' && CUT.test(status) ? status : undefined;
  });
  assert.ok(Buffer.byteLength(shown) < 2_048, `BrowserAIStatus of ${Buffer.byteLength(shown)} bytes`);
  assert.match(shown, /^(queued|running) \(the engine/, 'the status keeps its beginning');
  assert.equal((await completed(handle)).status, 'finalized');
});

test('a 2.5 MB progress.status: polls go on, the state shows it cut, and the workflow completes', async () => {
  // Broke: every poll's result was over 2 MB and failed, until TaskTimeout; the results were lost.
  const handle = await start(`${newMarker()} crawl [big-progress=2.5MB] [duration=4s]`);
  const progress = await eventually('the progress shown', async () => {
    const status = (await handle.query(stateQuery)).progress.status;
    return status && CUT.test(status) ? status : undefined;
  });
  assert.ok(Buffer.byteLength(progress) < 2_048, `progress.status of ${Buffer.byteLength(progress)} bytes`);
  assert.equal((await completed(handle)).status, 'finalized');
});

test('a result nested 20,000 levels deep: cut at 64 levels with a mark, and the workflow completes', async () => {
  // Broke: serializing the result overflowed the stack, every poll failed until TaskTimeout.
  const result = await completed(await start(`${newMarker()} crawl [deep-result=20000]`));
  assert.equal(result.status, 'finalized');
  assert.match(JSON.stringify(result.result), /nested deeper than 64 levels/);
  assert.match(JSON.stringify(result.results), /nested deeper than 64 levels/);
});

for (const delivery of ['at-most-once', 'at-least-once'] as const) {
  test(`a create answer with a 2.5 MB extra field (${delivery}): one task, created once, completes`, async () => {
    // Broke: the whole answer was heartbeated, the attempt was lost and the task left running
    // (at-least-once: one more task per attempt).
    const marker = newMarker();
    const result = await completed(await start(`${marker} crawl [big-create=2.5MB]`, { delivery }));
    assert.equal(result.status, 'finalized');
    const tasks = tasksWith(marker);
    assert.equal(tasks.length, 1, 'created once');
    assert.equal(tasks[0]!.status, 'finalized', 'not left running');
  });
}

test('a create answered 500 with a 3 MB error body fails AmbiguousRequest with the error text cut', async () => {
  // Broke: the failure carried the 3 MB text, which the server refuses; its message was never cut.
  stack.emulator.inject({
    method: 'POST',
    path: /^\/tasks$/,
    status: 500,
    error: 'Upstream failure. '.repeat(175_000),
  });
  const failure = await typedFailure(await start(`${newMarker()} crawl`));
  assert.equal(failure.type, 'AmbiguousRequest');
  assert.match(failure.message, /failed with 500 "Upstream failure\./, 'the message is about the 500 answered');
  assert.match(failure.message, CUT);
  assert.ok(Buffer.byteLength(failure.message) < 8 * 1_024, `message of ${Buffer.byteLength(failure.message)} bytes`);
});

test('2 MB of crafted text (%3Fws= repeated) in the results: masked in linear time, the workflow completes', async () => {
  // Broke: the masker rescanned 8 KiB per occurrence: seconds of blocked event loop per read, so
  // the poll missed its heartbeats (5 s here), was retried, and did the same again until TaskTimeout.
  const result = await completed(await start(`${newMarker()} crawl [crafted-result=2MB]`));
  assert.equal(result.status, 'finalized');
  assert.ok(result.trimmed, 'the results were cut to fit in history, and say so');
});

test('secrets in object keys are masked: the proxy password never reaches history', async () => {
  // Broke: keys were copied as they were, `{"wss://user:password@host": ...}` kept the password.
  const marker = newMarker();
  const handle = await start(`${marker} crawl [secret-keys]`);
  const result = await completed(handle);
  const { proxyPassword } = stack.emulator.taskSecrets(result.executionId)!;
  assert.ok(JSON.stringify(result).includes('wss://•••@brd.superproxy.io:9222'), 'the key is kept, masked');
  const history = await storedHistory(stack.env.client, handle.workflowId);
  assert.ok(!history.includes(proxyPassword), 'the proxy password is in history');
});

test('oversized input and queued instructions are refused at the door; continue-as-new never carries over 2 MB', async () => {
  // Broke: signals queued megabytes while the create was slow; continue-as-new carried them,
  // Temporal refused the new run's input, and the workflow task failed in a hot loop forever.
  const big = (n: number) => [{ action: `Type this text: ${'x'.repeat(n)}` }];
  await assert.rejects(
    stack.tasks.start(taskInput({ instructions: big(300 * 1024) })),
    (err: unknown) => err instanceof InvalidInputError && /at most 262144 bytes/.test(err.message),
  );
  const marker = newMarker();
  // The create answers after 4 s (the client waits 5): the signals below queue up behind it.
  stack.emulator.inject({ method: 'POST', path: /^\/tasks$/, delayMs: 4_000 });
  const handle = await start(`${marker} crawl [duration=2s]`);
  // Signals that queue nothing, so continue-as-new is suggested (30 events) as soon as the create answers.
  const times = (n: number, send: () => Promise<void>) => Promise.all(Array.from({ length: n }, send));
  await times(30, () => handle.signal(submitCodeSignal, { code: 'not a code' }));
  await times(4, () => handle.signal(appendInstructionsSignal, { instructions: big(900 * 1024) }));
  await assert.rejects(
    handle.executeUpdate(addInstructionsUpdate, { args: [{ instructions: big(900 * 1024) }] }),
    (err: Error) =>
      /bytes of JSON, over the 524288 a task holds/.test(`${err.message} ${(err.cause as Error)?.message}`),
  );
  assert.equal((await completed(handle)).status, 'finalized');
  assert.ok((await storedRuns(stack.env.client, handle.workflowId)).length > 1, 'it continued as new');
  assert.equal(tasksWith(marker).length, 1);
  const appended = stack.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/instructions'));
  assert.ok(
    appended.every((r) => !JSON.stringify(r.body ?? '').includes('x'.repeat(1_000))),
    'no oversized instructions sent',
  );
});

test('a project name over 2 KB is refused up front, and a size refusal is never taken for a missing search attribute', async () => {
  // Broke: the start's fallback took "exceeds size limit" for a namespace without our search
  // attributes, and started the workflow with none.
  const project = 'p'.repeat(3_000);
  await assert.rejects(
    stack.tasks.start(taskInput({ project })),
    (err: unknown) => err instanceof InvalidInputError && /project must be at most 512 characters/.test(err.message),
  );
  // Our starters now cut a long project to 255 characters, so the oversized value is set by hand
  // here: whatever sends one, the fallback must not take the server's size refusal for a missing attribute.
  const oversized = startSearchAttributes().updateCopy([{ key: BrowserAIProject, value: project }]);
  const workflowId = `raw-${randomUUID()}`;
  let tries = 0;
  await assert.rejects(
    withSearchAttributeFallback((registered) => {
      tries++;
      return stack.env.client.workflow.start('browserTask', {
        taskQueue: `nobody-polls-${randomUUID()}`,
        workflowId,
        args: [taskInput({ project })],
        typedSearchAttributes: registered(oversized),
      });
    }),
  );
  assert.equal(tries, 1, 'retried with fewer search attributes');
});
