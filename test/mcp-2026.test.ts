// The MCP server to 2026-07-28 clients (stateless: no initialize, no session), over stdio (the CLI
// as a child process) and Streamable HTTP, against a real worker, a dev server and the emulator: a
// code asked by `input_required` and typed once; the `requestState` refused when tampered,
// foreign, brought to another call or replayed (nothing typed); tasks as MCP tasks through the
// Tasks extension's own client (tasks/get, tasks/update, tasks/cancel), continued by task ID from a
// new session; status notifications; and two server processes behind a round-robin proxy, one
// killed between rounds, serving one client.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import type { ServerContext } from '@modelcontextprotocol/server';
import { startMcpHttpServer, type McpHttpServer } from '../src/mcp';
import { codeStateCodec, type CodeRequestState } from '../src/mcp/code-requests';
import type { McpTaskReport } from '../src/mcp/contract';
import {
  TASKS_EXTENSION,
  envelope,
  httpChild,
  mcpChildEnv,
  modernClient,
  rawHttp,
  rawStdio,
  roundRobinProxy,
  type RawMcp,
  type RpcAnswer,
} from './helpers/mcp';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';

const CODE = '482913';
const STATE_KEY = randomBytes(32).toString('base64');

let stack: Stack;
let http: McpHttpServer;
/** This file's workflow ID prefix: its tasks are told apart from other files' on a shared server. */
const prefix = `mcp26-${randomUUID().slice(0, 8)}-`;

before(async () => {
  stack = await startStack();
  http = await startMcpHttpServer({
    tasks: stack.tasks,
    port: 0,
    fence: { idPrefix: prefix },
    progressIntervalMs: 100,
    taskPollIntervalMs: 200,
    stateKey: STATE_KEY,
  });
});

after(async () => {
  await http?.close();
  await stack?.stop();
});

const childEnv = () =>
  mcpChildEnv(stack, prefix, { BROWSERAI_MCP_TASK_POLL_MS: '200', BROWSERAI_MCP_STATE_KEY: STATE_KEY });

const codeTask = () => taskInput({ instructions: [{ action: 'Log in [needs-code]' }] });
const codesOf = (report: { executionId: string | null }) => stack.emulator.task(report.executionId!)?.codesReceived;

function resultOf(answer: RpcAnswer): Record<string, unknown> {
  assert.equal(answer.kind, 'result', JSON.stringify(answer));
  return (answer as { result: Record<string, unknown> }).result;
}

function reportOf(result: Record<string, unknown>): McpTaskReport {
  assert.ok(!JSON.stringify(result).includes(CODE), 'no code in a tool result');
  return result.structuredContent as McpTaskReport;
}

