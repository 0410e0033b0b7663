// Slow and misdirected upstreams (issue 16, sections 2 and 3): every request has a deadline for
// the whole exchange, a redirect is never followed, an answer body has a size limit, a late
// create's task gets its stop retried for the stop window, and a stop answered 404 after the
// grace period is confirmed only if the task is seen ended. Real dev server, real worker, the
// emulator over HTTP.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { BrowserAIClient, isBrowserAIError, type BrowserAIError } from '../src/browserai';
import { BrowserAIEmulator, type EmulatedTask } from '../src/emulator';
import type { BrowserTaskResult } from '../src/contract/input';
import { BrowserTasks } from '../src/starters/tasks';
import { createWorker } from '../src/create-worker';
import { eventually, startStack, taskInput, workflowBundle, type Stack } from './helpers/stack';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

const newMarker = () => `marker-${randomUUID()}`;
const pathOf = (executionId: string, rest = '') => new RegExp(`^/tasks/${executionId}${rest}$`);

function taskWith(marker: string): EmulatedTask | undefined {
  return stack.emulator.listTasks().find((task) => task.instructions.some((i) => i.action.includes(marker)));
}

async function executionIdOf(workflowId: string): Promise<string> {
  return eventually(
    'the task to be created',
    async () => (await stack.tasks.state(workflowId)).executionId ?? undefined,
  );
}

