// The MCP server over Streamable HTTP, for both protocol generations at one address: a 2026-07-28
// request (it carries the per-request `_meta` envelope) is served statelessly by the SDK's handler,
// an instance per request, so any number of these servers behind a load balancer answer any
// request; a 2025-11-25 client gets a session of its own (server-sent elicitation, progress), as
// before. Safe by default: it binds 127.0.0.1; any other address needs a bearer token (from the
// environment, never a flag: flags show in `ps`), which every request must then carry; a browser
// page cannot drive it (the `Origin` and `Host` headers are checked, against DNS rebinding); the
// number of connections and sessions, their idle time, the time to send a request and its size are
// capped.
import { randomUUID, timingSafeEqual, createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, isInitializeRequest, isLegacyRequest } from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { mcpServing, type McpServerOptions } from './server';
import { isTaskSubscription, TaskSubscriptions } from './task-subscriptions';

/** Options of `startMcpHttpServer`. */
export interface McpHttpOptions extends McpServerOptions {
  /** Address to bind; default 127.0.0.1. Anything but a loopback address needs `token`. */
  host?: string;
  /** Port; default 8765 (0: any free port). */
  port?: number;
  /** The bearer token every request must carry (`Authorization: Bearer ...`); required unless bound to loopback. */
  token?: string;
  /** Origins allowed besides this server's own (http://127.0.0.1:PORT, http://localhost:PORT); default none. */
  allowedOrigins?: readonly string[];
  /** Host header values allowed besides the bind address and localhost; default none (set it behind a proxy). */
  allowedHosts?: readonly string[];
  /** At most this many open 2025-11-25 sessions; default 16. A new session beyond it is refused (503). */
  maxSessions?: number;
  /** At most this many open task notification streams (`subscriptions/listen`); default 64. */
  maxSubscriptions?: number;
  /** A session idle this long is closed; default 30 min. */
  sessionIdleMs?: number;
  /** Largest request body; default 1 MiB (413 beyond). */
  maxBodyBytes?: number;
  /** At most this many open connections; default 128 (a connection beyond it is closed at once). */
  maxConnections?: number;
  /** Time a client has to send a request's headers; default 10 s. */
  headersTimeoutMs?: number;
  /** Time a client has to send a whole request, body included (not the answer's time); default 30 s (408 beyond). */
  requestTimeoutMs?: number;
}

/** A running MCP HTTP server. */
export interface McpHttpServer {
  /** http://HOST:PORT/mcp */
  url: string;
  /** How many 2025-11-25 sessions are open. */
  sessions(): number;
  /** Closes every session and stream and stops listening. */
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** The path of the MCP endpoint: http://HOST:PORT/mcp. */
export const MCP_PATH = '/mcp';

interface Session {
  transport: NodeStreamableHTTPServerTransport;
  lastSeenMs: number;
}

/** Starts the MCP server over Streamable HTTP; rejects when the address needs a token and none is given. */
export async function startMcpHttpServer(options: McpHttpOptions): Promise<McpHttpServer> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token || undefined;
  if (!LOOPBACK.has(host) && !token)
    throw new TypeError(
      `Binding the MCP server to ${host} needs a bearer token: set BROWSERAI_MCP_TOKEN (a long random string) and give it to your MCP clients.`,
    );
  const maxSessions = options.maxSessions ?? 16;
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const headersTimeoutMs = options.headersTimeoutMs ?? 10_000;
  const requestTimeoutMs = Math.max(options.requestTimeoutMs ?? 30_000, headersTimeoutMs);
  const sessions = new Map<string, Session>();
  const { factory, mcpTasks, progressIntervalMs, log } = mcpServing(options);
  const onerror = (err: Error) => log(`mcp http: ${err.message}`);
  // 2026-07-28: an instance per request. 2025 traffic never reaches it (it has sessions below).
  const modern = createMcpHandler(factory, { legacy: 'reject', onerror, maxRequestBodySize: maxBodyBytes });
  const serveModern = toNodeHandler(modern, { onerror, maxRequestBodySize: maxBodyBytes });
  const subscriptions = new TaskSubscriptions(mcpTasks, progressIntervalMs, options.maxSubscriptions ?? 64);
  let origins = new Set<string>();
  let hosts = new Set<string>();
  // DNS rebinding aims at servers on loopback; elsewhere the token guards, unless hosts are listed.
  const checkHost = LOOPBACK.has(host) || (options.allowedHosts?.length ?? 0) > 0;