for (const transport of ['stdio', 'http'] as const) {
  const where = () => (transport === 'http' ? { url: http.url } : { env: childEnv() });
  const raw = (): RawMcp => (transport === 'http' ? rawHttp(http.url) : rawStdio(childEnv()));

  describe(`2026-07-28 over ${transport}`, () => {
    test('a code is asked by input_required and typed once; progress on the way, no code in it', async () => {
      const asked: string[] = [];
      const client = await modernClient(where(), {
        answer: (message) => (asked.push(message), { action: 'accept', content: { code: CODE } }),
      });
      try {
        assert.equal(client.getProtocolEra(), 'modern');
        const progress: string[] = [];
        const result = await client.callTool(
          { name: 'run_task', arguments: { task: codeTask(), waitSeconds: 20 } },
          { onprogress: (p) => void progress.push(p.message ?? ''), timeout: 30_000 },
        );
        const report = reportOf(result as Record<string, unknown>);
        assert.equal(report.status, 'completed', JSON.stringify(report));
        assert.equal(asked.length, 1, 'asked once');
        assert.match(asked[0]!, /one-time code/);
        assert.deepEqual(codesOf(report), [CODE]);
        assert.ok(progress.length >= 1, 'progress notifications while the call waited');
        assert.ok(!progress.join('\n').includes(CODE), 'no code in a notification');
      } finally {
        await client.close();
      }
    });

    test('a requestState tampered, foreign, for another call or replayed is refused, and nothing is typed', async () => {
      const mcp = raw();
      const elicitation = { elicitation: {} };
      try {
        const args = { task: codeTask(), waitSeconds: 20 };
        const asked = resultOf(await mcp.request('tools/call', { name: 'run_task', arguments: args }, elicitation));
        assert.equal(asked.resultType, 'input_required', JSON.stringify(asked));
        const [key] = Object.keys(asked.inputRequests as object);
        assert.equal(key, 'code-1');
        const state = asked.requestState as string;
        const workflowId = JSON.parse(Buffer.from(state.split('.')[1]!, 'base64url').toString()).p.workflowId as string;
        const answer = (code: string) => ({ [key!]: { action: 'accept', content: { code } } });
        const retry = (requestState: string, code: string, callArgs: Record<string, unknown> = args) =>
          mcp.request(
            'tools/call',
            { name: 'run_task', arguments: callArgs, inputResponses: answer(code), requestState },
            elicitation,
          );
        const typed = async () => (await stack.tasks.state(workflowId)).executionId!;
        const executionId = await typed();

        // Tampered: one character of the signed payload changed.
        const tampered = state.slice(0, 10) + (state[10] === 'A' ? 'B' : 'A') + state.slice(11);
        const refusedTampered = await retry(tampered, CODE);
        assert.equal(refusedTampered.kind, 'error');
        assert.equal((refusedTampered as { error: { code: number } }).error.code, -32602);
        // Foreign: the same claims, sealed with another server's key.
        const payload = JSON.parse(Buffer.from(state.split('.')[1]!, 'base64url').toString()).p as CodeRequestState;
        const foreign = await codeStateCodec(randomBytes(32)).mint(payload, {
          mcpReq: { method: 'tools/call' },
        } as ServerContext);
        assert.equal((await retry(foreign, CODE)).kind, 'error');
        // Another call's: the state is good, the arguments are not the ones it was given for.
        const other = await retry(state, CODE, { ...args, waitSeconds: 19 });
        assert.equal(other.kind, 'error');
        assert.match((other as { error: { message: string } }).error.message, /another call/);
        assert.deepEqual(stack.emulator.task(executionId)?.codesReceived, [], 'nothing typed');

        // The state as given, with the code: typed once, and the call goes on to the end.
        const done = reportOf(resultOf(await retry(state, CODE)));
        assert.equal(done.status, 'completed', JSON.stringify(done));
        // Replayed, with another code: the request is answered, nothing more is typed.
        const replayed = resultOf(await retry(state, 'other-code-1'));
        assert.equal(replayed.isError, true);
        assert.match(JSON.stringify(replayed.content), /no longer open/);
        assert.deepEqual(stack.emulator.task(executionId)?.codesReceived, [CODE]);
      } finally {
        await mcp.close();
      }
    });

    test('tasks: tasks/get asks for the code, tasks/update types it once, tasks/cancel stops once; by task ID from a new connection', async () => {
      const { createTaskSessionFromClient, resultFromTaskOutcome } =
        await import('@modelcontextprotocol/ext-tasks/client');
      const client = await modernClient(where());
      const mcp = raw();
      const asked: string[] = [];
      const session = createTaskSessionFromClient(client as never, {
        endpointId: `browserai-${transport}`,
        rawDispatch: (request) => mcp.dispatch(request as never) as never,
        v2RequestFraming: {
          protocolVersion: '2026-07-28',
          clientInfo: { name: 'tasks-test', version: '1.0.0' },
          clientCapabilities: { elicitation: {} },
        },
        onInputRequest: async (request) => {
          asked.push(JSON.stringify(request.params));
          return { action: 'accept', content: { code: CODE } } as never;
        },
      });
      let taskId: string;
      try {
        assert.equal(session.capabilities.execution, true, 'the server offers the Tasks extension');
        const execution = await session.callTool('run_task', { task: codeTask() as never });
        assert.equal(execution.kind, 'task');
        taskId = execution.handle!.taskId;
        assert.ok(taskId.startsWith(prefix), 'the task ID is the workflow ID, under the prefix');
        const { outcome } = await execution.settle();
        const report = (resultFromTaskOutcome(outcome) as unknown as { structuredContent: McpTaskReport })
          .structuredContent;
        assert.equal(report.status, 'completed', JSON.stringify(report));
        assert.equal(asked.length, 1, 'asked once');
        assert.match(asked[0]!, /one-time code/);
        assert.deepEqual(codesOf(report), [CODE]);

        const slow = await session.callTool('run_task', {
          task: taskInput({ instructions: [{ action: 'Crawl for a while [slow]' }] }) as never,
        });
        await eventually('the task runs', async () => (await stack.tasks.state(slow.handle!.taskId)).executionId);
        await slow.cancel();
        const cancelled = await slow.settle();
        assert.equal(cancelled.outcome.status, 'cancelled');
        // The client settles on the server's cancel ack (cancellation is cooperative in the
        // extension); the workflow sends its stop before it closes.
        await assert.rejects(stack.tasks.handle(slow.handle!.taskId).result(), /cancel/i);
        const { executionId } = await stack.tasks.state(slow.handle!.taskId);
        assert.equal(stack.emulator.count('POST', new RegExp(`/tasks/${executionId}/command`)), 1, 'one stop');
      } finally {
        await session.close();
        await client.close();
        await mcp.close();
      }
      // A new connection (over stdio, a new server process) continues by task ID.
      const again = raw();
      try {
        const task = resultOf(await again.request('tasks/get', { taskId }, { extensions: { [TASKS_EXTENSION]: {} } }));
        assert.equal(task.status, 'completed');
        assert.equal(reportOf(task.result as Record<string, unknown>).workflowId, taskId);
        const unknown = await again.request(
          'tasks/get',
          { taskId: `${prefix}unknown` },
          { extensions: { [TASKS_EXTENSION]: {} } },
        );
        assert.equal(unknown.kind === 'error' && unknown.error.code, -32602);
        const undeclared = await again.request('tasks/get', { taskId }, {});
        assert.equal(undeclared.kind === 'error' && undeclared.error.code, -32021);
      } finally {
        await again.close();
      }
    });
  });
}

