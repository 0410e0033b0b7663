// Invariants of a browserTask session, end to end (real Temporal dev server, real workers, the
// BrowserAI emulator over HTTP):
//  1. however a workflow ends while its task may still run, the task gets exactly one stop, and a
//     stop that cannot be delivered is reported (stopConfirmed: false), never faked;
//  2. no BrowserAI answer can wedge a workflow: each odd answer ends in a typed failure (and a stop
//     where a task exists), or is understood and the session goes on;
//  3. a transient 404 right after the create is waited out;
//  4. `complete` never cuts short instructions in hand, and a stale `awaiting` never parks the
//     workflow;
//  5. a create answer that arrives after its attempt gave up is never orphaned: its task is stopped;
//  6. a one-time code is typed once (unless forced), across continue-as-new too.
// Each test says what would break (and so make it fail) without the behaviour it names.
// Runs against both emulator modes. The stops meet each mode's answer for an ended task.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { bundleWorkflowCode, type Worker } from '@temporalio/worker';
import type { EmulatedTask } from '../src/emulator';
import { createWorker } from '../src/create-worker';
import type { BrowserTaskInput, BrowserTaskResult } from '../src/contract/input';
import {
  appendInstructionsSignal,
  stateQuery,
  submitCodeSignal,
  type BrowserTaskState,
} from '../src/contract/messages';
import { ending, eventually, startStack, storedHistory, taskInput, type Stack } from './helpers/stack';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

// ---- Helpers ---------------------------------------------------------------------------------

/** A word no other test's instructions contain: finds this test's tasks at the emulator. */
const newMarker = () => `marker-${randomUUID()}`;
/** The not-found grace of the tests that wait it out (30 s by default). */
const NOT_FOUND_GRACE_MS = 3_000;

/** Every emulator task whose create instructions carry the marker. */
function tasksWith(s: Stack, marker: string): EmulatedTask[] {
  return s.emulator.listTasks().filter((task) => task.instructions.some((i) => i.action.includes(marker)));
}

/** The one emulator task whose instructions carry the marker. */
function taskWith(s: Stack, marker: string): EmulatedTask {
  const found = tasksWith(s, marker);
  assert.equal(found.length, 1, `expected exactly one task created with ${marker}, found ${found.length}`);
  return found[0]!;
}

