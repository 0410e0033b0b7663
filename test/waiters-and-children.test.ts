// What ordinary use does to a task's children and waiters: a workflow ID used again after its
// first workflow closed, a workflow ID near the server's length limit, and callers that stop
// waiting for the next input request without telling anyone (a Ctrl-C, a restarted service, a
// client timeout). Real workers, a real dev server, the emulator over HTTP.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../src/contract/errors';
import { nextInputRequestUpdate, type InputRequestWait } from '../src/contract/messages';
import { WebhookReceiver } from '../dev/webhook-receiver';
import { ending, eventually, startStack, taskInput, type Stack } from './helpers/stack';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

let stack: Stack;
let receiver: WebhookReceiver;
before(async () => {
  receiver = await WebhookReceiver.start([SECRET]);
  stack = await startStack({
    // A code is taken at once: these tests are about the waits, not about BrowserAI's lag.
    emulator: { awaitingLagMs: 0 },
    codeLoop: { webhooks: { url: receiver.url, secrets: [SECRET], timeoutMs: 1_000 } },
  });
});
after(async () => {
  await stack?.stop();
  await receiver?.close();
});

/** The task.finished events delivered for one workflow ID, every run of it. */
const finishedOf = (workflowId: string) =>
  receiver.received.filter(
    (d) => d.body.type === 'task.finished' && d.body.data.workflowId === workflowId && d.answered === 200,
  );

