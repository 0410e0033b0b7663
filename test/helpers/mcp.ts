// Talking MCP 2026-07-28 to our server from outside, for the tests: the SDK v2 client (pinned to
// the revision) and a raw JSON-RPC connection (what the Tasks extension's client dispatches, and
// what a test needs to hand the server a tampered state), over HTTP or a child process's stdio;
// and a small round-robin proxy, the load balancer in front of several server processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Stack } from './stack';

export const CLI = require.resolve('../../src/cli/main');
export const MODERN = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The environment of a CLI `mcp` child on the stack's namespace and queue, minting under `prefix`, quick to report. */
export function mcpChildEnv(stack: Stack, prefix: string, more: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: stack.env.address,
    TEMPORAL_NAMESPACE: stack.env.namespace ?? 'default',
    TEMPORAL_TASK_QUEUE: stack.taskQueue,
    BROWSERAI_MCP_ID_PREFIX: prefix,
    BROWSERAI_MCP_PROGRESS_MS: '100',
    ...more,
  };
}

/** A JSON-RPC answer, as the Tasks extension's client port takes it. */
export type RpcAnswer = { kind: 'result'; result: Record<string, unknown> } | { kind: 'error'; error: RpcError };
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A raw MCP connection: JSON-RPC requests, framed as 2026-07-28 asks (envelope, headers). */
export interface RawMcp {
  /** Sends a request as given (its `_meta` envelope included); adds `jsonrpc` and `id`. */
  dispatch(request: { method: string; params?: Record<string, unknown> }): Promise<RpcAnswer>;
  /** Sends `method` with the 2026-07-28 envelope of a client with `capabilities`. */
  request(method: string, params: Record<string, unknown>, capabilities?: Record<string, unknown>): Promise<RpcAnswer>;
  close(): Promise<void>;
}

/** The per-request envelope of a 2026-07-28 client. */
export function envelope(capabilities: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-test-client', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
}

function framed(
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown>,
): { method: string; params: Record<string, unknown> } {
  const meta = (params._meta as Record<string, unknown> | undefined) ?? {};
  return { method, params: { ...params, _meta: { ...meta, ...envelope(capabilities) } } };
}

/** The SEP-2243 headers of a request: Mcp-Method, and Mcp-Name for the methods that name something. */
function standardHeaders(method: string, params: Record<string, unknown> | undefined): Record<string, string> {
  const name = method.startsWith('tasks/') ? params?.taskId : method === 'tools/call' ? params?.name : undefined;
  return {
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
  };
}

let nextId = 1;

/** Raw MCP over HTTP (a POST per request; a JSON or an SSE answer). */
export function rawHttp(url: string, headers: Record<string, string> = {}): RawMcp {
  const dispatch: RawMcp['dispatch'] = async ({ method, params }) => {
    const id = nextId++;
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...standardHeaders(method, params),
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    const text = await response.text();
    const messages = (response.headers.get('content-type') ?? '').includes('text/event-stream')
      ? text
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>)
      : [JSON.parse(text) as Record<string, unknown>];
    const answer = messages.find((m) => m.id === id) ?? messages.at(-1);
    if (!answer) throw new Error(`no answer to ${method} (HTTP ${response.status})`);
    return answerOf(answer);
  };
  return {
    dispatch,
    request: (method, params, capabilities = {}) => dispatch(framed(method, params, capabilities)),
    close: async () => undefined,
  };
}

/** Raw MCP over a child process's stdio (the CLI's `mcp`), one JSON-RPC message a line. */
export function rawStdio(env: NodeJS.ProcessEnv): RawMcp & { child: ChildProcess } {
  const child = spawn(process.execPath, [CLI, 'mcp'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  const waiting = new Map<number, (message: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    if (typeof message.id === 'number') waiting.get(message.id)?.(message);
  });
  const dispatch: RawMcp['dispatch'] = ({ method, params }) => {
    const id = nextId++;
    return new Promise((resolve) => {
      waiting.set(id, (message) => {
        waiting.delete(id);
        resolve(answerOf(message));
      });
      child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  };
  return {
    child,
    dispatch,
    request: (method, params, capabilities = {}) => dispatch(framed(method, params, capabilities)),
    async close() {
      child.stdin!.end();
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

function answerOf(message: Record<string, unknown>): RpcAnswer {
  return 'error' in message
    ? { kind: 'error', error: message.error as RpcError }
    : { kind: 'result', result: message.result as Record<string, unknown> };
}

/** The SDK v2 client on 2026-07-28, over HTTP (`url`) or stdio (a CLI child with `env`). */
export async function modernClient(
  where: { url: string } | { env: NodeJS.ProcessEnv },
  options: {
    answer?: (message: string) => { action: 'accept'; content: { code: string } } | { action: 'decline' };
  } = {},
): Promise<Client> {
  const client = new Client(
    { name: 'test-client-2026', version: '1.0.0' },
    {
      capabilities: options.answer ? { elicitation: {} } : {},
      versionNegotiation: { mode: { pin: MODERN } },
    },
  );
  if (options.answer) {
    const answer = options.answer;
    client.setRequestHandler('elicitation/create', (request) => answer(request.params.message));
  }
  const transport =
    'url' in where
      ? new StreamableHTTPClientTransport(new URL(where.url))
      : new StdioClientTransport({
          command: process.execPath,
          args: [CLI, 'mcp'],
          env: where.env as Record<string, string>,
          stderr: 'ignore',
        });
  await client.connect(transport);
  return client;
}

/** An HTTP server of the CLI in a child process (`mcp --http --port 0`), to be killed. */
export async function httpChild(env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, 'mcp', '--http', '--port', '0'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Read to the end: a child whose stderr is closed dies on its next log line.
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += String(chunk);
      const found = /listening on (http:\S+)/.exec(stderr)?.[1];
      if (found) resolve(found);
    });
    child.once('exit', () => reject(new Error(`the MCP HTTP child did not start: ${stderr}`)));
  });
  return { url, child };
}

/**
 * A round-robin proxy, as a plain load balancer is: each request goes to the next upstream, and to
 * the one after when that one cannot be reached (a killed instance). No affinity, no state.
 */
export async function roundRobinProxy(
  upstreams: string[],
): Promise<{ url: string; served: Array<{ upstream: string; method: string }>; close(): Promise<void> }> {
  let next = 0;
  /** Which upstream answered each request, and its method (the Mcp-Method header). */
  const served: Array<{ upstream: string; method: string }> = [];
  const proxy: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const attempt = (tries: number) => {
        const upstream = new URL(upstreams[next++ % upstreams.length]!);
        const forward = httpRequest(
          upstream,
          { method: req.method, headers: { ...req.headers, host: upstream.host } },
          (answer) => {
            served.push({ upstream: upstream.origin, method: String(req.headers['mcp-method'] ?? req.method) });
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forward.on('error', (err) => {
          if (tries > 1) attempt(tries - 1);
          else if (!res.headersSent) res.writeHead(502).end(String(err));
        });
        forward.end(body);
      };
      attempt(upstreams.length);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
