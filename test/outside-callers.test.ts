// Callers outside the operator's trust, each in its lane: MCP servers with workflow ID prefixes
// that begin with one another reach only their own tasks. Real MCP clients over Streamable HTTP,
// a real worker, a dev server and the emulator.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startMcpHttpServer, type McpHttpServer } from '../src/mcp';
import type { McpRecentTasks, McpTaskReport } from '../src/mcp/contract';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';

let stack: Stack;
const servers: McpHttpServer[] = [];
const clients: Client[] = [];

before(async () => {
  stack = await startStack();
});
after(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await Promise.all(servers.map((server) => server.close()));
  await stack?.stop();
});

/** An MCP server of its own with this ID prefix (none: the default), and a client connected to it. */
async function mcpClient(idPrefix?: string): Promise<Client> {
  const server = await startMcpHttpServer({ tasks: stack.tasks, port: 0, fence: idPrefix ? { idPrefix } : {} });
  servers.push(server);
  const client = new Client({ name: 'outside-caller', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  clients.push(client);
  return client;
}

/** A tool's structured answer, or its refusal's text. */
async function call<T = McpTaskReport>(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) return { refused: (result.content[0] as { text: string }).text };
  return { answer: result.structuredContent as unknown as T };
}

describe('MCP workflow ID prefixes end at a separator', () => {
  test('`mcp-` does not reach `mcp-alice-…`, and `mcp-alice` does not reach `mcp-alice2-…`', async () => {
    const [shared, alice, aliceNoSeparator, alice2] = await Promise.all([
      mcpClient(),
      mcpClient('mcp-alice-'),
      mcpClient('mcp-alice'),
      mcpClient('mcp-alice2'),
    ]);
    const started = async (client: Client) => {
      const { answer } = await call(client, 'run_task', { task: taskInput(), waitSeconds: 0 });
      assert.ok(answer, 'the task started');
      return answer.workflowId;
    };
    const [sharedTask, aliceTask, alice2Task] = await Promise.all([started(shared), started(alice), started(alice2)]);
    assert.match(sharedTask, /^mcp-[0-9a-f]{8}-/);
    assert.match(aliceTask, /^mcp-alice-[0-9a-f]{8}-/);
    assert.match(alice2Task, /^mcp-alice2-[0-9a-f]{8}-/, 'a prefix without a separator gets one');

    const reaches = async (client: Client, workflowId: string) => {
      const { answer, refused } = await call(client, 'get_task', { workflowId, waitSeconds: 0 });
      if (refused) assert.match(refused, /is not a task this MCP server started/);
      return answer !== undefined;
    };
    assert.equal(await reaches(shared, aliceTask), false, '`mcp-` reaches no `mcp-alice-` task');
    assert.equal(await reaches(shared, alice2Task), false);
    assert.equal(await reaches(aliceNoSeparator, alice2Task), false, '`mcp-alice` reaches no `mcp-alice2-` task');
    assert.equal(await reaches(alice, alice2Task), false);
    assert.equal(await reaches(alice2, aliceTask), false);
    assert.equal(await reaches(alice, sharedTask), false);
    // Each reaches its own; `mcp-alice` is `mcp-alice-`, so it shares alice's tasks (as servers of one prefix do).
    assert.equal(await reaches(shared, sharedTask), true);
    assert.equal(await reaches(alice, aliceTask), true);
    assert.equal(await reaches(aliceNoSeparator, aliceTask), true);
    assert.equal(await reaches(alice2, alice2Task), true);

    await eventually('visibility lists the three tasks', async () => {
      let listed = 0;
      for await (const _ of stack.tasks.client.workflow.list({ query: "WorkflowId STARTS_WITH 'mcp-'" })) listed++;
      return listed === 3;
    });
    const { answer: mine } = await call<McpRecentTasks>(shared, 'list_my_tasks', { limit: 100 });
    assert.deepEqual(
      mine!.tasks.map((task) => task.workflowId),
      [sharedTask],
      "`mcp-`'s list holds its own task only",
    );
    await Promise.all([sharedTask, aliceTask, alice2Task].map((id) => stack.tasks.handle(id).result()));
  });
});