/** The failure the workflow ended with (within `withinMs`): its typed ApplicationFailure or its cancellation. */
async function failureOf(handle: WorkflowHandle, withinMs = 30_000): Promise<ApplicationFailure | CancelledFailure> {
  const { result, failure } = await ending(handle, withinMs);
  assert.ok(failure, `expected the workflow to fail, it completed with ${JSON.stringify(result)?.slice(0, 500)}`);
  assert.ok(failure instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${failure}`);
  assert.ok(
    failure.cause instanceof ApplicationFailure || failure.cause instanceof CancelledFailure,
    `unexpected cause ${failure.cause}`,
  );
  return failure.cause;
}

/** The typed failure (ApplicationFailure) the workflow ended with. */
async function typedFailureOf(handle: WorkflowHandle, withinMs = 30_000): Promise<ApplicationFailure> {
  const failure = await failureOf(handle, withinMs);
  assert.ok(failure instanceof ApplicationFailure, `expected a typed failure, got ${failure}`);
  return failure;
}

/** The workflow's result within `withinMs`; a failure fails the test with its type and message. */
async function resultOf(handle: WorkflowHandle, withinMs = 30_000, what?: string): Promise<BrowserTaskResult> {
  const { result, failure } = await ending(handle, withinMs, what);
  if (failure) {
    const cause = failure instanceof WorkflowFailedError ? failure.cause : failure;
    assert.fail(
      `expected the workflow to complete, it failed: ${cause instanceof ApplicationFailure ? `${cause.type}: ` : ''}${(cause as Error)?.message}`,
    );
  }
  return result!;
}

async function stateOf(s: Stack, workflowId: string): Promise<BrowserTaskState> {
  return s.tasks.handle(workflowId).query(stateQuery);
}

/** The execution ID, once the workflow has created its task. */
async function executionIdOf(s: Stack, workflowId: string): Promise<string> {
  return eventually('the task created', async () => (await stateOf(s, workflowId)).executionId ?? undefined);
}

/** Waits until the workflow says it awaits input; returns the execution ID. */
async function awaitingInput(s: Stack, workflowId: string): Promise<string> {
  return eventually('awaiting input', async () => {
    const state = await stateOf(s, workflowId);
    return state.awaitingInput ? state.executionId! : undefined;
  });
}

const emulatedTask = (s: Stack, executionId: string) => s.emulator.task(executionId)!;
const taskPath = (executionId: string) => new RegExp(`^/tasks/${executionId}$`);
const commandPath = (executionId: string) => new RegExp(`^/tasks/${executionId}/command$`);
const instructionsPath = (executionId: string) => new RegExp(`^/tasks/${executionId}/instructions$`);

// ---- 1. Every ending stops a task that may still run ------------------------------------------

// Every fault here names its task's path, so the tests can run side by side (the 404-after-grace
// one waits out a not-found grace shortened to NOT_FOUND_GRACE_MS).
describe('every ending sends exactly one stop to a task that may still run', { concurrency: true }, () => {
  test('cancel: one stop, the workflow ends cancelled', async () => {
    // Breaks if a cancelled workflow ended without its stop (or sent it twice).
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${newMarker()} crawl [duration=30s]` }] }),
    );
    const executionId = await eventually('running', async () => {
      const id = (await stateOf(stack, handle.workflowId)).executionId;
      return id && emulatedTask(stack, id).status === 'running' ? id : undefined;
    });
    await handle.cancel();
    assert.ok((await failureOf(handle)) instanceof CancelledFailure);
    assert.equal(emulatedTask(stack, executionId).stopCommands, 1);
    assert.equal(emulatedTask(stack, executionId).status, 'stopped');
  });

  test('TaskTimeout: one stop', async () => {
    // Breaks if the overall deadline failed the workflow without stopping the task.
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${newMarker()} crawl [duration=30s]` }], timeoutMs: 3_000 }),
    );
    const failure = await typedFailureOf(handle);
    assert.equal(failure.type, 'TaskTimeout');
    const executionId = (await stateOf(stack, handle.workflowId)).executionId!;
    assert.equal(emulatedTask(stack, executionId).stopCommands, 1);
    assert.equal(emulatedTask(stack, executionId).status, 'stopped');
  });

  test('AwaitingInputTimeout: one stop', async () => {
    // Breaks if the awaiting timeout failed the workflow and left the task at its code form.
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${newMarker()} log in [needs-code]` }], awaitingInputTimeoutMs: 2_000 }),
    );
    const failure = await typedFailureOf(handle);
    assert.equal(failure.type, 'AwaitingInputTimeout');
    const executionId = (await stateOf(stack, handle.workflowId)).executionId!;
    assert.equal(emulatedTask(stack, executionId).stopCommands, 1);
    assert.equal(emulatedTask(stack, executionId).status, 'stopped');
  });

  test('a non-retryable poll failure (401 on GET /tasks/{id}) fails Unauthorized, with one stop', async () => {
    // Breaks if a failed poll ended the workflow without a stop for the task it was polling.
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${newMarker()} crawl [duration=30s]` }] }),
    );
    const executionId = await executionIdOf(stack, handle.workflowId);
    stack.emulator.inject({ method: 'GET', path: taskPath(executionId), status: 401, times: 1 });
    const failure = await typedFailureOf(handle);
    assert.equal(failure.type, 'Unauthorized');
    assert.equal(emulatedTask(stack, executionId).stopCommands, 1);
    assert.equal(emulatedTask(stack, executionId).status, 'stopped');
  });

  test(
    'a 404 on GET /tasks/{id} after the not-found grace fails TaskNotFound, with one stop',
    { timeout: 90_000 },
    async () => {
      // Breaks if a task BrowserAI says it no longer knows were taken as gone without a stop, or if
      // the 404 kept the workflow polling forever.
      const handle = await stack.tasks.start(
        taskInput({
          instructions: [{ action: `${newMarker()} crawl [duration=90s]` }],
          polling: { ...taskInput().polling, notFoundGraceMs: NOT_FOUND_GRACE_MS },
        }),
      );
      const executionId = await executionIdOf(stack, handle.workflowId);
      const graceEnds = Date.parse(emulatedTask(stack, executionId).createdAt) + NOT_FOUND_GRACE_MS + 1_500;
      await sleep(Math.max(0, graceEnds - Date.now()));
      stack.emulator.inject({
        method: 'GET',
        path: taskPath(executionId),
        status: 404,
        error: 'Task not found',
        times: 1_000,
      });
      const failure = await typedFailureOf(handle);
      assert.equal(failure.type, 'TaskNotFound');
      assert.equal(emulatedTask(stack, executionId).stopCommands, 1);
      assert.equal(emulatedTask(stack, executionId).status, 'stopped');
    },
  );

  test('an answer that cannot be understood (GET /tasks/{id} answered 200 {"message":"ok"}) fails MalformedAnswer, with one stop', async () => {
    // Breaks if a malformed poll answer were retried forever (wedged) or ended the workflow without a stop.
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${newMarker()} crawl [duration=30s]` }] }),
    );
    const executionId = await executionIdOf(stack, handle.workflowId);
    stack.emulator.inject({ method: 'GET', path: taskPath(executionId), answer: { json: { message: 'ok' } } });
    const failure = await typedFailureOf(handle);
    assert.equal(failure.type, 'MalformedAnswer');
    assert.equal(emulatedTask(stack, executionId).stopCommands, 1);
    assert.equal(emulatedTask(stack, executionId).status, 'stopped');
  });

  test('cancelled while every stop fails: state says stopConfirmed false and the task still runs', async () => {
    // Breaks if a stop that never got through were reported as confirmed (or not reported at all).
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${newMarker()} crawl [duration=60s]` }], stopRetryWindowMs: 3_000 }),
    );
    const executionId = await eventually('running', async () => {
      const id = (await stateOf(stack, handle.workflowId)).executionId;
      return id && emulatedTask(stack, id).status === 'running' ? id : undefined;
    });
    stack.emulator.inject({ method: 'POST', path: commandPath(executionId), status: 500, times: 1_000 });
    await handle.cancel();
    assert.ok((await failureOf(handle)) instanceof CancelledFailure);
    const state = await stateOf(stack, handle.workflowId);
    assert.equal(state.stopConfirmed, false, `state after the cancel: ${JSON.stringify(state)}`);
    assert.ok(stack.emulator.count('POST', commandPath(executionId)) >= 1, 'a stop was attempted');
    assert.equal(emulatedTask(stack, executionId).status, 'running', 'the task is indeed still running');
  });

  test('a stop whose answer was lost, then a look that fails: the look is retried, not the stop (one stop)', async () => {
    // Breaks if a retry whose look at the task failed sent a second stop for one cancel.
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${newMarker()} crawl [duration=60s]` }] }),
    );
    const executionId = await eventually('running', async () => {
      const id = (await stateOf(stack, handle.workflowId)).executionId;
      return id && emulatedTask(stack, id).status === 'running' ? id : undefined;
    });
    stack.emulator.inject({ method: 'POST', path: commandPath(executionId), dropAfterHandling: true, times: 1 });
    stack.emulator.inject({ method: 'GET', path: new RegExp(`^/tasks/${executionId}$`), status: 500, times: 2 });
    await handle.cancel();
    assert.ok((await failureOf(handle)) instanceof CancelledFailure);
    assert.equal(stack.emulator.count('POST', commandPath(executionId)), 1, 'one stop for one cancel');
    assert.equal((await stateOf(stack, handle.workflowId)).stopConfirmed, true);
  });

  test('TaskTimeout while every stop fails: failure details[0].stopConfirmed is false', async () => {
    // Breaks if the failure's outcome claimed (or omitted) a stop that never got through.
    const handle = await stack.tasks.start(
      taskInput({
        instructions: [{ action: `${newMarker()} crawl [duration=60s]` }],
        // Long enough for the fault below to be in place before the timeout's stop, on a busy machine.
        timeoutMs: 12_000,
        stopRetryWindowMs: 3_000,
      }),
    );
    const executionId = await executionIdOf(stack, handle.workflowId);
    stack.emulator.inject({ method: 'POST', path: commandPath(executionId), status: 500, times: 1_000 });
    const failure = await typedFailureOf(handle);
    assert.equal(failure.type, 'TaskTimeout');
    const outcome = failure.details?.[0] as BrowserTaskResult | undefined;
    assert.equal(outcome?.stopConfirmed, false, `details[0]: ${JSON.stringify(outcome)}`);
    assert.equal(emulatedTask(stack, executionId).status, 'running', 'the task is indeed still running');
  });

  test('a stop answered 404 right after the create is retried until the task is visible, and really stops it', async () => {
    // Breaks if the 404 ("not visible yet") were taken as "nothing to stop": the task would keep running.
    const handle = await stack.tasks.start(
      // Not visible for long enough that the cancel below lands inside that window on a busy machine.
      taskInput({ instructions: [{ action: `${newMarker()} crawl [not-visible=10s] [duration=30s]` }] }),
    );
    const executionId = await executionIdOf(stack, handle.workflowId);
    await handle.cancel();
    assert.ok((await failureOf(handle)) instanceof CancelledFailure);
    const refused = stack.emulator.requests.filter(
      (r) => r.method === 'POST' && commandPath(executionId).test(r.path) && r.status === 404,
    );
    assert.ok(refused.length >= 1, 'the first stop was answered 404 (the task was not visible yet)');
    assert.equal(emulatedTask(stack, executionId).status, 'stopped');
    assert.equal(emulatedTask(stack, executionId).stopCommands, 1);
    assert.equal((await stateOf(stack, handle.workflowId)).stopConfirmed, true);
  });
});

