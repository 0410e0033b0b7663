// BrowserAIPlugin in a team's own worker: its own workflows beside ours, browserTask as a child
// that signals its parent when it awaits a code, activities called directly, and activities
// placed on a task queue of the caller's choosing with a priority and a fairness key.
import assert from 'node:assert/strict';
import type { AwaitingInputNotice } from '../src/contract/messages';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { createActivities } from '../src/activities';
import { BrowserTasks } from '../src/starters/tasks';
import { BrowserAIPlugin } from '../src/plugin';
import { InvalidInputError, taskInputProblems } from '../src/contract/input-problems';
import { assertMatchesSchema } from './helpers/schemas';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';

const noop = () => undefined;
const quiet = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

describe('BrowserAIPlugin in a worker of your own', () => {
  let stack: Stack;
  let teamQueue: string;
  let teamWorker: Worker;
  let running: Promise<void>;

  before(async () => {
    stack = await startStack();
    teamQueue = `team-${randomUUID()}`;
    teamWorker = await Worker.create({
      connection: stack.env.nativeConnection,
      namespace: stack.env.namespace,
      taskQueue: teamQueue,
      workflowBundle: await bundleWorkflowCode({
        workflowsPath: require.resolve('./workflows/parent-workflows'),
        logger: quiet,
      }),
      plugins: [new BrowserAIPlugin({ browserAI: stack.browserai })],
    });
    running = teamWorker.run();
  });
  after(async () => {
    teamWorker?.shutdown();
    await running?.catch(noop);
    await stack?.stop();
  });

  test('a parent is signalled when its child task awaits a code, passes the code on, and calls an activity directly', async () => {
    const workflowId = `login-${randomUUID()}`;
    const handle = await stack.env.client.workflow.start('loginParent', {
      taskQueue: teamQueue,
      workflowId,
      args: [taskInput({ instructions: [{ action: 'Log in to the portal [needs-code]' }] })],
    });
    // The parent is told once; the test, as the user, answers only then.
    const child = stack.env.client.workflow.getHandle(`${workflowId}-task`);
    await eventually(
      'the child awaits input',
      async () => ((await child.query('state').catch(() => null)) as { awaitingInput?: boolean } | null)?.awaitingInput,
    );
    await handle.signal('codeFromUser', '482913');
    const result = (await handle.result()) as {
      notices: Array<Record<string, string>>;
      status: string;
      lookedUp: string;
    };

    assert.equal(result.notices.length, 1, 'one notice per wait');
    const [notice] = result.notices;
    assertMatchesSchema('AwaitingInputNotice', notice, 'the notice');
    assert.equal(notice!.workflowId, `${workflowId}-task`);
    assert.match(notice!.executionId!, /^[0-9a-f]{24}$|^exec_/);
    assert.ok(
      Date.parse(notice!.timesOutAt!) > Date.parse(notice!.since!),
      'the notice says until when the task waits',
    );
    assert.equal(
      result.status,
      result.lookedUp,
      'the direct browserAIGetTask call saw the status the child ended with',
    );
    assert.equal(
      stack.emulator.task(notice!.executionId!)?.codesReceived.filter((c) => c === '482913').length,
      1,
      'the code was typed once',
    );

    // Every activity ran under its prefixed name: a team's own `createTask` cannot collide.
    const types = new Set<string>();
    for (const id of [workflowId, `${workflowId}-task`]) {
      const history = await stack.env.client.workflow.getHandle(id).fetchHistory();
      for (const e of history.events ?? [])
        if (e.activityTaskScheduledEventAttributes)
          types.add(e.activityTaskScheduledEventAttributes.activityType!.name!);
    }
    assert.ok(
      [...types].every((t) => t.startsWith('browserAI')),
      [...types].join(', '),
    );
  });

  test('notifyWorkflowId names another workflow to signal; false signals nobody', async () => {
    const listenerId = `listener-${randomUUID()}`;
    const listener = await stack.env.client.workflow.start('noticeListener', {
      taskQueue: teamQueue,
      workflowId: listenerId,
    });
    const task = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Log in [needs-code]' }], notifyWorkflowId: listenerId }),
    );
    const notice = (await listener.result()) as AwaitingInputNotice;
    assert.equal(notice.workflowId, task.workflowId);
    assert.equal(notice.status.toLowerCase(), 'awaiting');
    // The same input request every channel tells.
    const told = await stack.tasks.nextInputRequest(task.workflowId);
    assert.ok(told.kind === 'input-requested');
    assert.deepEqual(notice, { ...told.request, status: notice.status });
    await stack.tasks.submitCode(task.workflowId, '135790');
    await task.result();

    const quietTask = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Log in [needs-code]' }], notifyWorkflowId: false }),
    );
    await eventually('awaiting input', async () => (await stack.tasks.state(quietTask.workflowId)).awaitingInput);
    await stack.tasks.submitCode(quietTask.workflowId, '246801');
    await quietTask.result();
    const history = await quietTask.fetchHistory();
    assert.ok(
      !history.events?.some((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes),
      'no signal was sent',
    );
  });

  test('a refused code is told to the listening workflow again, as a new request', async () => {
    const listenerId = `collector-${randomUUID()}`;
    const listener = await stack.env.client.workflow.start('noticeCollector', {
      taskQueue: teamQueue,
      workflowId: listenerId,
      args: [2],
    });
    const task = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Log in [rejects-code]' }], notifyWorkflowId: listenerId }),
    );
    await eventually('the first request', async () => (await stack.tasks.state(task.workflowId)).inputRequest);
    await stack.tasks.submitCode(task.workflowId, '111111');
    await eventually(
      'the second request',
      async () => (await stack.tasks.state(task.workflowId)).inputRequest?.sequence === 2,
    );
    await stack.tasks.submitCode(task.workflowId, '222222');
    await task.result();
    const notices = (await listener.result()) as AwaitingInputNotice[];
    assert.deepEqual(
      notices.map((n) => [n.sequence, n.kind, n.refusedCodes]),
      [
        [1, 'code', 0],
        [2, 'code', 1],
      ],
    );
    for (const notice of notices) assertMatchesSchema('AwaitingInputNotice', notice, `notice ${notice.sequence}`);
  });

  test('activityOptions put every activity on the chosen task queue, with the priority and the project as fairness key', async () => {
    // A fleet of its own makes the BrowserAI requests: activities only, on a queue of its own.
    const activityQueue = `activities-${randomUUID()}`;
    const activityWorker = await Worker.create({
      connection: stack.env.nativeConnection,
      namespace: stack.env.namespace,
      taskQueue: activityQueue,
      identity: 'activity-fleet',
      activities: createActivities(stack.browserai),
    });
    const activityRunning = activityWorker.run();
    try {
      const handle = await stack.tasks.start(
        taskInput({ project: 'billing', activityOptions: { taskQueue: activityQueue, priorityKey: 2 } }),
      );
      await handle.result();
      const events = (await handle.fetchHistory()).events ?? [];
      const scheduled = events.flatMap((e) =>
        e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : [],
      );
      const started = events.flatMap((e) =>
        e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes] : [],
      );
      assert.ok(scheduled.length >= 2);
      for (const s of scheduled) {
        assert.equal(s.taskQueue?.name, activityQueue);
        assert.equal(s.priority?.priorityKey, 2);
        assert.equal(s.priority?.fairnessKey, 'billing');
      }
      assert.ok(
        started.every((s) => s.identity === 'activity-fleet'),
        'the activity fleet ran them all',
      );
    } finally {
      activityWorker.shutdown();
      await activityRunning.catch(noop);
    }
  });

  test('a fairness key the schema accepts (64 characters, 128 bytes) runs, cut to 64 bytes for Temporal', async () => {
    // JSON Schema's maxLength counts characters: a caller validating against the schema sends this.
    const handle = await stack.tasks.start(taskInput({ activityOptions: { fairnessKey: 'é'.repeat(64) } }));
    assert.equal((await handle.result()).status, 'finalized');
    const events = (await handle.fetchHistory()).events ?? [];
    const keys = new Set(events.flatMap((e) => e.activityTaskScheduledEventAttributes?.priority?.fairnessKey ?? []));
    assert.deepEqual([...keys], ['é'.repeat(32)]);
  });
});

