// Webhooks, received by a service that verifies every signature with the Standard Webhooks library:
// signed events with the caller's reference, the same webhook-id on every retry (after 500s, after
// a worker killed mid-delivery), both secrets valid during a rotation, no secret in any body, and a
// receiver that never answers holding nothing up. Real workers, real dev server, the emulator over HTTP.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { BrowserTasks } from '../src/starters/tasks';
import { WorkerChild, workerEnvironment } from '../dev/worker-child';
import { WebhookReceiver, type ReceivedWebhook } from '../dev/webhook-receiver';
import { assertMatchesSchema } from './helpers/schemas';
import { eventually, startStack, storedHistory, taskInput, type Stack } from './helpers/stack';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const NEW_SECRET = secret();
const OLD_SECRET = secret();
const CODE = '482913';

let stack: Stack;
let receiver: WebhookReceiver;
before(async () => {
  receiver = await WebhookReceiver.start([NEW_SECRET, OLD_SECRET]);
  stack = await startStack({
    // Rotation: signed with the new secret and the old one, so a receiver that knows either verifies.
    codeLoop: { webhooks: { url: receiver.url, secrets: [NEW_SECRET, OLD_SECRET], timeoutMs: 1_000 } },
  });
});
after(async () => {
  await stack?.stop();
  await receiver?.close();
});

/** Deliveries for one workflow's events. */
const of = (workflowId: string) => receiver.received.filter((d) => d.body.data.workflowId === workflowId);

/** One webhook-id per event: every delivery of an event (type and request number) has the same id, and no id serves two events. */
function assertOneIdPerEvent(deliveries: ReceivedWebhook[]): void {
  const idOf = new Map<string, string>();
  const eventOf = new Map<string, string>();
  for (const d of deliveries) {
    const event = `${d.body.type}#${'sequence' in d.body.data ? d.body.data.sequence : ''}`;
    assert.equal(idOf.get(event) ?? d.id, d.id, `a second webhook-id for ${event}`);
    assert.equal(eventOf.get(d.id) ?? event, event, `webhook-id ${d.id} used for two events`);
    idOf.set(event, d.id);
    eventOf.set(d.id, event);
  }
}

describe('webhooks', () => {
  test('signed events with the reference; after 500s the same webhook-id and body; both rotation secrets verify; no secret in a body', async () => {
    // Each event is refused twice with a 500, then taken.
    receiver.answer = (d) => (receiver.received.filter((r) => r.id === d.id).length < 2 ? 500 : 200);
    const handle = await stack.tasks.start(
      taskInput({
        instructions: [{ action: 'Log in as ops@example.com [needs-code]' }],
        webhook: { reference: 'user:42/login' },
      }),
    );
    const requested = await eventually('input.requested is delivered', () =>
      of(handle.workflowId).find((d) => d.body.type === 'input.requested' && d.answered === 200),
    );
    assert.equal(requested.body.type, 'input.requested');
    if (requested.body.type !== 'input.requested') return;
    assert.equal(requested.body.data.sequence, 1);
    assert.equal(requested.body.data.kind, 'code');
    assert.equal(requested.body.data.reference, 'user:42/login');
    await stack.tasks.submitCode(handle.workflowId, CODE);
    const result = await handle.result();
    const finished = await eventually('task.finished is delivered', () =>
      of(handle.workflowId).find((d) => d.body.type === 'task.finished' && d.answered === 200),
    );
    assert.deepEqual(finished.body.data, {
      workflowId: handle.workflowId,
      executionId: result.executionId,
      outcome: 'completed',
      status: 'finalized',
      reference: 'user:42/login',
    });

    const deliveries = of(handle.workflowId);
    assert.deepEqual(
      deliveries.map((d) => [d.body.type, d.answered]),
      [
        ['input.requested', 500],
        ['input.requested', 500],
        ['input.requested', 200],
        ['task.finished', 500],
        ['task.finished', 500],
        ['task.finished', 200],
      ],
    );
    assertOneIdPerEvent(deliveries);
    assert.notEqual(requested.id, finished.id);
    for (const d of deliveries) {
      assertMatchesSchema('WebhookBody', JSON.parse(d.raw), `the ${d.body.type} body`);
      assert.deepEqual(d.verifiedWith, [0, 1], 'verified by the new secret and by the old one');
      assert.equal(d.raw, deliveries.find((e) => e.id === d.id)!.raw, 'every retry sends the same body');
      for (const secretText of [CODE, stack.emulator.apiToken, 'ops@example.com', NEW_SECRET, OLD_SECRET])
        assert.ok(!d.raw.includes(secretText), `a body carries ${secretText}`);
      const { proxyPassword } = stack.emulator.taskSecrets(result.executionId)!;
      assert.ok(!d.raw.includes(proxyPassword), 'a body carries the proxy password');
    }
    // The signing secrets never reach history.
    const history = await storedHistory(stack.env.client, handle.workflowId);
    assert.ok(!history.includes(NEW_SECRET.slice(6)) && !history.includes(OLD_SECRET.slice(6)));
  });

  test('a receiver that never answers holds nothing up; task.finished is still delivered after the workflow closed', async () => {
    // Hangs (past the 1 s timeout) for the first two attempts of each event, then answers.
    receiver.answer = (d) => (receiver.received.filter((r) => r.id === d.id).length < 2 ? 'hang' : 200);
    const startedAt = Date.now();
    const handle = await stack.tasks.start(taskInput({ webhook: { events: ['task.finished'] } }));
    const result = await handle.result();
    const closedAt = Date.now();
    assert.equal(result.status, 'finalized');
    assert.ok(closedAt - startedAt < 6_000, `the workflow waited for the receiver (${closedAt - startedAt} ms)`);
    const delivered = await eventually(
      'task.finished is delivered after the workflow closed',
      () => of(handle.workflowId).find((d) => d.answered === 200),
      30_000,
    );
    assert.ok(delivered.at > closedAt, 'delivered after the workflow had its result');
    const deliveries = of(handle.workflowId);
    assert.deepEqual(
      deliveries.map((d) => [d.body.type, d.answered]),
      [
        ['task.finished', 'hang'],
        ['task.finished', 'hang'],
        ['task.finished', 200],
      ],
      'only the event the task asked for',
    );
    assertOneIdPerEvent(deliveries);
  });

  test('an input.requested still retrying when the task closes is handed over and delivered after, under its webhook-id', async () => {
    // The receiver refuses the request until the workflow has closed: only a hand-over can deliver it.
    let closed = false;
    receiver.answer = () => (closed ? 200 : 500);
    const handle = await stack.tasks.start(
      taskInput({
        instructions: [{ action: 'Log in [needs-code]' }],
        webhook: { events: ['input.requested'] },
      }),
    );
    await eventually('the first attempt is refused', () => of(handle.workflowId).length > 0);
    await handle.cancel();
    await handle.result().catch(() => undefined);
    closed = true;
    const delivered = await eventually(
      'input.requested is delivered after the workflow closed',
      () => of(handle.workflowId).find((d) => d.answered === 200),
      30_000,
    );
    assert.equal(delivered.body.type, 'input.requested');
    const deliveries = of(handle.workflowId);
    assert.ok(
      deliveries.every((d) => d.body.type === 'input.requested'),
      'only the event the task asked for',
    );
    assertOneIdPerEvent(deliveries);
    assert.equal(delivered.raw, deliveries[0]!.raw, 'the same body as the refused attempt');
  });
});