// ---- 2. No answer can wedge a workflow ---------------------------------------------------------

describe('no BrowserAI answer can wedge a workflow', () => {
  const createFaults: Array<[string, (body: Record<string, unknown>) => unknown]> = [
    ['{executionId} only', (body) => ({ executionId: body.executionId })],
    ['a numeric status', (body) => ({ ...body, status: 7 })],
    ['an empty status', (body) => ({ ...body, status: '' })],
  ];
  for (const [what, transform] of createFaults) {
    test(`a create answered with ${what} fails MalformedAnswer and the task it named is stopped`, async () => {
      // Breaks if the malformed create were retried (a second task), hung, or left the task it named running.
      const marker = newMarker();
      stack.emulator.inject({ method: 'POST', path: /^\/tasks$/, answer: { transform } });
      const handle = await stack.tasks.start(
        taskInput({ instructions: [{ action: `${marker} crawl [duration=30s]` }] }),
      );
      const failure = await typedFailureOf(handle);
      assert.equal(failure.type, 'MalformedAnswer');
      const task = taskWith(stack, marker);
      assert.equal(task.stopCommands, 1);
      assert.equal(task.status, 'stopped');
    });
  }

  test('a create answered without an executionId fails AmbiguousRequest and nothing is sent to /tasks/undefined', async () => {
    // Breaks if the workflow went on with an unknown ID (requests to /tasks/undefined) or retried the create.
    const marker = newMarker();
    const from = stack.emulator.requests.length;
    stack.emulator.inject({ method: 'POST', path: /^\/tasks$/, answer: { json: { status: 'queued' } } });
    const handle = await stack.tasks.start(taskInput({ instructions: [{ action: `${marker} crawl` }] }));
    const failure = await typedFailureOf(handle);
    assert.equal(failure.type, 'AmbiguousRequest');
    const odd = stack.emulator.requests
      .slice(from)
      .filter((r) => /\/(undefined|null)(\/|$)/i.test(r.path) || r.path.startsWith('/tasks//'));
    assert.deepEqual(
      odd.map((r) => `${r.method} ${r.path}`),
      [],
    );
    assert.equal(tasksWith(stack, marker).length, 1, 'the create was not repeated');
  });

  test('an append answered {"message":"ok"} counts as delivered: the code is typed once and the workflow completes', async () => {
    // Breaks if a 2xx append answer without a status were taken as a failure (or retried).
    // [awaiting-lag=0]: the task runs the code at once, so this test does not depend on how a
    // stale `awaiting` is judged (section 4 covers that).
    const handle = await stack.tasks.start(
      taskInput({
        instructions: [{ action: `${newMarker()} log in [needs-code] [awaiting-lag=0ms]` }],
        awaitingInputTimeoutMs: 20_000,
      }),
    );
    const executionId = await awaitingInput(stack, handle.workflowId);
    stack.emulator.inject({ method: 'POST', path: instructionsPath(executionId), answer: { json: { message: 'ok' } } });
    await stack.tasks.submitCode(handle.workflowId, '731946');
    const result = await resultOf(handle, 15_000);
    assert.equal(result.status, 'finalized');
    assert.equal(result.error, null, 'the send was not recorded as a failure');
    assert.deepEqual(emulatedTask(stack, executionId).codesReceived, ['731946']);
    assert.equal(stack.emulator.count('POST', instructionsPath(executionId)), 1, 'sent once, not retried');
  });

  const pollFaults: Array<[string, { status: number; raw: string; contentType: string }]> = [
    [
      'an HTML error page with status 200',
      { status: 200, raw: '<html><body><h1>502 Bad Gateway</h1></body></html>', contentType: 'text/html' },
    ],
    ['a non-JSON 2xx body', { status: 202, raw: 'OK then', contentType: 'text/plain' }],
  ];
  for (const [what, answer] of pollFaults) {
    test(`a poll answered with ${what} fails MalformedAnswer, with one stop`, async () => {
      // Breaks if an unreadable poll answer were retried forever or ended the workflow without a stop.
      const handle = await stack.tasks.start(
        taskInput({ instructions: [{ action: `${newMarker()} crawl [duration=30s]` }] }),
      );
      const executionId = await executionIdOf(stack, handle.workflowId);
      stack.emulator.inject({ method: 'GET', path: taskPath(executionId), answer });
      const failure = await typedFailureOf(handle);
      assert.equal(failure.type, 'MalformedAnswer');
      assert.equal(emulatedTask(stack, executionId).stopCommands, 1);
      assert.equal(emulatedTask(stack, executionId).status, 'stopped');
    });
  }

  test('a task with 3 MB of logs completes normally, with its logs cut to size', async () => {
    // Breaks if the logs went into history whole (a payload over the limit fails every workflow task: wedged).
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${newMarker()} chatty crawl [big-logs=3mb]` }] }),
    );
    const result = await resultOf(handle);
    assert.equal(result.status, 'finalized');
    const state = await stateOf(stack, handle.workflowId);
    for (const line of state.progress.logs)
      assert.ok(Buffer.byteLength(line) < 1_024, `a log line of ${Buffer.byteLength(line)} bytes kept`);
    const history = await storedHistory(stack.env.client, handle.workflowId);
    assert.ok(history.length < 1_000_000, `history is ${history.length} bytes`);
  });

  test('a failed task with a 3 MB error fails BrowserAITaskFailed with a message of a few KB', async () => {
    // Breaks if the error went into the failure whole (too big for history: wedged) or the failure lost its type.
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${newMarker()} broken crawl [fail] [big-error=3mb]` }] }),
    );
    const failure = await typedFailureOf(handle);
    assert.equal(failure.type, 'BrowserAITaskFailed');
    assert.ok(Buffer.byteLength(failure.message) < 5 * 1_024, `message of ${Buffer.byteLength(failure.message)} bytes`);
    assert.ok(Buffer.byteLength(JSON.stringify(failure.details ?? [])) < 64 * 1_024, 'details of a few KB');
  });
});

