// Callers outside the operator's trust, each in its lane (docs/security.md): at a fleet limit, a
// Nexus caller and an MCP client asking priority 1, weight 1000, a key of their own or a 30-day
// timeout are refused, and their tasks (each naming a fresh project) queue under the caller's key,
// so each gets its fair share against the operator's batch; MCP servers with workflow ID prefixes
// that begin with one another reach only their own tasks. Real Nexus calls from another namespace
// through an endpoint, real MCP clients over Streamable HTTP, a real worker with a fleet limit, a
// dev server and the emulator.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Client as TemporalClient, type WorkflowHandle } from '@temporalio/client';
import { startMcpHttpServer, type McpHttpServer } from '../src/mcp';
import type { McpRecentTasks, McpTaskReport } from '../src/mcp/contract';
import type { BrowserTaskInput } from '../src/contract/input';
import { stateQuery } from '../src/contract/messages';
import { startNexusCallers } from './helpers/nexus-callers';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';
import type { BadCall, Refusal } from './workflows/nexus-callers';

const LIMIT = 2;
const CALLER_NAMESPACE = 'outside-callers';
/** The MCP server of the lane tests; not under `mcp-`, which the prefix test counts. */
const LANE_PREFIX = 'lanes-';
/** Tasks of each of the three: the operator's batch, the Nexus caller, the MCP client. */
const EACH = 6;

let stack: Stack;
const servers: McpHttpServer[] = [];
const clients: Client[] = [];
let callers: Awaited<ReturnType<typeof startNexusCallers>> | undefined;
let caller: TemporalClient;
let callerQueue: string;
let endpoint: string;
let lanes: Client;

