// A worker dies (SIGKILL) or is shut down (SIGTERM) in the middle of a task. The real worker
// entry point runs in a child process; another one takes over. The task is created once,
// no stop is sent, and the workflow completes. The worker goes away while it polls, while a
// create is on the wire, while a one-time code is on the wire, and in the middle of a burst of
// creates (a deploy): a send on the wire is never cut by a graceful shutdown, and a killed one
// is never repeated under at-most-once delivery.
// Slow: seven worker processes started and stopped one after another, each takeover waited for.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { after, before, beforeEach, test } from 'node:test';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { BrowserAIEmulator, emulatorOptionsFromEnv } from '../src/emulator';
import { BrowserTasks } from '../src/starters/tasks';
import type { BrowserTaskResult } from '../src/contract/input';
import { stateQuery } from '../src/contract/messages';
import { eventually, startTemporal, storedRuns, taskInput } from './helpers/stack';
import { prebuiltBundleEnv } from './helpers/temporal';

let env: TestWorkflowEnvironment;
let emulator: BrowserAIEmulator;
const children = new Set<ChildProcess>();

before(async () => {
  [env, emulator] = await Promise.all([
    startTemporal(),
    BrowserAIEmulator.start({ queueMs: 100, ...emulatorOptionsFromEnv(process.env) }),
  ]);
});
beforeEach(() => {
  emulator.clearFaults();
  emulator.resetRequests();
});
after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await emulator?.close();
  await env?.teardown();
});

async function startWorkerProcess(taskQueue: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [require.resolve('../src/worker')], {
    env: {
      ...process.env,
      ...prebuiltBundleEnv(),
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      BROWSERAI_BASE_URL: emulator.baseUrl,
      BROWSERAI_API_TOKEN: emulator.apiToken,
      WORKER_SHUTDOWN_GRACE_MS: '1000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (output.includes('browserai-temporal worker: task queue')) resolve();
    });
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`worker exited early (${code}): ${output}`)));
  });
  await ready;
  return child;
}

for (const [signal, what] of [
  ['SIGKILL', 'killed'],
  ['SIGTERM', 'shut down gracefully'],
] as const) {
  test(`a worker ${what} mid-task: another worker finishes it with one create and no stop`, async () => {
    const taskQueue = `restart-${randomUUID()}`;
    const tasks = new BrowserTasks(env.client, taskQueue);
    const first = await startWorkerProcess(taskQueue);
    const handle = await tasks.start(
      taskInput({
        instructions: [{ action: 'Slow crawl [duration=6s]' }],
        polling: { initialIntervalMs: 250, maxIntervalMs: 1_000, heartbeatTimeoutMs: 2_000 },
      }),
    );
    const executionId = await eventually('polling started', () => {
      const poll = emulator.requests.find((r) => r.method === 'GET' && /^\/tasks\/[^/]+$/.test(r.path));
      return poll?.path.split('/')[2];
    });
    first.kill(signal);
    await once(first, 'exit');
    await startWorkerProcess(taskQueue);
    const result = await handle.result();
    assert.equal(result.status, 'finalized');
    assert.equal(result.executionId, executionId);
    assert.equal(emulator.count('POST', /^\/tasks$/), 1, 'one create');
    assert.equal(emulator.count('POST', new RegExp(`^/tasks/${executionId}/command$`)), 0, 'no stop');
  });
}

const WORKER_EXIT_MS = 30_000;
const creates = () => emulator.count('POST', /^\/tasks$/);
const stops = () => emulator.count('POST', /^\/tasks\/[^/]+\/command$/);
/** Requests the emulator has received and not answered yet: on the wire. */
const onTheWire = (method: string, path: RegExp) =>
  emulator.requests.filter((r) => r.method === method && path.test(r.path) && r.status === 0);