// ---- 3. A transient 404 after the create ------------------------------------------------------

describe('a task not visible yet right after its create', () => {
  test('[not-visible=2s]: polls answered 404 are retried; the task completes with one create and no stop', async () => {
    // Breaks if the first 404 failed the workflow (TaskNotFound) or triggered a stop or a second create.
    const marker = newMarker();
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${marker} crawl [not-visible=2s]` }] }),
    );
    const result = await resultOf(handle);
    assert.equal(result.status, 'finalized');
    assert.equal(tasksWith(stack, marker).length, 1, 'one create');
    assert.ok(
      stack.emulator.requests.some(
        (r) => r.method === 'GET' && taskPath(result.executionId).test(r.path) && r.status === 404,
      ),
      'a poll was answered 404 (the scenario happened)',
    );
    assert.equal(emulatedTask(stack, result.executionId).stopCommands, 0, 'no stop');
    assert.equal(stack.emulator.count('POST', commandPath(result.executionId)), 0, 'no stop request at all');
  });
});

// ---- 4. Stale `awaiting` and `complete` --------------------------------------------------------

describe('a stale awaiting never parks the workflow, and complete never cuts instructions short', () => {
  test('[awaiting-lag=2500ms] OTP task: finishes within seconds of the code, not after awaitingInputTimeoutMs', async () => {
    // Breaks if the `awaiting` BrowserAI still reports during its lag after the code is taken as
    // "waiting for input again": the workflow would stop polling and only look again when the
    // awaiting timeout (60 s here) expires.
    const handle = await stack.tasks.start(
      taskInput({
        instructions: [{ action: `${newMarker()} log in [needs-code] [awaiting-lag=2500ms]` }],
        awaitingInputTimeoutMs: 60_000,
      }),
    );
    const executionId = await awaitingInput(stack, handle.workflowId);
    const sentAt = Date.now();
    await stack.tasks.submitCode(handle.workflowId, '604213');
    const result = await resultOf(handle, 15_000, 'the OTP workflow after its code');
    assert.equal(result.status, 'finalized');
    assert.deepEqual(emulatedTask(stack, executionId).codesReceived, ['604213']);
    assert.ok(Date.now() - sentAt < 15_000);
  });

  test('[awaiting-lag=2500ms] awaitable session: an append followed at once by complete runs the appended instruction before the stop', async () => {
    // Breaks if `complete` (or a stale `awaiting`) let the stop go out before the appended
    // instruction ran: the emulator drops a run cut short by a stop, so its result would be missing.
    const handle = await stack.tasks.start(
      taskInput({
        awaitable: true,
        instructions: [{ action: `${newMarker()} first step [awaiting-lag=2500ms]` }],
        awaitingInputTimeoutMs: 30_000,
      }),
    );
    const executionId = await awaitingInput(stack, handle.workflowId);
    await handle.signal(appendInstructionsSignal, { instructions: [{ action: 'Appended step' }] });
    await stack.tasks.complete(handle.workflowId);
    const result = await resultOf(handle, 30_000);
    assert.equal(result.status, 'stopped');
    const task = emulatedTask(stack, executionId);
    assert.ok(
      task.instructions.some((i) => i.action === 'Appended step'),
      'the appended instruction reached BrowserAI',
    );
    assert.equal(task.stopCommands, 1);
    const results = (await stack.browserai.getResults(executionId)).results;
    const steps = results.map((r) => `${(r.metadata as { step?: number } | undefined)?.step}:${r.state}`);
    assert.deepEqual(steps, ['1:done', '2:done'], 'the appended instruction (step 2) ran to its end before the stop');
  });

  test('the awaiting timeout never fires while a send is on the wire', async () => {
    // Breaks if the awaiting timer (3 s) failed the workflow AwaitingInputTimeout while the code,
    // sent 2 s into the wait, was still on the wire (BrowserAI answers it 4 s later).
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${newMarker()} log in [needs-code]` }], awaitingInputTimeoutMs: 3_000 }),
    );
    const executionId = await awaitingInput(stack, handle.workflowId);
    const awaitingSeenAt = Date.now();
    await sleep(Math.max(0, awaitingSeenAt + 2_000 - Date.now()));
    stack.emulator.inject({ method: 'POST', path: instructionsPath(executionId), delayMs: 4_000 });
    await stack.tasks.submitCode(handle.workflowId, '918273');
    const result = await resultOf(handle, 30_000);
    assert.equal(result.status, 'finalized');
    assert.deepEqual(emulatedTask(stack, executionId).codesReceived, ['918273']);
  });
});