  const http: HttpServer = createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      // Node checks the two timeouts this often (its default, 30 s, would let a slow request run past them).
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, headersTimeoutMs / 2)),
    },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        log(`mcp http: ${err instanceof Error ? err.message : err}`);
        if (!res.headersSent) reply(res, 500, 'Internal error');
      });
    },
  );
  http.maxConnections = options.maxConnections ?? 128;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://placeholder');
    if (url.pathname !== MCP_PATH) return reply(res, 404, `Not found: the MCP endpoint is ${MCP_PATH}`);
    // A page on another site (or a rebound DNS name) must not reach us through the user's browser.
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin)) return reply(res, 403, `Origin ${origin} is not allowed`);
    if (checkHost && !hosts.has(req.headers.host ?? ''))
      return reply(res, 403, `Host ${req.headers.host ?? '(none)'} is not allowed`);
    if (token && !bearerMatches(req.headers.authorization, token)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return reply(res, 401, 'A bearer token is required (Authorization: Bearer <BROWSERAI_MCP_TOKEN>)');
    }
    let body: unknown;
    if (req.method === 'POST') {
      const read = await readJson(req, maxBodyBytes);
      if ('status' in read) return reply(res, read.status, read.message);
      body = read.body;
    }
    const classified = new Request(`http://placeholder${req.url ?? '/'}`, {
      method: req.method,
      headers: headerPairs(req),
    });
    if (!(await isLegacyRequest(classified, body, { maxRequestBodySize: maxBodyBytes }))) {
      if (isTaskSubscription(body)) return subscriptions.serve(req, res, body);
      return serveModern(req, res, body);
    }
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (!session) return reply(res, 404, 'Unknown or expired MCP session: initialize a new one');
      session.lastSeenMs = Date.now();
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body))
      return reply(res, 400, 'No MCP session: send an initialize request first');
    if (sessions.size >= maxSessions)
      return reply(res, 503, `Too many MCP sessions (${maxSessions}); close one or try again later`);
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, lastSeenMs: Date.now() }),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await (await factory({ era: 'legacy' })).connect(transport);
    await transport.handleRequest(req, res, body);
  }

  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const [id, session] of sessions) {
        if (now - session.lastSeenMs > idleMs) {
          sessions.delete(id);
          void session.transport.close().catch(() => undefined);
        }
      }
    },
    Math.min(idleMs, 60_000),
  );
  sweeper.unref();

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 8765, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  origins = new Set([
    `http://${hostInUrl}:${port}`,
    `http://localhost:${port}`,
    `http://127.0.0.1:${port}`,
    ...(options.allowedOrigins ?? []),
  ]);
  hosts = new Set([
    `${hostInUrl}:${port}`,
    `localhost:${port}`,
    `127.0.0.1:${port}`,
    `[::1]:${port}`,
    ...(options.allowedHosts ?? []),
  ]);
  return {
    url: `http://${hostInUrl}:${port}${MCP_PATH}`,
    sessions: () => sessions.size,
    async close() {
      clearInterval(sweeper);
      subscriptions.close();
      await Promise.all([...sessions.values()].map((s) => s.transport.close().catch(() => undefined)));
      sessions.clear();
      await modern.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** The request's headers as the Fetch API takes them (for classifying it: its body is read already). */
function headerPairs(req: IncomingMessage): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) pairs.push([name, v]);
    else if (value !== undefined) pairs.push([name, value]);
  }
  return pairs;
}

/** Constant-time comparison (of digests, so lengths leak nothing either). */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}

async function readJson(
  req: IncomingMessage,
  maxBytes: number,
): Promise<{ body: unknown } | { status: number; message: string }> {
  const tooLarge = { status: 413, message: `Request body over ${maxBytes} bytes` };
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) return tooLarge;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return tooLarge;
    chunks.push(chunk);
  }
  try {
    return { body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { status: 400, message: 'The request body is not JSON' };
  }
}

/** A JSON-RPC error answer of the server's own (before the protocol: guards, sessions). */
export function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}