/** The typed failure the workflow ended with. */
async function failureOf(handle: WorkflowHandle): Promise<ApplicationFailure> {
  const err = await handle.result().then(
    () => assert.fail('expected the workflow to fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkflowFailedError, String(err));
  assert.ok(err.cause instanceof ApplicationFailure, String(err.cause));
  return err.cause;
}

async function errorOf(promise: Promise<unknown>): Promise<BrowserAIError> {
  const err = await promise.then(
    () => assert.fail('expected the request to fail'),
    (e: unknown) => e,
  );
  assert.ok(isBrowserAIError(err), String(err));
  return err;
}

/** The not-found grace of the test that waits it out (30 s by default). */
const NOT_FOUND_GRACE_MS = 3_000;

describe('every request has a deadline for the whole exchange', () => {
  test('an answer trickling in a byte a second fails Timeout at the deadline', { timeout: 60_000 }, async () => {
    // Breaks if the timeout were an idle one (as axios's is): the answer below never leaves the
    // socket idle for a second, and would take minutes to arrive, holding its activity slot.
    const client = new BrowserAIClient({
      apiToken: stack.emulator.apiToken,
      baseUrl: stack.emulator.baseUrl,
      timeoutMs: 2_000,
    });
    const created = await client.createTask({
      instructions: [{ action: 'look' }],
      type: 'crawler_automation',
      project: 'test-project',
      geoLocation: { country: 'US' },
    });
    stack.emulator.inject({ method: 'GET', path: pathOf(created.executionId), trickleMs: 1_000 });
    const err = await errorOf(client.getTask(created.executionId));
    assert.equal(err.kind, 'Timeout');
    assert.equal(err.mayHaveReachedServer, true);
    assert.match(err.message, /not fully answered within its 2000 ms deadline \(BROWSERAI_REQUEST_TIMEOUT_MS\)/);
  });
});

describe('redirects are refused, never followed', () => {
  test(
    'a 307 on the code append sends nothing to the other host; the append is retried and the code typed once',
    { timeout: 90_000 },
    async () => {
      // Breaks if the client followed the redirect: the one-time code would be posted to another host.
      const elsewhere = await BrowserAIEmulator.start({ apiToken: stack.emulator.apiToken });
      try {
        const marker = newMarker();
        const handle = await stack.tasks.start(
          taskInput({ instructions: [{ action: `${marker} log in [needs-code]` }] }),
        );
        const executionId = await executionIdOf(handle.workflowId);
        await eventually(
          'the code form',
          async () => (await stack.tasks.state(handle.workflowId)).status === 'awaiting',
        );
        stack.emulator.inject({
          method: 'POST',
          path: pathOf(executionId, '/instructions'),
          status: 307,
          headers: { location: `${elsewhere.baseUrl}/tasks/${executionId}/instructions` },
        });
        await stack.tasks.submitCode(handle.workflowId, '493817');
        const result: BrowserTaskResult = await handle.result();
        assert.equal(result.status, 'finalized');
        assert.deepEqual(elsewhere.requests, [], 'nothing was sent to the host the redirect named');
        assert.deepEqual(taskWith(marker)!.codesReceived, ['493817']);
      } finally {
        await elsewhere.close();
      }
    },
  );

  test('the refusal says where the redirect pointed and what to set; it counts as not sent', async () => {
    const client = new BrowserAIClient({ apiToken: stack.emulator.apiToken, baseUrl: stack.emulator.baseUrl });
    stack.emulator.inject({
      method: 'GET',
      path: /^\/saved_tasks$/,
      status: 301,
      headers: { location: 'https://moved.example/api/v1/saved_tasks?token=x' },
    });
    const err = await errorOf(client.listSavedTasks());
    assert.equal(err.kind, 'NetworkError');
    assert.equal(err.status, 301);
    assert.equal(err.mayHaveReachedServer, false);
    assert.match(err.message, /301 redirect to https:\/\/moved\.example, which is not followed/);
    assert.match(err.message, /Set BROWSERAI_BASE_URL/);
    assert.doesNotMatch(err.message, /token=x/);
  });
});

describe('answer bodies have a size limit', () => {
  test('a 2xx body over maxResponseBytes is MalformedAnswer naming the limit; an error body over it keeps its status kind', async () => {
    // Breaks if bodies were read whole whatever their size.
    const client = new BrowserAIClient({
      apiToken: stack.emulator.apiToken,
      baseUrl: stack.emulator.baseUrl,
      maxResponseBytes: 64 * 1024,
    });
    const created = await client.createTask({
      instructions: [{ action: 'read [large=200KB] [duration=100ms]' }],
      type: 'crawler_automation',
      project: 'test-project',
      geoLocation: { country: 'US' },
    });
    await eventually('the task to end', () => stack.emulator.task(created.executionId)?.status === 'finalized');
    const tooBig = await errorOf(client.getResults(created.executionId));
    assert.equal(tooBig.kind, 'MalformedAnswer');
    assert.match(tooBig.message, /answered 200 with a body over the 65536-byte limit; it was not read/);
    assert.match(tooBig.message, /BROWSERAI_MAX_RESPONSE_BYTES \(the client option maxResponseBytes\)/);
    stack.emulator.inject({
      method: 'GET',
      path: pathOf(created.executionId),
      status: 503,
      error: 'x'.repeat(100_000),
    });
    const error = await errorOf(client.getTask(created.executionId));
    assert.equal(error.kind, 'ServerError');
    assert.equal(error.apiMessage, undefined);
    assert.match(error.message, /failed with 503 \(its body, over the 65536-byte limit, was not read\)/);
  });

  test('a create answered with a body over the limit is AmbiguousRequest under at-most-once', async () => {
    // Breaks if a too-big create answer counted as not sent (a second create) or were read whole.
    const small = new BrowserAIClient({
      apiToken: stack.emulator.apiToken,
      baseUrl: stack.emulator.baseUrl,
      maxResponseBytes: 64 * 1024,
    });
    const taskQueue = `small-bodies-${randomUUID()}`;
    const worker = await createWorker({
      connection: stack.env.nativeConnection,
      namespace: stack.env.namespace ?? 'default',
      taskQueue,
      client: small,
      workflowBundle: await workflowBundle(),
      shutdownGraceTime: 1_000,
    });
    const running = worker.run();
    try {
      const marker = newMarker();
      stack.emulator.inject({
        method: 'POST',
        path: /^\/tasks$/,
        answer: { transform: (real: object) => ({ ...real, padding: 'p'.repeat(100_000) }) },
      });
      const creates = stack.emulator.count('POST', /^\/tasks$/);
      const handle = await new BrowserTasks(stack.env.client, taskQueue).start(
        taskInput({ instructions: [{ action: `${marker} crawl` }] }),
      );
      const failure = await failureOf(handle);
      assert.equal(failure.type, 'AmbiguousRequest');
      assert.match(failure.message, /over the 65536-byte limit/);
      assert.equal(stack.emulator.count('POST', /^\/tasks$/), creates + 1);
      await small.stopTask(taskWith(marker)!.executionId);
    } finally {
      worker.shutdown();
      await running.catch(() => undefined);
    }
  });
});

describe('stops', () => {
  test('a late create answer: its stop is retried until it goes through', { timeout: 90_000 }, async () => {
    // Breaks if the worker sent that task one stop only: the 503s below would leave it running.
    const marker = newMarker();
    // Answered after the attempt gave up (the stack's client waits 5 s).
    stack.emulator.inject({ method: 'POST', path: /^\/tasks$/, delayMs: 7_000 });
    stack.emulator.inject({ method: 'POST', path: /^\/tasks\/[^/]+\/command$/, status: 503, times: 3 });
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${marker} crawl [duration=120s]` }], stopRetryWindowMs: 60_000 }),
    );
    assert.equal((await failureOf(handle)).type, 'AmbiguousRequest');
    const task = await eventually(
      'the late task to be stopped',
      () => {
        const seen = taskWith(marker);
        return seen?.status === 'stopped' ? seen : undefined;
      },
      60_000,
    );
    assert.equal(task.stopCommands, 1);
    assert.ok(stack.emulator.count('POST', pathOf(task.executionId, '/command')) >= 4);
  });

  test(
    'a stop answered 404 after the grace period, with the task never seen ended, is stopConfirmed false',
    { timeout: 90_000 },
    async () => {
      // Breaks if "not found" were taken as "stopped": the task below is still running.
      const marker = newMarker();
      const handle = await stack.tasks.start(
        taskInput({
          instructions: [{ action: `${marker} crawl [duration=120s]` }],
          polling: { ...taskInput().polling, notFoundGraceMs: NOT_FOUND_GRACE_MS },
        }),
      );
      const executionId = await executionIdOf(handle.workflowId);
      const graceEnds = Date.parse(stack.emulator.task(executionId)!.createdAt) + NOT_FOUND_GRACE_MS + 1_500;
      await sleep(Math.max(0, graceEnds - Date.now()));
      for (const path of [pathOf(executionId), pathOf(executionId, '/command')]) {
        stack.emulator.inject({ path, status: 404, error: 'Task not found', times: 1_000 });
      }
      await stack.tasks.cancel(handle.workflowId);
      await handle.result().catch(() => undefined);
      const state = await stack.tasks.state(handle.workflowId);
      assert.equal(state.stopConfirmed, false);
      assert.equal(stack.emulator.task(executionId)!.status, 'running');
      stack.emulator.clearFaults();
      await new BrowserAIClient({ apiToken: stack.emulator.apiToken, baseUrl: stack.emulator.baseUrl }).stopTask(
        executionId,
      );
    },
  );
});