describe('a stop BrowserAI does not take', () => {
  test('is told as task.stop_not_confirmed, then task.finished with stopConfirmed false; each body as the schema says', async () => {
    receiver.answer = () => 200;
    const handle = await stack.tasks.start(
      taskInput({
        instructions: [{ action: 'Crawl the catalogue [duration=60s]' }],
        stopRetryWindowMs: 2_000,
        webhook: { reference: 'order-7' },
      }),
      { waitForExecutionId: true },
    );
    const { executionId } = handle;
    await eventually('running', () => stack.emulator.task(executionId)?.status === 'running');
    stack.emulator.inject({
      method: 'POST',
      path: new RegExp(`^/tasks/${executionId}/command$`),
      status: 500,
      times: 1_000,
    });
    await handle.cancel();
    await handle.result().catch(() => undefined);
    const deliveries = await eventually('both events are delivered', () => {
      const found = of(handle.workflowId);
      return found.length === 2 ? found : undefined;
    });
    // Each event has a delivery workflow of its own: they may arrive in either order.
    const body = (type: string) => deliveries.find((d) => d.body.type === type)?.body;
    assert.deepEqual(body('task.stop_not_confirmed')?.data, {
      workflowId: handle.workflowId,
      executionId,
      reference: 'order-7',
    });
    const finished = body('task.finished')?.data as Record<string, unknown> | undefined;
    assert.deepEqual(finished, {
      outcome: 'cancelled',
      workflowId: handle.workflowId,
      executionId,
      status: finished?.status,
      stopConfirmed: false,
      reference: 'order-7',
    });
    for (const d of deliveries) assertMatchesSchema('WebhookBody', JSON.parse(d.raw), `the ${d.body.type} body`);
    assert.equal(stack.emulator.task(executionId)?.status, 'running', 'the task is indeed still running');
  });
});

describe('webhooks across a worker killed mid-delivery', () => {
  test('the delivery is retried by another worker with the same webhook-id', async () => {
    const taskQueue = `webhooks-${randomUUID()}`;
    const tasks = new BrowserTasks(stack.env.client, taskQueue);
    const env = {
      ...workerEnvironment({
        temporalAddress: stack.env.address,
        namespace: stack.env.namespace,
        taskQueue,
        browserAIBaseUrl: stack.emulator.baseUrl,
        browserAIToken: stack.emulator.apiToken,
        shutdownGraceMs: 1_000,
      }),
      BROWSERAI_WEBHOOK_URL: receiver.url,
      BROWSERAI_WEBHOOK_SECRET: NEW_SECRET,
      // A request held longer than a test should wait: the kill, not the timeout, ends the attempt.
      BROWSERAI_WEBHOOK_TIMEOUT_MS: '15000',
    };
    const first = new WorkerChild(env);
    assert.ok(await first.ready, first.outputTail.join('\n'));
    let killed = false;
    // The first delivery is held open; the test kills the worker while it waits for the answer.
    receiver.answer = () => (killed ? 200 : 'hang');
    const handle = await tasks.start(taskInput({ webhook: { events: ['task.finished'] } }));
    await eventually('the first attempt reaches the receiver', () => of(handle.workflowId).length > 0);
    await first.signal('SIGKILL', 5_000);
    killed = true;
    const second = new WorkerChild(env);
    try {
      assert.ok(await second.ready, second.outputTail.join('\n'));
      const delivered = await eventually(
        'the event is delivered again',
        () => of(handle.workflowId).find((d) => d.answered === 200),
        60_000,
      );
      const deliveries = of(handle.workflowId);
      assert.equal(deliveries.length, 2);
      assert.equal(deliveries[0]!.id, delivered.id, 'the same webhook-id after the kill');
      assert.equal(deliveries[0]!.raw, delivered.raw);
      assert.deepEqual(delivered.verifiedWith, [0]);
      assertOneIdPerEvent(deliveries);
      assert.equal((await handle.result()).status, 'finalized');
    } finally {
      await second.signal('SIGTERM', 5_000);
    }
  });
});
