// Slow: waits for TOTP time steps (up to 20 s), the secrets' own periods; the tests run side by side.
// The one-time-code loop across time: a TOTP code waited for across a worker's shutdown, a 10-s
// period, a workflow terminated during the wait, and a task that takes a code and later shows a
// second code form. Real workers, a real dev server, the emulator over HTTP. The TOTP waits are
// the secrets' own (10-s and 20-s periods, the shortest a secret may have and one whose margin
// is the full 10 s); a refused first code makes the wait for the next step certain. The tests
// run side by side from the start.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import type { TotpSecrets } from '../src/activities/totp';
import type { EmulatorTotpSecret } from '../src/emulator';
import { BrowserTasks } from '../src/starters/tasks';
import type { InputRequest } from '../src/contract/messages';
import type { BrowserTaskResult } from '../src/contract/input';
import { ending, startStack, startWorkerOn, taskInput, type Stack } from './helpers/stack';

const SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
/** 20-s steps: a code is typed with 10 s left, so a request late in a step waits up to 10 s. */
const SLOW_MS = 20_000;
/** 10-s steps, the shortest period a secret may have. */
const FAST_MS = 10_000;
const emulatorSecrets: Record<string, EmulatorTotpSecret> = {
  slow: { secret: SECRET, period: SLOW_MS / 1_000 },
  fast: { secret: SECRET, period: FAST_MS / 1_000 },
};
const workerSecrets: TotpSecrets = {
  SLOW: { secret: SECRET, period: SLOW_MS / 1_000 },
  FAST: { secret: SECRET, period: FAST_MS / 1_000 },
};

let stack: Stack;
/** The tests that need no particular moment run from the start, alongside the wait for one. */
let fastPeriod: Promise<BrowserTaskResult>;
let twoForms: Promise<BrowserTaskResult>;
let duringWait: Promise<WaitInProgress>;
const workers: Array<{ stop(): Promise<void> }> = [];
before(async () => {
  stack = await startStack({ emulator: { totpSecrets: emulatorSecrets }, codeLoop: { totpSecrets: workerSecrets } });
  fastPeriod = typeTenSecondCode();
  twoForms = answerTwoCodeForms();
  duringWait = deployAndTerminateDuringWait();
  // Settled by their tests; never an unhandled rejection meanwhile.
  for (const running of [fastPeriod, twoForms, duringWait]) running.catch(() => undefined);
});
after(async () => {
  for (const worker of workers) await worker.stop();
  await stack?.stop();
});

const remainingIn = (periodMs: number, atMs = Date.now()) => periodMs - (atMs % periodMs);

async function openRequest(tasks: BrowserTasks, workflowId: string): Promise<InputRequest> {
  const next = await tasks.nextInputRequest(workflowId);
  assert.equal(next.kind, 'input-requested');
  return (next as { request: InputRequest }).request;
}

interface WaitInProgress {
  shutDown: { handle: WorkflowHandle; request: InputRequest };
  terminated: { request: InputRequest };
  stepEndsAtMs: number;
}

/**
 * Two tasks whose first TOTP code is refused: the second code must be of a later 20-s step, so
 * each waits for the next step to begin (7 s or more: the code was typed with 10 s or more left).
 * During that wait one task's worker is shut down (a deploy: 1-s grace, then a new worker on the
 * queue) and the other task's workflow is terminated.
 */
async function deployAndTerminateDuringWait(): Promise<WaitInProgress> {
  const queue = `totp-shutdown-${randomUUID()}`;
  const queueTasks = new BrowserTasks(stack.env.client, queue);
  const firstWorker = await startWorkerOn(stack, queue, { totpSecrets: workerSecrets });
  workers.push(firstWorker);
  const input = taskInput({
    instructions: [{ action: 'Log in [needs-totp=slow] [rejects-code]' }],
    totpSecretName: 'slow',
  });
  const [shutDownHandle, terminatedHandle] = await Promise.all([queueTasks.start(input), stack.tasks.start(input)]);
  const [shutDownRequest, terminatedRequest] = await Promise.all([
    secondRequest(queueTasks, shutDownHandle.workflowId),
    secondRequest(stack.tasks, terminatedHandle.workflowId),
  ]);
  const stepEndsAtMs = Math.min(...[shutDownRequest, terminatedRequest].map((r) => stepEndAfter(r.executionId)));
  assert.ok(stepEndsAtMs - Date.now() > 2_500, `the wait ends ${stepEndsAtMs - Date.now()} ms from now: too soon`);
  await Promise.all([firstWorker.stop(), terminatedHandle.terminate('the test ends it during the TOTP wait')]);
  assert.ok(Date.now() < stepEndsAtMs - 200, 'the shutdown ended before the wait did');
  workers.push(await startWorkerOn(stack, queue, { totpSecrets: workerSecrets }));
  return {
    shutDown: { handle: shutDownHandle, request: shutDownRequest },
    terminated: { request: terminatedRequest },
    stepEndsAtMs,
  };
}