describe('one BrowserAI request limit for a whole fleet', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => stack?.stop());

  test('two activity workers on one queue with maxTaskQueueActivitiesPerSecond stay under that limit together', async () => {
    // The server enforces the limit per task queue, whichever worker polls: every create, append,
    // stop and results read is one activity, so the fleet's creates stay under it.
    const limit = 2;
    const queue = `limited-${randomUUID()}`;
    // Two connections: one process may hold only one worker per queue and connection (two machines, in production).
    const connections = await Promise.all([1, 2].map(() => NativeConnection.connect({ address: stack.env.address })));
    const workers = await Promise.all(
      ['fleet-a', 'fleet-b'].map((identity, i) =>
        Worker.create({
          connection: connections[i]!,
          namespace: stack.env.namespace,
          taskQueue: queue,
          identity,
          activities: createActivities(stack.browserai),
          maxTaskQueueActivitiesPerSecond: limit,
        }),
      ),
    );
    const runs = workers.map((w) => w.run());
    try {
      const marker = randomUUID();
      const handles = await Promise.all(
        Array.from({ length: 16 }, () =>
          stack.tasks.start(
            taskInput({ instructions: [{ action: `${marker} [duration=2s]` }], activityOptions: { taskQueue: queue } }),
          ),
        ),
      );
      await Promise.all(handles.map((h) => h.result()));
      const creates = stack.emulator.requests
        .filter((r) => r.method === 'POST' && r.path === '/tasks' && JSON.stringify(r.body).includes(marker))
        .map((r) => r.at)
        .sort((a, b) => a - b);
      assert.equal(creates.length, 16);
      // Polls are activities on the queue too, so creates get at most `limit` per second; the
      // server's token bucket lets one second's worth through at once.
      const spanSeconds = (creates.at(-1)! - creates[0]!) / 1_000;
      assert.ok(
        spanSeconds >= (creates.length - limit) / limit - 1,
        `16 creates within ${spanSeconds.toFixed(1)} s: faster than ${limit}/s`,
      );
      const identities = new Set<string>();
      for (const h of handles) {
        for (const e of (await h.fetchHistory()).events ?? [])
          if (e.activityTaskStartedEventAttributes) identities.add(e.activityTaskStartedEventAttributes.identity!);
      }
      assert.deepEqual([...identities].sort(), ['fleet-a', 'fleet-b'], 'both workers took part');
    } finally {
      for (const w of workers) w.shutdown();
      await Promise.all(runs.map((r) => r.catch(noop)));
      await Promise.all(connections.map((c) => c.close()));
    }
  });
});

describe('activityOptions are checked before anything is sent', () => {
  test('every out-of-bounds option is named', () => {
    const problems = taskInputProblems(
      taskInput({
        activityOptions: {
          taskQueue: '',
          priorityKey: 9,
          fairnessKey: 'x'.repeat(65),
          fairnessWeight: 0,
          retry: {
            initialIntervalMs: 10,
            maximumIntervalMs: 3_600_000,
            backoffCoefficient: 50,
            maximumAttempts: 1,
          } as never,
        },
      }),
    );
    for (const field of [
      'taskQueue',
      'priorityKey',
      'fairnessKey',
      'fairnessWeight',
      'retry.initialIntervalMs',
      'retry.maximumIntervalMs',
      'retry.backoffCoefficient',
      'maximumAttempts',
    ]) {
      assert.ok(
        problems.some((p) => p.includes(field)),
        `${field}: ${problems.join(' | ')}`,
      );
    }
  });

  test('the starter refuses them with InvalidInputError', async () => {
    const tasks = new BrowserTasks(undefined as never, 'unused');
    await assert.rejects(tasks.start(taskInput({ activityOptions: { priorityKey: 0 } })), InvalidInputError);
  });
});