// ---- 5. Late answers are never orphaned --------------------------------------------------------

describe('answers are never orphaned', () => {
  test('a create answered after the client gave up: the workflow fails AmbiguousRequest and the worker stops the late task', async () => {
    // Breaks if the late answer were dropped: the task it created would run with nobody to stop it.
    const marker = newMarker();
    stack.emulator.inject({ method: 'POST', path: /^\/tasks$/, delayMs: 7_000 });
    const handle = await stack.tasks.start(taskInput({ instructions: [{ action: `${marker} crawl [duration=60s]` }] }));
    const failure = await typedFailureOf(handle);
    assert.equal(failure.type, 'AmbiguousRequest');
    const task = await eventually(
      'the late task stopped',
      () => {
        const found = tasksWith(stack, marker);
        return found.length === 1 && found[0]!.status === 'stopped' ? found[0] : undefined;
      },
      15_000,
    );
    assert.equal(task.stopCommands, 1);
  });

  test('at-least-once: the workflow completes on a second task, and the late first one is stopped too', async () => {
    // Breaks if the first create's late answer were dropped: that task would run on unstopped
    // (here it would end by itself as `finalized`, with no stop, instead of `stopped`).
    const marker = newMarker();
    stack.emulator.inject({ method: 'POST', path: /^\/tasks$/, delayMs: 7_000 });
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${marker} crawl [duration=3s]` }], delivery: 'at-least-once' }),
    );
    await eventually('two tasks', () => tasksWith(stack, marker).length === 2, 20_000);
    const firstId = tasksWith(stack, marker).sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt))[0]!
      .executionId;
    const result = await resultOf(handle, 40_000);
    assert.equal(result.status, 'finalized');
    assert.notEqual(result.executionId, firstId, 'the workflow went on with the second task');
    await eventually(
      'nothing of this workflow running',
      () =>
        !stack.emulator
          .runningTasks()
          .some((t) => tasksWith(stack, marker).some((m) => m.executionId === t.executionId)),
      15_000,
    );
    assert.equal(emulatedTask(stack, firstId).status, 'stopped');
    assert.equal(emulatedTask(stack, firstId).stopCommands, 1);
  });
});

// ---- 6. One-time codes ------------------------------------------------------------------------

/** An awaitable `[needs-code]` session: it takes code after code until `complete`. */
async function codeSession(s: Stack): Promise<{ handle: WorkflowHandle; workflowId: string; executionId: string }> {
  const input: BrowserTaskInput = taskInput({
    awaitable: true,
    instructions: [{ action: `${newMarker()} log in [needs-code] [awaiting-lag=0ms]` }],
    awaitingInputTimeoutMs: 60_000,
  });
  const handle = await s.tasks.start(input);
  const executionId = await awaitingInput(s, handle.workflowId);
  return { handle, workflowId: handle.workflowId, executionId };
}

const codesAt = (s: Stack, executionId: string) => emulatedTask(s, executionId).codesReceived;

async function finish(s: Stack, handle: WorkflowHandle): Promise<void> {
  await s.tasks.complete(handle.workflowId);
  assert.equal((await resultOf(handle, 30_000)).status, 'stopped');
}

describe('one-time codes', () => {
  test('the same code submitted twice in a row is typed once; a different code afterwards is typed', async () => {
    // Breaks if a repeated submitCode typed the code again (a second login attempt with a used code),
    // or if the dedupe swallowed a different code.
    const { handle, workflowId, executionId } = await codeSession(stack);
    await stack.tasks.submitCode(workflowId, '271828');
    await stack.tasks.submitCode(workflowId, '271828');
    await eventually('the code typed', () => codesAt(stack, executionId).includes('271828'));
    await sleep(1_500);
    await stack.tasks.submitCode(workflowId, '314159');
    await eventually('the second code typed', () => codesAt(stack, executionId).includes('314159'));
    assert.deepEqual(codesAt(stack, executionId), ['271828', '314159']);
    await finish(stack, handle);
  });

  test('the same code submitted again while the first is still on the wire is typed once', async () => {
    // Breaks if a code on the wire (sent, not yet answered) did not count as "in hand": the repeat
    // would be queued behind it and typed a second time.
    const { handle, workflowId, executionId } = await codeSession(stack);
    stack.emulator.inject({ method: 'POST', path: instructionsPath(executionId), delayMs: 3_000 });
    await stack.tasks.submitCode(workflowId, '161803');
    await eventually('the code on the wire', () =>
      stack.emulator.requests.some(
        (r) => r.method === 'POST' && instructionsPath(executionId).test(r.path) && r.status === 0,
      ),
    );
    await stack.tasks.submitCode(workflowId, '161803');
    await eventually('the code typed', () => codesAt(stack, executionId).includes('161803'));
    await sleep(1_500);
    await stack.tasks.submitCode(workflowId, '141421');
    await eventually('the second code typed', () => codesAt(stack, executionId).includes('141421'));
    assert.deepEqual(codesAt(stack, executionId), ['161803', '141421']);
    await finish(stack, handle);
  });

  test('force: true types a code again', async () => {
    // Breaks if force were ignored: a user who must re-enter the same code could not.
    const { handle, workflowId, executionId } = await codeSession(stack);
    await stack.tasks.submitCode(workflowId, '577215');
    await eventually('the code typed', () => codesAt(stack, executionId).includes('577215'));
    await stack.tasks.handle(workflowId).signal(submitCodeSignal, { code: '577215', force: true });
    await eventually('the code typed again', () => codesAt(stack, executionId).length === 2);
    assert.deepEqual(codesAt(stack, executionId), ['577215', '577215']);
    await finish(stack, handle);
  });
});

// ---- 7. With a server that suggests continue-as-new early ---------------------------------------

describe('with continue-as-new suggested after 10 events', () => {
  let early: Stack;
  let faultyQueue: string;
  let faultyWorker: Worker | undefined;
  let faultyRunning: Promise<void> | undefined;

  before(async () => {
    early = await startStack({
      temporalArgs: ['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=10'],
    });
    const noop = () => undefined;
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('./workflows/faulty-workflows'),
      logger: { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop },
    });
    faultyQueue = `faulty-${randomUUID()}`;
    faultyWorker = await createWorker({
      connection: early.env.nativeConnection,
      namespace: early.env.namespace ?? 'default',
      taskQueue: faultyQueue,
      client: early.browserai,
      workflowBundle,
      shutdownGraceTime: 1_000,
    });
    faultyRunning = faultyWorker.run();
  });
  after(async () => {
    if (faultyWorker?.getState() === 'RUNNING') faultyWorker.shutdown();
    await faultyRunning?.catch(() => undefined);
    await early?.stop();
  });

  test('an unexpected error in workflow code after the create fails the workflow UnexpectedError, with one stop', async () => {
    // Breaks if a non-typed error escaped the session: the SDK would fail the workflow task and
    // retry it forever (the workflow hangs open) with the task left running and never stopped.
    const marker = newMarker();
    const input = taskInput({
      instructions: [{ action: `${marker} crawl [duration=30s]` }],
      // The poll comes back every second, so the loop soon sees the continue-as-new suggestion.
      polling: { initialIntervalMs: 250, maxIntervalMs: 1_000, heartbeatTimeoutMs: 5_000, maxSpanMs: 1_000 },
    });
    const handle = await early.env.client.workflow.start('faultyBrowserTask', {
      taskQueue: faultyQueue,
      workflowId: `faulty-${randomUUID()}`,
      args: [input],
    });
    const failure = await typedFailureOf(handle, 30_000);
    assert.equal(failure.type, 'UnexpectedError');
    assert.match(failure.message, /simulated bug/);
    const task = taskWith(early, marker);
    assert.equal(task.stopCommands, 1, 'the task created before the bug got one stop');
    assert.equal(task.status, 'stopped');
  });

  test('a code typed in one run and submitted again after continue-as-new is typed once', async () => {
    // Breaks if the codes typed were not carried into the next run: the repeat would be typed again.
    const { handle, workflowId, executionId } = await codeSession(early);
    const handleNow = early.tasks.handle(workflowId);
    await early.tasks.submitCode(workflowId, '662607');
    await eventually('the code typed', () => codesAt(early, executionId).includes('662607'));
    await eventually('the append answered', async () => (await stateOf(early, workflowId)).pendingInstructions === 0);
    const runOfCode = (await handleNow.describe()).runId;
    // Dropped (invalid) signals only grow the history, until the server suggests continue-as-new.
    await eventually(
      'a new run',
      async () => {
        if ((await handleNow.describe()).runId !== runOfCode) return true;
        await handleNow.signal(appendInstructionsSignal, { instructions: [] });
        return false;
      },
      30_000,
    );
    await early.tasks.submitCode(workflowId, '662607');
    await sleep(1_000);
    await early.tasks.submitCode(workflowId, '299792');
    await eventually('the second code typed', () => codesAt(early, executionId).includes('299792'), 30_000);
    assert.deepEqual(codesAt(early, executionId), ['662607', '299792']);
    await finish(early, handle);
  });
});
