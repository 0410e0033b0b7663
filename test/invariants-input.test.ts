// The workflow trusts only itself: what it acts on comes from its own validated input or its own
// previous run, never from a caller that says "I am a continued run" or hands it an execution ID.
// Each test starts workflows the way a caller that skips BrowserTasks would (the raw Temporal
// client) and checks that nothing reached BrowserAI. Also: a workflow cancelled before any
// worker picked it up creates nothing.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import ts from 'typescript';
import { WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { BrowserTasks, InvalidInputError } from '../src/starters/tasks';
import { SavedTasks } from '../src/starters/saved-tasks';
import type { SavedTaskDefinition } from '../src/contract/saved-task-input';
import { startStack, startWorkerOn, taskInput, type Stack } from './helpers/stack';

let stack: Stack;
let saved: SavedTasks;
before(async () => {
  stack = await startStack();
  saved = new SavedTasks(stack.env.client, stack.taskQueue);
});
after(async () => {
  await stack?.stop();
});

const END_WITHIN_MS = 60_000;

/** How the workflow ended, within a minute: its result or its failure. A workflow still open then fails the test. */
async function ending(handle: WorkflowHandle): Promise<{ result?: unknown; failure?: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const open = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`workflow ${handle.workflowId} still open after ${END_WITHIN_MS} ms`)),
      END_WITHIN_MS,
    );
  });
  try {
    return await Promise.race([
      handle.result().then(
        (result: unknown) => ({ result }),
        (failure: unknown) => ({ failure }),
      ),
      open,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The failure's `type`, asserting the workflow failed with an ApplicationFailure. */
async function failureTypeOf(handle: WorkflowHandle): Promise<string | undefined> {
  const { result, failure } = await ending(handle);
  assert.ok(failure, `expected the workflow to fail, it completed with ${JSON.stringify(result)}`);
  assert.ok(failure instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${failure}`);
  assert.ok(failure.cause instanceof ApplicationFailure, `expected an ApplicationFailure, got ${failure.cause}`);
  return failure.cause.type ?? undefined;
}

/** Requests the emulator received that name this execution ID (a poll, a stop, an append, results). */
const requestsFor = (executionId: string) =>
  stack.emulator.requests.filter((r) => r.path.includes(executionId)).map((r) => `${r.method} ${r.path}`);
/** Creates whose instructions carry this text. */
const createsWith = (text: string) =>
  stack.emulator.requests.filter(
    (r) => r.method === 'POST' && r.path === '/tasks' && JSON.stringify(r.body ?? '').includes(text),
  ).length;

/** Starts with a raw client, the way a caller that skips BrowserTasks' checks would. */
function rawStart(workflow: string, args: unknown[], taskQueue = stack.taskQueue): Promise<WorkflowHandle> {
  return stack.env.client.workflow.start(workflow, { taskQueue, workflowId: `raw-${workflow}-${randomUUID()}`, args });
}

/** A start that should have been refused but went through: end what it started, then fail. */
async function refusedStart(start: Promise<WorkflowHandle>, what: string): Promise<void> {
  const outcome = await start.then(
    (handle) => handle,
    (err: unknown) => err,
  );
  if (outcome instanceof InvalidInputError) return;
  if (outcome && typeof (outcome as WorkflowHandle).terminate === 'function') {
    await (outcome as WorkflowHandle)
      .terminate('test cleanup: this start should have been refused')
      .catch(() => undefined);
    assert.fail(`${what} was not refused: it started workflow ${(outcome as WorkflowHandle).workflowId}`);
  }
  assert.fail(`${what}: expected InvalidInputError, got ${outcome}`);
}

describe('browserTask trusts only its own state', () => {
  test('a raw start with a second argument (continue-as-new state) fails InvalidInput and touches nothing', async () => {
    const executionId = 'exec_0123456789abcdef';
    const marker = 'started with a forged second argument';
    const handle = await rawStart('browserTask', [
      taskInput({ instructions: [{ action: marker }] }),
      { executionId, status: 'running', pending: [], startedAtMs: Date.now(), completeRequested: false },
    ]);
    assert.equal(await failureTypeOf(handle), 'InvalidInput');
    assert.deepEqual(requestsFor(executionId), [], 'no poll, stop or append for the execution ID it was handed');
    assert.equal(createsWith(marker), 0, 'nothing created either');
  });

  test('BrowserTaskInput has no `resume` field', () => {
    // The type callers build their input from, as the package exports it (lib/src/index.d.ts).
    const declarations = require.resolve('../src/index').replace(/\.js$/, '.d.ts');
    const program = ts.createProgram([declarations], { noEmit: true, skipLibCheck: true, strict: true });
    const checker = program.getTypeChecker();
    const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(declarations)!)!;
    const exported = checker.getExportsOfModule(moduleSymbol).find((symbol) => symbol.name === 'BrowserTaskInput');
    assert.ok(exported, 'BrowserTaskInput is exported');
    const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const fields = checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(target)).map((p) => p.name);
    assert.ok(fields.includes('instructions'), `read the right type: ${fields.join(', ')}`);
    assert.ok(!fields.includes('resume'), `BrowserTaskInput still has resume: ${fields.join(', ')}`);
  });

  test('a raw start whose input carries `resume` never touches the execution ID it names', async () => {
    const executionId = 'exec_fedcba9876543210';
    const handle = await rawStart('browserTask', [
      {
        ...taskInput({ instructions: [{ action: 'started with a forged resume field' }] }),
        resume: { executionId, status: 'running', pending: [], startedAtMs: Date.now(), completeRequested: false },
      },
    ]);
    // Ignored (the task is created and runs) or refused (InvalidInput): either way, not trusted.
    const { failure } = await ending(handle);
    assert.deepEqual(requestsFor(executionId), [], 'no poll, stop or append for the execution ID the input named');
    if (failure) {
      assert.ok(
        failure instanceof WorkflowFailedError && failure.cause instanceof ApplicationFailure,
        `unexpected failure ${failure}`,
      );
      assert.equal(failure.cause.type, 'InvalidInput', `failed ${failure.cause.type}: ${failure.cause.message}`);
    }
  });

  test('polling.initialIntervalMs: 100 is refused by BrowserTasks and by the workflow, before anything is sent', async () => {
    const marker = 'polled every 100 ms';
    const input = taskInput({
      instructions: [{ action: marker }],
      polling: { initialIntervalMs: 100, maxIntervalMs: 1_000, heartbeatTimeoutMs: 5_000 },
    });
    await refusedStart(stack.tasks.start(input), 'tasks.start with polling.initialIntervalMs 100');
    const handle = await rawStart('browserTask', [input]);
    assert.equal(await failureTypeOf(handle), 'InvalidInput');
    assert.equal(createsWith(marker), 0, 'nothing created');
  });
});

describe('saved-task names "." and ".." are refused', () => {
  const savedTaskRequests = () =>
    stack.emulator.requests.filter((r) => r.path.startsWith('/saved_tasks')).map((r) => `${r.method} ${r.path}`);
  const definition = (name: string): SavedTaskDefinition => ({
    name,
    instructions: [{ action: 'Open https://example.com' }],
    project: 'test-project',
    geoLocation: { country: 'US' },
  });

  for (const name of ['.', '..']) {
    test(`"${name}": SavedTasks get/create/run throw InvalidInputError, the workflows fail InvalidInput, nothing reaches BrowserAI`, async () => {
      const before = savedTaskRequests().length;
      const creates = stack.emulator.count('POST', /^\/tasks$/);
      const problems: string[] = [];
      const refused = async (what: string, call: () => Promise<unknown>) => {
        const outcome = await call().then(
          (value) => value,
          (err: unknown) => err,
        );
        if (outcome instanceof InvalidInputError) return;
        if (outcome && typeof (outcome as WorkflowHandle).terminate === 'function') {
          await (outcome as WorkflowHandle).terminate('test cleanup').catch(() => undefined);
          problems.push(
            `${what}: expected InvalidInputError, it started workflow ${(outcome as WorkflowHandle).workflowId}`,
          );
          return;
        }
        problems.push(
          `${what}: expected InvalidInputError, got ${outcome instanceof Error ? `${outcome.name}: ${outcome.message}` : JSON.stringify(outcome)}`,
        );
      };
      await refused('SavedTasks.get', () => saved.get(name));
      await refused('SavedTasks.create', () => saved.create(definition(name)));
      await refused('SavedTasks.run', () => saved.run(name));
      for (const [workflow, args] of [
        ['savedTaskGet', [name]],
        ['savedTaskCreate', [definition(name)]],
        ['runSavedTask', [{ name }]],
      ] as const) {
        const handle = await rawStart(workflow, [...args]);
        const type = await failureTypeOf(handle).catch(
          (err: unknown) => `not a failure: ${err instanceof Error ? err.message : err}`,
        );
        if (type !== 'InvalidInput') problems.push(`raw ${workflow}: expected InvalidInput, got ${type}`);
      }
      assert.deepEqual(problems, []);
      assert.deepEqual(savedTaskRequests().slice(before), [], 'no saved-task request reached BrowserAI');
      assert.equal(stack.emulator.count('POST', /^\/tasks$/), creates, 'no task created');
    });
  }
});

describe('cancel before the first workflow task', () => {
  test('a workflow cancelled before any worker picked it up ends cancelled and creates nothing', async () => {
    const taskQueue = `no-worker-yet-${randomUUID()}`;
    const tasks = new BrowserTasks(stack.env.client, taskQueue);
    const marker = 'cancelled before any worker saw it';
    const creates = stack.emulator.count('POST', /^\/tasks$/);
    const stops = stack.emulator.count('POST', /^\/tasks\/[^/]+\/command$/);
    const handle = await tasks.start(taskInput({ instructions: [{ action: marker }] }));
    await handle.cancel();
    const late = await startWorkerOn(stack, taskQueue);
    try {
      const { result, failure } = await ending(handle);
      assert.ok(failure, `expected the workflow to end cancelled, it completed with ${JSON.stringify(result)}`);
      assert.ok(
        failure instanceof WorkflowFailedError && failure.cause instanceof CancelledFailure,
        `expected a cancellation, got ${failure}`,
      );
    } finally {
      await late.stop();
    }
    assert.equal(createsWith(marker), 0, 'the cancelled workflow created a task');
    assert.equal(stack.emulator.count('POST', /^\/tasks$/) - creates, 0, 'no POST /tasks at all');
    assert.equal(stack.emulator.count('POST', /^\/tasks\/[^/]+\/command$/) - stops, 0, 'and so nothing to stop');
  });
});

describe('a message a caller in another language may send', () => {
  test('null or bare-value arguments are dropped or refused, never wedge the workflow; the code sent next is typed once', async () => {
    const handle = await stack.tasks.start(taskInput({ instructions: [{ action: 'Log in [needs-code]' }] }));
    const request = await stack.tasks.nextInputRequest(handle.workflowId);
    assert.equal(request.kind, 'input-requested');
    // A nil pointer from Go, None from Python, a bare string: each would have failed the workflow
    // task over and over when the handler destructured it.
    for (const signal of ['appendInstructions', 'replaceInstructions', 'submitCode']) {
      for (const argument of [null, 'oops', 42]) await handle.signal(signal, argument);
    }
    for (const argument of [null, 'oops']) {
      await assert.rejects(
        handle.executeUpdate('addInstructions', { args: [argument] }),
        (err: unknown) =>
          err instanceof WorkflowUpdateFailedError &&
          err.cause instanceof ApplicationFailure &&
          err.cause.type === 'InvalidInput',
      );
    }
    const stillWaiting = await handle.executeUpdate('nextInputRequest', { args: [null] });
    assert.deepEqual((stillWaiting as { kind: string }).kind, 'input-requested');
    await stack.tasks.submitCode(handle.workflowId, '482913');
    const { result, failure } = await ending(handle);
    assert.equal(failure, undefined, `the workflow failed: ${failure}`);
    assert.equal((result as { status: string }).status, 'finalized');
    const executionId = (result as { executionId: string }).executionId;
    const appends = stack.emulator.requests.filter(
      (r) => r.method === 'POST' && r.path === `/tasks/${executionId}/instructions`,
    );
    assert.equal(appends.length, 1, 'one append: the code');
  });
});