/** The request after the refused code: refusedCodes 1, answered by the worker. */
async function secondRequest(tasks: BrowserTasks, workflowId: string): Promise<InputRequest> {
  const first = await openRequest(tasks, workflowId);
  const next = await tasks.nextInputRequest(workflowId, { after: first.sequence });
  assert.equal(next.kind, 'input-requested', JSON.stringify(next));
  const request = (next as { request: InputRequest }).request;
  assert.equal(request.refusedCodes, 1);
  return request;
}

/** When the 20-s step of the task's first (refused) code ends: no code is due before. */
function stepEndAfter(executionId: string): number {
  const typedAt = stack.emulator.task(executionId)!.codeChecks[0]!.at;
  return typedAt + remainingIn(SLOW_MS, typedAt);
}

async function typeTenSecondCode(): Promise<BrowserTaskResult> {
  const handle = await stack.tasks.start(
    taskInput({ instructions: [{ action: 'Log in [needs-totp=fast]' }], totpSecretName: 'fast' }),
  );
  const { result, failure } = await ending(handle, 25_000, 'the 10-s TOTP task');
  assert.equal(failure, undefined, String(failure));
  return result!;
}

/** A task that takes a first code, runs on, and asks for a second (a payment after a login), at maxCodeAttempts 1. */
async function answerTwoCodeForms(): Promise<BrowserTaskResult> {
  const handle = await stack.tasks.start(
    taskInput({ instructions: [{ action: 'Log in, then pay [code-forms=2]' }], maxCodeAttempts: 1 }),
  );
  const first = await openRequest(stack.tasks, handle.workflowId);
  assert.equal(first.kind, 'code');
  await stack.tasks.submitCode(handle.workflowId, '482913');
  const next = await stack.tasks.nextInputRequest(handle.workflowId, { after: first.sequence });
  assert.equal(next.kind, 'input-requested', `the task ended instead: ${JSON.stringify(next)}`);
  const second = (next as { request: InputRequest }).request;
  assert.equal(second.kind, 'code');
  assert.equal(second.refusedCodes, 0);
  assert.equal(second.attemptsLeft, 1);
  await stack.tasks.submitCode(handle.workflowId, '551177');
  const { result, failure } = await ending(handle, 20_000, 'the two-form task');
  assert.equal(failure, undefined, String(failure));
  return result!;
}

test('a secret with 10-s steps gets its code typed, in the step it was made for', async () => {
  const result = await fastPeriod;
  assert.equal(result.status, 'finalized');
  const checks = stack.emulator.task(result.executionId)!.codeChecks;
  assert.deepEqual(
    checks.map((check) => check.accepted),
    [true],
  );
  assert.ok(remainingIn(FAST_MS, checks[0]!.at) >= 4_000, 'typed with about half its step left');
});

describe('a TOTP wait in progress', () => {
  test('a worker shut down during the wait: a new worker types the code once, the task is not stopped', async () => {
    const { shutDown, stepEndsAtMs } = await duringWait;
    // Up to a 20-s step, then a new worker's start and the send: generous for a busy machine.
    const { result, failure } = await ending(shutDown.handle, 60_000, 'the TOTP task');
    assert.equal(failure, undefined, `the task failed: ${String((failure as Error | undefined)?.cause)}`);
    assert.equal(result!.status, 'finalized');
    const task = stack.emulator.task(shutDown.request.executionId)!;
    assert.deepEqual(
      task.codeChecks.map((check) => check.accepted),
      [false, true],
      'the refused code, then one more, taken',
    );
    assert.ok(task.codeChecks[1]!.at >= stepEndsAtMs - 50, 'the code of the next step');
    assert.equal(task.stopCommands, 0, 'never stopped');
  });

  test('a workflow terminated during the wait: no code is typed after it is gone', async () => {
    const { terminated, stepEndsAtMs } = await duringWait;
    await delay(Math.max(0, stepEndsAtMs - Date.now()) + 2_000);
    const task = stack.emulator.task(terminated.request.executionId)!;
    assert.equal(task.codesReceived.length, 1, 'only the code typed before the workflow was terminated');
  });
});

test('a code taken, then a second code form: not a refusal, even at maxCodeAttempts 1', async () => {
  const result = await twoForms;
  assert.equal(result.status, 'finalized');
  assert.deepEqual(
    stack.emulator.task(result.executionId)!.codeChecks.map((check) => [check.code, check.accepted]),
    [
      ['482913', true],
      ['551177', true],
    ],
  );
});
