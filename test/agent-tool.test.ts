// The `browserTask` agent tool (src/workflows/agent-tool.ts): an agent workflow whose scripted
// model (a deterministic activity standing in for an LLM) calls the tool, which runs the task as a
// child browserTask on the BrowserAI workers; a bad call and a failed task come back to the model
// as answers, not as the agent's failure; an agent that times out or is terminated mid-task has
// its task stopped once. Real worker, dev server and emulator.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { FAIL_ERROR } from '../src/emulator/scenario';
import type { BrowserTaskToolResult } from '../src/workflows/agent-tool';
import type { AgentMessage, ModelActivities, ModelTurn, browserAgent } from './workflows/browser-agent';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';

let stack: Stack;
let agents: Worker;
let running: Promise<void>;
const agentQueue = `agents-${randomUUID()}`;

/** The scripted model: asks the browser what the question says (or a bad call), then answers from the tool's output. */
const activities: ModelActivities = {
  async model(messages: AgentMessage[], tools): Promise<ModelTurn> {
    assert.equal(tools[0]?.name, 'browserTask');
    assert.deepEqual((tools[0]?.parameters as { required?: string[] }).required, ['instructions']);
    const last = messages.at(-1)!;
    if (last.role === 'user') {
      const args =
        last.content === 'bad call'
          ? { instructions: [] }
          : last.content === 'greedy call'
            ? { instructions: ['Open https://example.com'], priority: 1, timeoutMs: 2_592_000_000 }
            : { instructions: [last.content] };
      return { toolCall: { name: 'browserTask', arguments: args } };
    }
    const output = JSON.parse(last.content) as BrowserTaskToolResult;
    return {
      text: output.ok ? `Found: ${JSON.stringify(output.result)}` : `Could not (${output.status}): ${output.error}`,
    };
  },
};

before(async () => {
  stack = await startStack();
  agents = await Worker.create({
    connection: stack.env.nativeConnection,
    namespace: stack.env.namespace ?? 'default',
    taskQueue: agentQueue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: require.resolve('./workflows/browser-agent') }),
    activities,
  });
  running = agents.run();
});

after(async () => {
  agents?.shutdown();
  await running?.catch(() => undefined);
  await stack?.stop();
});

function startAgent(question: string, options: { workflowExecutionTimeout?: string } = {}) {
  const { instructions: _none, ...task } = taskInput();
  return stack.env.client.workflow.start<typeof browserAgent>('browserAgent', {
    taskQueue: agentQueue,
    workflowId: `agent-${randomUUID()}`,
    args: [{ question, browserTaskQueue: stack.taskQueue, task }],
    ...options,
  });
}

async function runAgent(question: string) {
  return (await startAgent(question)).result();
}

/** The agent's long task, once created at BrowserAI: its child workflow and the emulator's task. */
async function runningTask(agent: WorkflowHandle, marker: string) {
  const emulated = await eventually("the tool's task is created at BrowserAI", () =>
    stack.emulator.listTasks().find((t) => t.instructions[0]?.action.includes(marker)),
  );
  const child = await eventually('the child is listed', async () => {
    for await (const listed of stack.env.client.workflow.list({ query: `ParentWorkflowId = '${agent.workflowId}'` }))
      return stack.env.client.workflow.getHandle(listed.workflowId);
    return undefined;
  });
  return { executionId: emulated.executionId, child };
}

/** The child ended cancelled, after exactly one stop; no stop follows. */
async function stoppedOnce(child: WorkflowHandle, executionId: string): Promise<void> {
  await assert.rejects(child.result(), WorkflowFailedError);
  assert.equal((await child.describe()).status.name, 'CANCELLED', 'the task was cancelled, not terminated');
  const task = stack.emulator.task(executionId)!;
  assert.equal(task.status, 'stopped');
  assert.equal(task.stopCommands, 1, 'exactly one stop reached BrowserAI');
}

test('the scripted model calls browserTask; the task runs as a child workflow and the model answers from its output', async () => {
  const { answer, messages } = await runAgent('Open https://example.com and return the page title');
  const tool = JSON.parse(messages.at(-1)!.content) as BrowserTaskToolResult;
  assert.equal(tool.ok, true, JSON.stringify(tool));
  assert.equal(tool.status, 'finalized');
  assert.match(answer, /^Found: /);
  const child = await stack.tasks.handle(tool.workflowId).describe();
  assert.equal(child.type, 'browserTask');
  assert.equal(child.status.name, 'COMPLETED');
  assert.ok(child.parentExecution, 'a child of the agent');
});

test("a bad call, a greedy one and a failed task are the model's to read, not the agent's failure", async () => {
  const bad = await runAgent('bad call');
  assert.match(bad.answer, /^Could not \(InvalidInput\): instructions must be/);
  // What the model may not choose is refused, not dropped: nothing runs.
  const created = stack.emulator.count('POST', /^\/tasks$/);
  const greedy = await runAgent('greedy call');
  assert.match(
    greedy.answer,
    /^Could not \(InvalidInput\): priority, timeoutMs are not yours to choose here: give only instructions$/,
  );
  assert.equal(stack.emulator.count('POST', /^\/tasks$/), created);
  const failed = await runAgent('Open a missing site [fail]');
  assert.match(failed.answer, /^Could not \(BrowserAITaskFailed\)/);
  assert.ok(failed.answer.includes(FAIL_ERROR), failed.answer);
});

test('an agent that times out mid-task has its task cancelled: one stop reaches BrowserAI', async () => {
  const marker = `timeout-${randomUUID()}`;
  const agent = await startAgent(`Crawl ${marker} [duration=60s]`, { workflowExecutionTimeout: '10 seconds' });
  const { executionId, child } = await runningTask(agent, marker);
  await assert.rejects(agent.result(), WorkflowFailedError);
  assert.equal((await agent.describe()).status.name, 'TIMED_OUT');
  await stoppedOnce(child, executionId);
});

test('an agent terminated mid-task has its task cancelled: one stop reaches BrowserAI', async () => {
  const marker = `terminate-${randomUUID()}`;
  const agent = await startAgent(`Crawl ${marker} [duration=60s]`);
  const { executionId, child } = await runningTask(agent, marker);
  await agent.terminate('an operator ends the agent');
  await stoppedOnce(child, executionId);
});