describe('2026-07-28 over HTTP: notifications and instances', () => {
  test('task status notifications follow BrowserAI: the code request, then the end', async () => {
    const mcp = rawHttp(http.url);
    const tasksCapability = { extensions: { [TASKS_EXTENSION]: {} } };
    const created = resultOf(
      await mcp.request('tools/call', { name: 'run_task', arguments: { task: codeTask() } }, tasksCapability),
    );
    assert.equal(created.resultType, 'task', JSON.stringify(created));
    const taskId = created.taskId as string;
    const aborter = new AbortController();
    const response = await fetch(http.url, {
      method: 'POST',
      signal: aborter.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'listen-1',
        method: 'subscriptions/listen',
        params: { notifications: { taskIds: [taskId, 'not-ours-1'] }, _meta: envelope(tasksCapability) },
      }),
    });
    assert.equal(response.status, 200);
    const messages: Array<Record<string, any>> = [];
    let buffer = '';
    let answered = false;
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split('\n').find((line) => line.startsWith('data: '));
        if (!data) continue;
        const message = JSON.parse(data.slice(6)) as Record<string, any>;
        messages.push(message);
        const inputRequests = message.params?.inputRequests as Record<string, unknown> | undefined;
        if (message.method === 'notifications/tasks' && inputRequests && !answered) {
          answered = true;
          const [key] = Object.keys(inputRequests);
          const update = await mcp.request(
            'tasks/update',
            { taskId, inputResponses: { [key!]: { action: 'accept', content: { code: CODE } } } },
            tasksCapability,
          );
          assert.equal(update.kind, 'result', JSON.stringify(update));
        }
      }
    }
    const [ack, ...rest] = messages;
    assert.equal(ack!.method, 'notifications/subscriptions/acknowledged');
    assert.deepEqual(ack!.params.notifications.taskIds, [taskId], 'only its own, existing tasks');
    const statuses = rest.filter((m) => m.method === 'notifications/tasks').map((m) => m.params.status);
    assert.ok(statuses.includes('input_required'), statuses.join());
    assert.equal(statuses.at(-1), 'completed');
    assert.ok(rest.some((m) => m.method === 'notifications/tasks' && /running/i.test(m.params.statusMessage ?? '')));
    assert.equal(rest.at(-1)!.id, 'listen-1', 'the stream ends with the listen result');
    assert.ok(!JSON.stringify(messages).includes(CODE), 'no code in a notification');
  });

  test('two server processes behind a round-robin proxy serve one client; one killed between rounds loses nothing', async () => {
    const [first, second] = await Promise.all([httpChild(childEnv()), httpChild(childEnv())]);
    const proxy = await roundRobinProxy([first.url, second.url]);
    const { createTaskSessionFromClient, resultFromTaskOutcome } =
      await import('@modelcontextprotocol/ext-tasks/client');
    const client = await modernClient({ url: proxy.url });
    const mcp = rawHttp(proxy.url);
    let kill = () => undefined as void;
    const session = createTaskSessionFromClient(client as never, {
      endpointId: 'browserai-proxy',
      rawDispatch: (request) => mcp.dispatch(request as never) as never,
      v2RequestFraming: {
        protocolVersion: '2026-07-28',
        clientInfo: { name: 'proxy-test', version: '1.0.0' },
        clientCapabilities: { elicitation: {} },
      },
      // Between the task's rounds: one instance dies before the code is given.
      onInputRequest: async () => {
        kill();
        return { action: 'accept', content: { code: CODE } } as never;
      },
    });
    try {
      // A code by input_required within one call: asked by one instance, answered through the other.
      const args = { task: codeTask(), waitSeconds: 20 };
      const asked = resultOf(
        await rawHttp(first.url).request('tools/call', { name: 'run_task', arguments: args }, { elicitation: {} }),
      );
      assert.equal(asked.resultType, 'input_required', JSON.stringify(asked));
      const retried = await rawHttp(second.url).request(
        'tools/call',
        {
          name: 'run_task',
          arguments: JSON.parse(JSON.stringify(args)),
          inputResponses: { 'code-1': { action: 'accept', content: { code: CODE } } },
          requestState: asked.requestState,
        },
        { elicitation: {} },
      );
      const done = reportOf(resultOf(retried));
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.deepEqual(codesOf(done), [CODE]);

      // A task: started through one, polled by either, one killed before the code is answered.
      kill = () => void first.child.kill('SIGKILL');
      const execution = await session.callTool('run_task', { task: codeTask() as never });
      assert.equal(execution.kind, 'task');
      const { outcome } = await execution.settle();
      const report = (resultFromTaskOutcome(outcome) as unknown as { structuredContent: McpTaskReport })
        .structuredContent;
      assert.equal(report.status, 'completed', JSON.stringify(report));
      assert.deepEqual(codesOf(report), [CODE]);
      assert.notEqual(first.child.exitCode ?? first.child.signalCode, null, 'the first instance was killed');
      const instances = new Set(proxy.served.map((s) => s.upstream));
      assert.equal(instances.size, 2, `both instances served: ${JSON.stringify(proxy.served)}`);
    } finally {
      await session.close().catch(() => undefined);
      await client.close().catch(() => undefined);
      await proxy.close();
      first.child.kill('SIGKILL');
      second.child.kill('SIGTERM');
      await Promise.all(
        [first, second].map(({ child }) =>
          child.exitCode === null && child.signalCode === null ? once(child, 'exit') : undefined,
        ),
      );
    }
  });
});