before(async () => {
  stack = await startStack({
    temporalArgs: ['--namespace', CALLER_NAMESPACE],
    serve: {
      nexusService: true,
      fleetLimit: { maxRunning: LIMIT, checkIntervalMs: 1_000, account: `callers-${randomUUID().slice(0, 8)}` },
    },
  });
  // The endpoint routes to the stack's worker, which serves the Nexus service (`temporal operator nexus endpoint create`).
  endpoint = `browserai-${randomUUID().slice(0, 8)}`;
  await stack.env.connection.operatorService.createNexusEndpoint({
    spec: {
      name: endpoint,
      target: { worker: { namespace: stack.env.namespace ?? 'default', taskQueue: stack.taskQueue } },
    },
  });
  // A team's workflows in another namespace, with no BrowserAI token and no BrowserAI code.
  callers = await startNexusCallers(stack.env, CALLER_NAMESPACE);
  ({ client: caller, taskQueue: callerQueue } = callers);
  lanes = await mcpClient(LANE_PREFIX);
});
after(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await Promise.all(servers.map((server) => server.close()));
  await callers?.stop();
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

/** A one-second task whose instruction names it (`who-i`), so the emulator's creates say whose they are. */
function named(name: string, overrides: Partial<BrowserTaskInput> = {}): BrowserTaskInput {
  return taskInput({ instructions: [{ action: `Crawl ${name} [duration=1s]` }], ...overrides });
}

/** What a greedy caller asks for: the front of the line, the weight of a thousand, a key of its own, a month, the operator's codes. */
const GREEDY: Array<[Partial<BrowserTaskInput>, string]> = [
  [{ priority: 1 }, 'priority'],
  [{ fairnessWeight: 1000 }, 'fairnessWeight'],
  [{ fairnessKey: `fresh-${randomUUID()}` }, 'fairnessKey'],
  [{ activityOptions: { priorityKey: 1 } }, 'activityOptions.priorityKey'],
  [{ timeoutMs: 30 * 86_400_000 }, 'timeoutMs'],
  // Not a place in line, but the operator's codes: sent to the operator's number, typed into the caller's task.
  [{ codeRecipient: { address: '+14155550123' } }, 'codeRecipient.address'],
];

/** The tasks created at BrowserAI so far. */
const creates = () => stack.emulator.count('POST', /^\/tasks$/);

describe('at a fleet limit, every outside caller in its lane', () => {
  test('a Nexus caller asking priority 1, weight 1000, a key of its own or a 30-day timeout is refused, naming the setting', async () => {
    const before = creates();
    const handle = await caller.workflow.start('failuresThroughNexus', {
      taskQueue: callerQueue,
      workflowId: `greedy-${randomUUID()}`,
      args: [
        {
          endpoint,
          calls: GREEDY.map(([ask]): BadCall => ({ operation: 'runTask', input: { task: named('greedy', ask) } })),
        },
      ],
    });
    const refusals = (await handle.result()) as Refusal[];
    assert.equal(refusals.length, GREEDY.length);
    refusals.forEach((refusal, i) => {
      const [, field] = GREEDY[i]!;
      assert.equal(refusal.refusalType, 'NexusOptionNotAllowed', JSON.stringify(refusal));
      assert.equal(refusal.retryable, false);
      assert.match(
        refusal.message!,
        new RegExp(
          `task\\.${field.replace('.', '\\.')} .*through Nexus \\(the operator can allow it with the Nexus service option`,
        ),
      );
    });
    assert.match(
      refusals[0]!.message!,
      /task\.priority is not allowed through Nexus \(the operator can allow it with the Nexus service option priority: true, or WORKER_NEXUS_ALLOW=priority\)/,
    );
    assert.match(
      refusals[4]!.message!,
      /task\.timeoutMs 2592000000 is over the 7200000 ms allowed through Nexus .*maxTimeoutMs: MS, or WORKER_NEXUS_ALLOW=max-timeout-ms:MS/,
    );
    assert.equal(creates(), before, 'nothing was started');
  });

  test('an MCP client asking the same, for a task or a saved task run, is refused, naming the flag', async () => {
    const before = creates();
    for (const [ask, field] of GREEDY) {
      const { refused } = await call(lanes, 'run_task', { task: named('greedy', ask), waitSeconds: 0 });
      assert.match(
        refused ?? '',
        new RegExp(`task: ${field.replace('.', '\\.')} .*to MCP clients \\(the operator can allow it with --`),
      );
    }
    const { refused } = await call(lanes, 'run_saved_task', {
      savedTask: { name: 'nightly', overrides: { priority: 1 } },
      waitSeconds: 0,
    });
    assert.match(
      refused ?? '',
      /savedTask: overrides\.priority is not allowed to MCP clients \(the operator can allow it with --allow-priority\)/,
    );
    assert.equal(creates(), before, 'nothing was started');
  });

  test("each caller's tasks, a fresh project each, get no more than its fair share against the operator's batch", async () => {
    const state = (handle: WorkflowHandle) => handle.query(stateQuery).catch(() => undefined);
    const blockers = await Promise.all(
      [0, 1].map((i) =>
        stack.tasks.start(named(`block-${i}`, { instructions: [{ action: `Crawl block-${i} [duration=60s]` }] })),
      ),
    );
    await eventually('the blockers hold both slots', async () =>
      (await Promise.all(blockers.map(state))).every((s) => s?.fleetSlot?.held),
    );
    const mark = stack.emulator.requests.length;

    // The operator's batch: one project, so one key. The callers name a fresh project per task,
    // which would have been a fresh fairness key per task, each taking a turn of its own.
    const batch = await Promise.all(
      Array.from({ length: EACH }, (_, i) => stack.tasks.start(named(`op-${i}`, { project: 'operator-batch' }))),
    );
    const nexusCaller = await caller.workflow.start('tasksThroughNexus', {
      taskQueue: callerQueue,
      workflowId: `lane-${randomUUID()}`,
      args: [
        { endpoint, tasks: Array.from({ length: EACH }, (_, i) => named(`nx-${i}`, { project: `fresh-nx-${i}` })) },
      ],
    });
    const mcpIds: string[] = [];
    for (let i = 0; i < EACH; i++) {
      const { answer } = await call(lanes, 'run_task', {
        task: named(`mcp-${i}`, { project: `fresh-mcp-${i}` }),
        waitSeconds: 0,
      });
      mcpIds.push(answer!.workflowId);
    }
    const mcpTasks = mcpIds.map((id) => stack.tasks.handle(id));
    const nexusTasks = await eventually('the Nexus tasks are listed', async () => {
      const listed: WorkflowHandle[] = [];
      for await (const w of stack.env.client.workflow.list({
        query: "WorkflowId STARTS_WITH 'browserai-nexus-' AND ExecutionStatus = 'Running'",
      }))
        listed.push(stack.tasks.handle(w.workflowId));
      return listed.length === EACH && listed;
    });
    await eventually('all wait in line', async () =>
      (await Promise.all([...batch, ...nexusTasks, ...mcpTasks].map(state))).every(
        (s) => s?.status === 'waiting_for_slot',
      ),
    );

    // Their workflows carry no priority of the callers' choosing: the default, under the caller's key.
    const priorities = await Promise.all(
      [nexusTasks[0]!, mcpTasks[0]!].map(async (h) => (await h.describe()).raw.workflowExecutionInfo?.priority),
    );
    assert.deepEqual(
      priorities.map((p) => [p?.priorityKey || undefined, p?.fairnessKey, p?.fairnessWeight || undefined]),
      [
        [undefined, `nexus:${endpoint}`, undefined],
        [undefined, LANE_PREFIX, undefined],
      ],
    );

    await Promise.all(blockers.map((b) => b.cancel()));
    await Promise.all([...batch, ...mcpTasks].map((h) => h.result()));
    await nexusCaller.result();

    const order = stack.emulator.requests
      .slice(mark)
      .filter((r) => r.method === 'POST' && r.path === '/tasks')
      .map((r) => /Crawl (op|nx|mcp)-/.exec(JSON.stringify(r.body))?.[1])
      // Only this test's tasks: a create of an earlier test's task may land after the mark.
      .filter((who) => who !== undefined);
    assert.equal(order.length, 3 * EACH, `one create each: ${order.join(' ')}`);
    // While all three wait, slots go round the three keys: 3 each of the first 9 (one either way, for two slots freed at once).
    const first = order.slice(0, 9);
    const share = (who: string) => first.filter((w) => w === who).length;
    const shares = `first ${first.length} grants: ${first.join(' ')}`;
    assert.ok(share('op') >= 2, `the operator's batch gets its share: ${shares}`);
    assert.ok(share('nx') <= 4, `the Nexus caller no more than its share: ${shares}`);
    assert.ok(share('mcp') <= 4, `the MCP client no more than its share: ${shares}`);
  });
});

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
