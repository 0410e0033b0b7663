// What ordinary use does to a task's children and waiters: a workflow ID used again after its
// first workflow closed, a workflow ID near the server's length limit, and callers that stop
// waiting for the next input request without telling anyone (a Ctrl-C, a restarted service, a
// client timeout). Real workers, a real dev server, the emulator over HTTP.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { WebhookReceiver } from '../dev/webhook-receiver';
import { ending, eventually, startStack, taskInput, type Stack } from './helpers/stack';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

let stack: Stack;
let receiver: WebhookReceiver;
before(async () => {
  receiver = await WebhookReceiver.start([SECRET]);
  stack = await startStack({ codeLoop: { webhooks: { url: receiver.url, secrets: [SECRET], timeoutMs: 1_000 } } });
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
        args: [taskInput({ webhook: { events: ['task.finished'] } })],
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
    const handle = await stack.tasks.start(taskInput({ webhook: { events: ['task.finished'] } }), { workflowId });
    const { result } = await ending(handle, 20_000, 'a task with a 995-character workflow ID');
    assert.equal(result?.status, 'finalized');
    await eventually('its task.finished', () => finishedOf(workflowId).length === 1);
    const [child] = await childIds(workflowId, handle.firstExecutionRunId);
    assert.ok(child !== undefined && child.length <= 255, `the child's ID is ${child?.length} characters`);
    assert.ok(child.startsWith(workflowId.slice(0, 100)), 'it starts with the parent’s workflow ID, cut');
  });
});