/** Signals the worker process and waits until it has exited; a worker that never exits fails the test. */
async function stopWorkerProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit');
  child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the worker did not exit within ${WORKER_EXIT_MS} ms of ${signal}`)),
      WORKER_EXIT_MS,
    );
  });
  try {
    await Promise.race([exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The workflow's end within `ms`: its result, or the failure it ended with; a workflow still open then fails the test. */
async function endWithin<T>(handle: WorkflowHandle, ms: number): Promise<{ result?: T; failure?: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the workflow was still open ${ms} ms after the worker died`)), ms);
  });
  try {
    return await Promise.race([
      handle.result().then(
        (result: T) => ({ result }),
        (failure: unknown) => ({ failure }),
      ),
      hung,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Activity attempts that failed, across every run: `activity: type: message`. A send that a
 * shutdown cut short shows here even when the workflow carried on (a failed append is logged,
 * not fatal), so "completed" alone would not prove the send finished.
 */
async function failedAttempts(workflowId: string): Promise<string[]> {
  const runs = await storedRuns(env.client, workflowId);
  return runs.flatMap((run) => {
    const events = run.history.events ?? [];
    const typeOf = (scheduledId: unknown) =>
      events.find((e) => String(e.eventId) === String(scheduledId))?.activityTaskScheduledEventAttributes?.activityType
        ?.name ?? '?';
    return events.flatMap((e) => {
      const failed = e.activityTaskFailedEventAttributes;
      if (failed)
        return [
          `${typeOf(failed.scheduledEventId)}: ${failed.failure?.applicationFailureInfo?.type ?? ''}: ${failed.failure?.message ?? ''}`,
        ];
      const timedOut = e.activityTaskTimedOutEventAttributes;
      if (timedOut) return [`${typeOf(timedOut.scheduledEventId)}: timed out: ${timedOut.failure?.message ?? ''}`];
      // A retried attempt's failure is only in the pending activity; the last one is in ActivityTaskStarted.
      const started = e.activityTaskStartedEventAttributes;
      if (started?.lastFailure)
        return [
          `${typeOf(started.scheduledEventId)} (attempt ${started.attempt}): ${started.lastFailure.message ?? ''}`,
        ];
      return [];
    });
  });
}

/** One line: the failure's type and message, for assertion messages. */
function oneLine(failure: unknown): string {
  const cause = failure instanceof WorkflowFailedError ? failure.cause : undefined;
  if (cause instanceof ApplicationFailure) return `${cause.type}: ${cause.message}`;
  return String(cause ?? failure);
}

function failureType(failure: unknown): string | undefined {
  assert.ok(failure instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${failure}`);
  assert.ok(failure.cause instanceof ApplicationFailure, `expected an ApplicationFailure cause, got ${failure.cause}`);
  return failure.cause.type ?? undefined;
}

/** Starts a `[needs-code]` task and waits until it asks for the code: the create and the first poll are behind it. */
async function startAwaitingCode(tasks: BrowserTasks): Promise<{ handle: WorkflowHandle; executionId: string }> {
  const handle = await tasks.start(
    taskInput({
      instructions: [{ action: 'Log in to the portal [needs-code]' }],
      polling: { initialIntervalMs: 250, maxIntervalMs: 1_000, heartbeatTimeoutMs: 2_000 },
    }),
  );
  const state = await eventually('awaiting the code', async () => {
    const s = await handle.query(stateQuery);
    return s.awaitingInput && s.executionId ? s : undefined;
  });
  return { handle, executionId: state.executionId! };
}

/**
 * A worker and a task whose create is delayed so it is on the wire now: longer than the worker's
 * shutdown grace (1 s), so a shutdown that cut the request would leave it ambiguous.
 */
async function createOnTheWire() {
  const taskQueue = `restart-${randomUUID()}`;
  const tasks = new BrowserTasks(env.client, taskQueue);
  const first = await startWorkerProcess(taskQueue);
  emulator.inject({ method: 'POST', path: /^\/tasks$/, delayMs: 3_000 });
  const handle = await tasks.start(
    taskInput({ polling: { initialIntervalMs: 250, maxIntervalMs: 1_000, heartbeatTimeoutMs: 2_000 } }),
  );
  await eventually('the create on the wire', () => onTheWire('POST', /^\/tasks$/).length === 1);
  return { taskQueue, first, handle };
}

test(
  'SIGTERM while the create is on the wire: the create finishes, and the next worker completes the task with one create',
  { timeout: 120_000 },
  async () => {
    const { taskQueue, first, handle } = await createOnTheWire();
    await stopWorkerProcess(first, 'SIGTERM');
    await startWorkerProcess(taskQueue);
    const { result, failure } = await endWithin<BrowserTaskResult>(handle, 90_000);
    assert.ok(failure === undefined, `the workflow failed: ${oneLine(failure)}`);
    assert.equal(result!.status, 'finalized');
    assert.equal(creates(), 1, 'one create');
    assert.equal(
      emulator.requests.find((r) => r.method === 'POST' && r.path === '/tasks')!.status,
      200,
      'the create was answered, not cut',
    );
    assert.deepEqual(
      await failedAttempts(handle.workflowId),
      [],
      'no attempt failed: the create finished in the first one',
    );
    assert.equal(stops(), 0, 'no stop');
  },
);

/** A worker, an OTP task awaiting its code, and the code's append delayed so it is on the wire now. */
async function codeOnTheWire() {
  const taskQueue = `restart-${randomUUID()}`;
  const tasks = new BrowserTasks(env.client, taskQueue);
  const first = await startWorkerProcess(taskQueue);
  const { handle, executionId } = await startAwaitingCode(tasks);
  const appendPath = new RegExp(`^/tasks/${executionId}/instructions$`);
  emulator.inject({ method: 'POST', path: appendPath, delayMs: 3_000 });
  await tasks.submitCode(handle.workflowId, '482913');
  await eventually('the code on the wire', () => onTheWire('POST', appendPath).length === 1);
  return { taskQueue, first, handle, executionId };
}

test(
  'SIGTERM while the one-time code is on the wire: the append finishes, and the code is typed exactly once',
  { timeout: 120_000 },
  async () => {
    const { taskQueue, first, handle, executionId } = await codeOnTheWire();
    await stopWorkerProcess(first, 'SIGTERM');
    await startWorkerProcess(taskQueue);
    const { result, failure } = await endWithin<BrowserTaskResult>(handle, 90_000);
    assert.ok(failure === undefined, `the workflow failed: ${oneLine(failure)}`);
    assert.equal(result!.status, 'finalized');
    assert.equal(result!.executionId, executionId);
    assert.deepEqual(emulator.task(executionId)!.codesReceived, ['482913'], 'the code typed exactly once');
    // The append itself finished: not cut by the shutdown and then found ambiguous (which the
    // workflow survives, since the task moved on anyway, but which says the send was aborted).
    assert.equal(result!.error, null, `the workflow recorded an error: ${result!.error}`);
    assert.deepEqual(
      await failedAttempts(handle.workflowId),
      [],
      'no attempt failed: the append finished in the first one',
    );
    assert.equal(creates(), 1, 'one create');
    assert.equal(stops(), 0, 'no stop');
  },
);

test(
  'SIGKILL while the create is on the wire: at-most-once fails AmbiguousRequest and never creates a second task',
  { timeout: 180_000 },
  async () => {
    const { taskQueue, first, handle } = await createOnTheWire();
    await stopWorkerProcess(first, 'SIGKILL');
    await startWorkerProcess(taskQueue);
    const { result, failure } = await endWithin(handle, 150_000);
    assert.equal(result, undefined, 'the workflow cannot know whether its task was created: it must not complete');
    assert.equal(failureType(failure), 'AmbiguousRequest');
    assert.equal(creates(), 1, 'exactly one create reached BrowserAI');
  },
);

test(
  'SIGKILL while the one-time code is on the wire: the code is typed at most once and the workflow ends',
  { timeout: 180_000 },
  async (t) => {
    const { taskQueue, first, handle, executionId } = await codeOnTheWire();
    await stopWorkerProcess(first, 'SIGKILL');
    await startWorkerProcess(taskQueue);
    const { result, failure } = await endWithin<BrowserTaskResult>(handle, 150_000);
    t.diagnostic(
      `ended ${failure === undefined ? `completed (${result!.status})` : `failed ${failureType(failure)}`}; code typed ${emulator.task(executionId)!.codesReceived.length} time(s)`,
    );
    if (failure !== undefined)
      assert.equal(failureType(failure), 'AmbiguousRequest', `the workflow failed: ${oneLine(failure)}`);
    else assert.equal(result!.executionId, executionId);
    assert.ok(
      emulator.task(executionId)!.codesReceived.length <= 1,
      `the code typed ${emulator.task(executionId)!.codesReceived.length} times`,
    );
    assert.equal(creates(), 1, 'one create');
  },
);

test(
  'a deploy during a burst: SIGTERM while 20 creates are on the wire, and every workflow completes with one create each',
  { timeout: 180_000 },
  async () => {
    const taskQueue = `restart-${randomUUID()}`;
    const tasks = new BrowserTasks(env.client, taskQueue);
    const first = await startWorkerProcess(taskQueue);
    emulator.inject({ method: 'POST', path: /^\/tasks$/, delayMs: 1_500, times: 20 });
    const handles = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        tasks.start(
          taskInput({
            instructions: [{ action: `Burst task ${i}` }],
            polling: { initialIntervalMs: 250, maxIntervalMs: 1_000, heartbeatTimeoutMs: 2_000 },
          }),
        ),
      ),
    );
    // Shut down while creates are on the wire: as many as arrive within half a second of the first.
    const firstOnWire = await eventually('creates on the wire', () => onTheWire('POST', /^\/tasks$/)[0]);
    await eventually(
      'the burst on the wire',
      () => onTheWire('POST', /^\/tasks$/).length === 20 || Date.now() - firstOnWire.at > 500,
    );
    const inFlight = onTheWire('POST', /^\/tasks$/).length;
    assert.ok(inFlight > 0, 'creates were on the wire at the shutdown');
    await stopWorkerProcess(first, 'SIGTERM');
    await startWorkerProcess(taskQueue);
    const ends = await Promise.all(handles.map((handle) => endWithin<BrowserTaskResult>(handle, 120_000)));
    const failed = ends.flatMap((end, i) =>
      end.failure === undefined ? [] : [`${handles[i]!.workflowId}: ${oneLine(end.failure)}`],
    );
    assert.ok(
      failed.length === 0,
      `${failed.length} of 20 workflows failed (${inFlight} creates were on the wire at SIGTERM); first: ${failed[0]}`,
    );
    for (const end of ends) assert.equal(end.result!.status, 'finalized');
    const cut = (await Promise.all(handles.map((h) => failedAttempts(h.workflowId)))).flat();
    assert.deepEqual(cut, [], 'no create attempt failed');
    assert.equal(creates(), 20, 'exactly 20 creates');
    assert.equal(stops(), 0, 'no stop');
  },
);
