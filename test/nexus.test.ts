// The `browserai` Nexus service (BrowserAIPlugin `nexusService: true`) called from a workflow in
// another namespace through a Nexus endpoint on the dev server: a task that needs a code, a
// cancelled task, and bad input. The callers are test/workflows/nexus-callers.ts. The dev server of
// Temporal CLI 1.9 (server 1.32) has Nexus on by default: no dynamic config is needed.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Client, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { BrowserAIPlugin } from '../src/plugin';
import { stateQuery } from '../src/workflows/messages';
import { eventually, startStack, taskInput, workflowBundle, type Stack } from './helpers/stack';
import type { BadCall, CallerInput, Refusal } from './workflows/nexus-callers';

const CALLER_NAMESPACE = 'nexus-callers';
const noop = () => undefined;
const quiet = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

describe('the browserai Nexus service, called from another namespace', () => {
  let stack: Stack;
  let endpoint: string;
  let caller: Client;
  let callerQueue: string;
  const workers: Array<{ worker: Worker; running: Promise<void> }> = [];
  const stops = (id: string) => stack.emulator.count('POST', new RegExp(`^/tasks/${id}/command$`));

  before(async () => {
    stack = await startStack({ temporalArgs: ['--namespace', CALLER_NAMESPACE] });
    // The service: our plugin with nexusService on a worker of its own, in the default namespace.
    const serviceQueue = `nexus-service-${randomUUID()}`;
    const service = await Worker.create({
      connection: stack.env.nativeConnection,
      namespace: 'default',
      taskQueue: serviceQueue,
      workflowBundle: await workflowBundle(),
      plugins: [new BrowserAIPlugin({ browserAI: stack.browserai, nexusService: true })],
    });
    // The endpoint routes calls to the service's namespace and task queue (`temporal operator nexus endpoint create`).
    endpoint = `browserai-${randomUUID().slice(0, 8)}`;
    await stack.env.connection.operatorService.createNexusEndpoint({
      spec: { name: endpoint, target: { worker: { namespace: 'default', taskQueue: serviceQueue } } },
    });
    // The callers: a team's workflows in another namespace, with no BrowserAI token and no BrowserAI code.
    callerQueue = `nexus-callers-${randomUUID()}`;
    const callers = await Worker.create({
      connection: stack.env.nativeConnection,
      namespace: CALLER_NAMESPACE,
      taskQueue: callerQueue,
      workflowBundle: await bundleWorkflowCode({
        workflowsPath: require.resolve('./workflows/nexus-callers'),
        logger: quiet,
      }),
    });
    for (const worker of [service, callers]) workers.push({ worker, running: worker.run() });
    caller = new Client({ connection: stack.env.connection, namespace: CALLER_NAMESPACE });
  });
  after(async () => {
    for (const { worker } of workers) worker.shutdown();
    await Promise.all(workers.map(({ running }) => running.catch(noop)));
    await stack?.stop();
  });

  const startCaller = (workflow: string, input: CallerInput) =>
    caller.workflow.start(workflow, { taskQueue: callerQueue, workflowId: `caller-${randomUUID()}`, args: [input] });

  test('runTask runs a task that needs a code: state shows it awaiting, submitCode types the code once, the result comes back', async () => {
    const workflowId = `nexus-login-${randomUUID()}`;
    const code = '482913';
    const handle = await startCaller('loginThroughNexus', {
      endpoint,
      workflowId,
      task: taskInput({ instructions: [{ action: 'Log in to the portal [needs-code]' }] }),
    });
    // The task runs as browserTask in the service's namespace; the person answers once it awaits the code.
    const task = stack.tasks.handle(workflowId);
    await eventually(
      'the task awaits a code',
      async () => (await task.query(stateQuery).catch(() => null))?.awaitingInput,
    );
    await handle.signal('codeFromUser', code);

    const { result, awaited, stateReads } = (await handle.result()) as {
      result: { status: string; executionId: string };
      awaited: { awaitingInput: boolean; executionId: string };
      stateReads: number;
    };
    assert.equal(result.status, 'finalized');
    assert.equal(awaited.awaitingInput, true, 'the state operation showed the task awaiting input');
    assert.equal(awaited.executionId, result.executionId);
    assert.ok(stateReads >= 1);
    const typed = stack.emulator.task(result.executionId)!.codesReceived.filter((c) => c === code);
    assert.equal(typed.length, 1, 'the code was typed exactly once');
    assert.equal((await task.describe()).status.name, 'COMPLETED');
  });

  test('cancelling the caller cancels the operation and its workflow: exactly one stop reaches BrowserAI', async () => {
    const workflowId = `nexus-cancel-${randomUUID()}`;
    const handle = await startCaller('cancelledThroughNexus', {
      endpoint,
      workflowId,
      task: taskInput({ instructions: [{ action: 'Crawl everything [duration=60s]' }] }),
    });
    const task = stack.tasks.handle(workflowId);
    const executionId = await eventually('the task runs at BrowserAI', async () => {
      const id = (await task.query(stateQuery).catch(() => null))?.executionId;
      return id && stack.emulator.task(id)?.status === 'running' ? id : undefined;
    });
    await handle.cancel();
    await assert.rejects(handle.result(), WorkflowFailedError);
    // The caller waited for the operation to end (WAIT_CANCELLATION_COMPLETED): the task's workflow has ended too.
    assert.equal((await task.describe()).status.name, 'CANCELLED');
    assert.equal(stops(executionId), 1, 'one stop');
    assert.equal(stack.emulator.task(executionId)?.status, 'stopped');
    assert.equal((await task.query(stateQuery)).stopConfirmed, true);
  });

  test('bad input is a Nexus BAD_REQUEST (not retried), an unknown task NOT_FOUND: nothing is started, nothing sent', async () => {
    const fresh = `nexus-bad-${randomUUID()}`;
    // An ID already used: a task started (and finished) through the client API.
    const used = (await stack.tasks.start(taskInput())).workflowId;
    await stack.tasks.result(used);
    const requestsBefore = stack.emulator.requests.length;
    const calls: BadCall[] = [
      {
        operation: 'runTask',
        input: { workflowId: fresh, task: taskInput({ instructions: [], geoLocation: { country: 'Narnia' } }) },
      },
      { operation: 'runTask', input: { workflowId: fresh, task: taskInput({ awaitable: true }) } },
      { operation: 'runTask', input: { workflowId: '', task: taskInput() } },
      { operation: 'runTask', input: { workflowId: used, task: taskInput() } },
      { operation: 'submitCode', input: { workflowId: used, code: 'not a code!' } },
      { operation: 'state', input: { workflowId: `nexus-unknown-${randomUUID()}` } },
    ];
    const handle = await caller.workflow.start('failuresThroughNexus', {
      taskQueue: callerQueue,
      workflowId: `caller-${randomUUID()}`,
      args: [{ endpoint, calls }],
    });
    const refusals = (await handle.result()) as Refusal[];
    const expected: Array<[string, RegExp]> = [
      ['BAD_REQUEST', /task: instructions must be a non-empty array.*country/],
      ['BAD_REQUEST', /task\.awaitable is not offered through Nexus/],
      ['BAD_REQUEST', /workflowId must be a non-empty string/],
      ['BAD_REQUEST', /already started: give each runTask a new workflowId/],
      ['BAD_REQUEST', /code must be/],
      ['NOT_FOUND', /No task with workflowId/],
    ];
    refusals.forEach((refusal, i) => {
      const [type, message] = expected[i]!;
      assert.equal(refusal.failure, 'NexusOperationFailure', JSON.stringify(refusal));
      assert.equal(refusal.causeType, type, JSON.stringify(refusal));
      assert.equal(refusal.retryable, false);
      assert.match(refusal.message!, message);
    });
    await assert.rejects(stack.tasks.handle(fresh).describe(), WorkflowNotFoundError, 'no workflow was started');
    assert.equal(stack.emulator.requests.length, requestsBefore, 'nothing was sent to BrowserAI');
  });

  test("a task that fails fails the operation with the workflow's failure type", async () => {
    const workflowId = `nexus-failed-${randomUUID()}`;
    const handle = await caller.workflow.start('failuresThroughNexus', {
      taskQueue: callerQueue,
      workflowId: `caller-${randomUUID()}`,
      args: [
        {
          endpoint,
          calls: [
            {
              operation: 'runTask',
              input: { workflowId, task: taskInput({ instructions: [{ action: 'Fail [fail]' }] }) },
            },
          ],
        },
      ],
    });
    const [failure] = (await handle.result()) as Refusal[];
    assert.equal(failure!.failure, 'NexusOperationFailure', JSON.stringify(failure));
    assert.equal(failure!.causeType, 'BrowserAITaskFailed', JSON.stringify(failure));
    assert.equal((await stack.tasks.handle(workflowId).describe()).status.name, 'FAILED');
  });
});