/** The workflow IDs of the children a run started (its StartChildWorkflowExecutionInitiated events). */
async function childIds(workflowId: string, runId: string): Promise<string[]> {
  const history = await stack.env.client.workflow.getHandle(workflowId, runId).fetchHistory();
  return (history.events ?? []).flatMap((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? []);
}

describe('webhook delivery children', () => {
  test('a workflow ID used again after its first workflow closed gets its own task.finished', async () => {
    const workflowId = `reused-${randomUUID()}`;
    // Temporal's default reuse policy (what a Python or Go caller, or a retrying parent, gets).
    const start = () =>
      stack.env.client.workflow.start('browserTask', {
        workflowId,
        taskQueue: stack.taskQueue,
        args: [quickTask({ webhook: { events: ['task.finished'] } })],
      });
    const first = await start();
    const firstResult = await first.result();
    await eventually('the first run’s task.finished', () => finishedOf(workflowId).length === 1);
    const second = await start();
    const secondResult = await second.result();
    assert.notEqual(secondResult.executionId, firstResult.executionId);
    const delivered = await eventually('the second run’s task.finished', () =>
      finishedOf(workflowId).find(
        (d) => d.body.type === 'task.finished' && d.body.data.executionId === secondResult.executionId,
      ),
    );
    assert.notEqual(delivered.id, finishedOf(workflowId)[0]!.id, 'a webhook-id of its own');
  });

  test('a workflow ID near the server’s 1,000-character limit still ends, and its child’s ID is bounded', async () => {
    const workflowId = `long-${randomUUID()}-`.padEnd(995, 'x');
    const handle = await stack.tasks.start(quickTask({ webhook: { events: ['task.finished'] } }), { workflowId });
    const { result } = await ending(handle, 20_000, 'a task with a 995-character workflow ID');
    assert.equal(result?.status, 'finalized');
    await eventually('its task.finished', () => finishedOf(workflowId).length === 1);
    const [child] = await childIds(workflowId, handle.firstExecutionRunId);
    assert.ok(child !== undefined && child.length <= 255, `the child's ID is ${child?.length} characters`);
    assert.ok(child.startsWith(workflowId.slice(0, 100)), 'it starts with the parent’s workflow ID, cut');
  });
});

/** How many nextInputRequest updates the workflow has accepted so far (each one held a slot until answered). */
async function acceptedWaits(workflowId: string): Promise<number> {
  const history = await stack.env.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).filter(
    (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'nextInputRequest',
  ).length;
}

/** A task that polls often: these tests wait for its moves. */
const quickTask = (overrides: Parameters<typeof taskInput>[0] = {}) =>
  taskInput({ polling: { initialIntervalMs: 250, maxIntervalMs: 250, heartbeatTimeoutMs: 5_000 }, ...overrides });

/** A task waiting for a code, and its first request. */
async function waitingTask() {
  const handle = await stack.tasks.start(quickTask({ instructions: [{ action: 'Log in [needs-code]' }] }));
  const first = await stack.tasks.nextInputRequest(handle.workflowId);
  assert.ok(first.kind === 'input-requested');
  return { handle, after: first.request.sequence };
}

/**
 * Waits sent as a caller in another language sends them (each with an update ID of its own) and
 * then left alone. Resolves once each one waits or was refused: how many wait, the refusals'
 * types, and the answers to come.
 */
async function abandonedWaits(workflowId: string, count: number, message: object) {
  const raw = stack.env.client.workflow.getHandle(workflowId);
  const before = await acceptedWaits(workflowId);
  const refusals: (string | undefined)[] = [];
  const answers = Array.from({ length: count }, () => {
    const answer = raw.executeUpdate(nextInputRequestUpdate, { args: [message] });
    answer.catch((err: unknown) =>
      refusals.push(
        err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure
          ? (err.cause.type ?? undefined)
          : String(err),
      ),
    );
    return answer;
  });
  const { accepted } = await eventually(`${count} waits accepted or refused`, async () => {
    const accepted = (await acceptedWaits(workflowId)) - before;
    return accepted + refusals.length === count && { accepted };
  });
  return { accepted, refusals, answers };
}

describe('callers waiting for the next input request', () => {
  test('eleven callers who went away leave room for addInstructions: waiters past five are refused TooManyWaiters', async () => {
    const { handle, after } = await waitingTask();
    const waits = await abandonedWaits(handle.workflowId, 11, { after });
    assert.equal(waits.accepted, 5, 'five wait');
    assert.deepEqual(waits.refusals, Array(6).fill(FailureType.TooManyWaiters));
    const answer = await stack.tasks.addInstructions(handle.workflowId, [{ action: 'Scroll to the login form' }]);
    assert.ok(answer.executionId);
    await stack.tasks.submitCode(handle.workflowId, '482913');
    assert.equal((await handle.result()).status, 'finalized');
  });

  test('callers asking again after the same request join one update instead of holding one each', async () => {
    const { handle, after } = await waitingTask();
    // Seven at once: more than a task lets wait, unless they share one update.
    const waits = Array.from({ length: 7 }, () => stack.tasks.nextInputRequest(handle.workflowId, { after }));
    await eventually('the shared wait is open', async () => (await acceptedWaits(handle.workflowId)) === 2);
    await stack.tasks.submitCode(handle.workflowId, '482913');
    const answers = await Promise.all(waits);
    assert.ok(answers.every((a) => a.kind === 'finished'));
    assert.equal(await acceptedWaits(handle.workflowId), 2, 'the first wait, and one shared by the seven');
  });

  test('waits nobody reads answer "continued" after waitMs, and their room is free again', async () => {
    const { handle, after } = await waitingTask();
    const started = Date.now();
    const waiting = await abandonedWaits(handle.workflowId, 5, { after, waitMs: 2_000 });
    assert.equal(waiting.accepted, 5);
    assert.deepEqual((await abandonedWaits(handle.workflowId, 1, { after })).refusals, [FailureType.TooManyWaiters]);
    const answers: InputRequestWait[] = await Promise.all(waiting.answers);
    assert.deepEqual(answers, Array(5).fill({ kind: 'continued' }));
    assert.ok(Date.now() - started < 6_000, `answered after ${Date.now() - started} ms`);
    assert.equal((await abandonedWaits(handle.workflowId, 1, { after, waitMs: 2_000 })).accepted, 1, 'room again');
    await stack.tasks.submitCode(handle.workflowId, '482913');
    assert.equal((await handle.result()).status, 'finalized');
  });
});
