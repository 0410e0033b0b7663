// The HTTP side of the emulator: a real server on a real port, so clients are tested with their
// own HTTP stack, keep-alive pool, timeouts and error paths, exactly as against BrowserAI. It
// records every API request (tests assert how many creates, polls or appends a client made),
// applies injected faults, and offers unauthenticated control endpoints under /__emulator/ so a
// worker or benchmark in another process can be observed and disturbed too.

import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { INVALID_JSON, MESSAGES, errorReply, matchRoute, type ApiContext, type Reply, type RequestBody } from './api';
import { artifactContent, parseArtifactPath } from './artifacts';
import { FaultQueue, defaultFaultMessage, faultFromJson, type Fault } from './faults';
import { SavedTaskStore } from './saved-tasks';
import { TaskStore, type EmulatedTask } from './tasks';

export interface EmulatorOptions {
  /** 0 picks a free port. Default 0. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default `emulator-token`. */
  apiToken?: string;
  /** Running time of a task without a duration marker. Default 1500 ms. */
  defaultDurationMs?: number;
  /** Time a new task stays `queued`. Default 200 ms. */
  queueMs?: number;
  /** Project names that do not exist, so creating a task in them fails. Default `['missing-project']`. */
  unknownProjects?: string[];
}

export interface RecordedRequest {
  method: string;
  /** Without the `/api/v1` prefix and the query string, still percent-encoded, e.g. `/tasks/exec_1f…`. */
  path: string;
  /** Status answered (or that would have been, under `dropAfterHandling`); 0 while unanswered or hung. */
  status: number;
  /** Arrival time, epoch milliseconds. */
  at: number;
  /** Parsed JSON body of POST and PUT requests (the raw text when it is not JSON). */
  body?: unknown;
  /** Set when an injected fault shaped the outcome. */
  fault?: 'status' | 'hang' | 'drop' | 'delay';
}

export type { Fault } from './faults';
export type { EmulatedTask } from './tasks';

const API_PREFIX = '/api/v1';
const CONTROL_PREFIX = '/__emulator';
const ARTIFACT_PREFIX = '/artifacts/';
/** Far above any real instruction list; only stops a runaway client from exhausting memory. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const TOO_LARGE = Symbol('body too large');

export class BrowserAIEmulator {
  /** e.g. `http://127.0.0.1:40123/api/v1`. */
  readonly baseUrl: string;
  readonly apiToken: string;
  /** Every API request in arrival order; emptied (same array) by {@link resetRequests}. */
  readonly requests: RecordedRequest[] = [];

  private readonly origin: string;
  private readonly expectedAuthorization: Buffer;
  private readonly tasks: TaskStore;
  private readonly saved = new SavedTaskStore();
  private readonly faults = new FaultQueue();
  private readonly unknownProjects: ReadonlySet<string>;
  private readonly endpointCounts = new Map<string, number>();
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly server: Server,
    origin: string,
    options: Required<EmulatorOptions>,
  ) {
    this.origin = origin;
    this.baseUrl = `${origin}${API_PREFIX}`;
    this.apiToken = options.apiToken;
    this.expectedAuthorization = Buffer.from(`apikey ${options.apiToken}`);
    this.tasks = new TaskStore({ queueMs: options.queueMs, defaultDurationMs: options.defaultDurationMs });
    this.unknownProjects = new Set(options.unknownProjects);
  }

  static async start(options: EmulatorOptions = {}): Promise<BrowserAIEmulator> {
    const resolved: Required<EmulatorOptions> = {
      port: options.port ?? 0,
      host: options.host ?? '127.0.0.1',
      apiToken: options.apiToken ?? 'emulator-token',
      defaultDurationMs: options.defaultDurationMs ?? 1500,
      queueMs: options.queueMs ?? 200,
      unknownProjects: options.unknownProjects ?? ['missing-project'],
    };
    if (!Number.isInteger(resolved.port) || resolved.port < 0 || resolved.port > 65535) {
      throw new RangeError(`Invalid emulator port: ${resolved.port}`);
    }
    for (const name of ['defaultDurationMs', 'queueMs'] as const) {
      if (!Number.isFinite(resolved[name]) || resolved[name] < 0) throw new RangeError(`Invalid ${name}: ${resolved[name]}`);
    }

    let emulator: BrowserAIEmulator | undefined;
    const server = createServer((req, res) => {
      emulator!.onRequest(req, res).catch(() => {
        if (!res.headersSent) sendJson(res, errorReply(500, MESSAGES.internal));
        else res.destroy();
      });
    });
    // Longer than any client's idle timeout (undici 4 s, Node's agent 5 s), so the client always
    // closes an idle keep-alive socket first and never reuses one the server is just closing.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;

    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // A large backlog: the benchmark opens hundreds of connections at once.
      server.listen({ port: resolved.port, host: resolved.host, backlog: 2048 }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const host = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;
    emulator = new BrowserAIEmulator(server, `http://${host}:${port}`, resolved);
    return emulator;
  }

  inject(fault: Fault): void {
    this.faults.add(fault);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  resetRequests(): void {
    this.requests.length = 0;
    this.endpointCounts.clear();
  }

  /** Recorded requests with this method whose path (without `/api/v1`) matches the pattern. */
  count(method: string, pathPattern: RegExp): number {
    const wanted = method.toUpperCase();
    return this.requests.filter((request) => {
      pathPattern.lastIndex = 0;
      return request.method === wanted && pathPattern.test(request.path);
    }).length;
  }

  /** A snapshot of the task as of now, or undefined for an unknown execution ID. */
  task(executionId: string): EmulatedTask | undefined {
    return this.tasks.get(executionId)?.view(Date.now());
  }

  /** Every task, as `task()` shows it: lets a harness react to BrowserAI's side as a user would. */
  listTasks(): EmulatedTask[] {
    return this.tasks.list(Date.now());
  }

  /** Stops listening and destroys every connection, hung ones included, so it never waits on a client. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.closing;
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const path = normalizePath(req.url ?? '/');
    const raw = await readBody(req);

    if (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`)) {
      await this.onApiRequest(req, res, method, path.slice(API_PREFIX.length) || '/', raw);
    } else if (path.startsWith(`${CONTROL_PREFIX}/`)) {
      this.onControlRequest(res, method, path.slice(CONTROL_PREFIX.length), raw);
    } else if (path.startsWith(ARTIFACT_PREFIX) && (method === 'GET' || method === 'HEAD')) {
      this.onArtifactRequest(res, path);
    } else {
      sendJson(res, errorReply(404, MESSAGES.notFound));
    }
  }

  private async onApiRequest(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    path: string,
    raw: Buffer | typeof TOO_LARGE,
  ): Promise<void> {
    const body = parseBody(raw);
    const record: RecordedRequest = { method, path, status: 0, at: Date.now() };
    if (method === 'POST' || method === 'PUT') {
      if (body !== INVALID_JSON) record.body = body;
      else if (raw !== TOO_LARGE) record.body = raw.toString('utf8');
    }
    this.requests.push(record);
    const route = matchRoute(method, path);
    this.endpointCounts.set(route.key, (this.endpointCounts.get(route.key) ?? 0) + 1);

    const fault = this.faults.take(method, path);
    if (fault?.hang) {
      // Nothing is ever written; close() or the client's own abort ends the connection.
      record.fault = 'hang';
      return;
    }
    if (fault?.delayMs !== undefined) {
      record.fault = 'delay';
      await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
    } else if (fault && !fault.dropAfterHandling) {
      record.fault = 'status';
      const reply = faultReply(fault);
      record.status = reply.status;
      sendJson(res, reply);
      return;
    }

    let reply: Reply;
    if (raw === TOO_LARGE) {
      reply = errorReply(413, 'Payload too large');
    } else if (!this.isAuthorized(req)) {
      reply = errorReply(401, MESSAGES.unauthorized);
    } else if (route.kind === 'error') {
      reply = route.reply;
    } else {
      reply = route.run(this.context(req), body);
    }
    record.status = reply.status;

    if (fault?.dropAfterHandling) {
      record.fault = 'drop';
      res.socket?.destroy();
      return;
    }
    sendJson(res, reply);
  }

  private onControlRequest(res: ServerResponse, method: string, path: string, raw: Buffer | typeof TOO_LARGE): void {
    const endpoint = `${method} ${path}`;
    if (endpoint === 'GET /requests') {
      sendJson(res, { status: 200, body: this.requests.map(({ body: _body, ...rest }) => rest) });
    } else if (endpoint === 'DELETE /requests') {
      this.resetRequests();
      sendJson(res, { status: 200, body: { ok: true } });
    } else if (endpoint === 'GET /stats') {
      sendJson(res, { status: 200, body: { requests: Object.fromEntries(this.endpointCounts), tasks: this.tasks.size } });
    } else if (endpoint === 'GET /faults') {
      const pending = this.faults.pending.map((fault) => ({ ...fault, path: fault.path?.source }));
      sendJson(res, { status: 200, body: pending });
    } else if (endpoint === 'POST /faults') {
      const fault = faultFromJson(parseBody(raw));
      if (typeof fault === 'string') {
        sendJson(res, errorReply(400, fault));
      } else {
        this.inject(fault);
        sendJson(res, { status: 200, body: { ok: true } });
      }
    } else if (endpoint === 'DELETE /faults') {
      this.clearFaults();
      sendJson(res, { status: 200, body: { ok: true } });
    } else if (method === 'GET' && path.startsWith('/tasks/')) {
      const task = this.task(safeDecode(path.slice('/tasks/'.length)) ?? '');
      sendJson(res, task ? { status: 200, body: task } : errorReply(404, MESSAGES.taskNotFound));
    } else {
      sendJson(res, errorReply(404, MESSAGES.notFound));
    }
  }

  private onArtifactRequest(res: ServerResponse, path: string): void {
    const request = parseArtifactPath(path);
    const entry = request && this.tasks.get(request.executionId)?.entry(request.historyIndex, Date.now());
    if (!request || !entry) {
      sendJson(res, errorReply(404, MESSAGES.notFound));
      return;
    }
    const { contentType, body } = artifactContent(request.kind, entry.step);
    res.writeHead(200, { 'content-type': contentType, 'content-length': body.length });
    res.end(body);
  }

  private isAuthorized(req: IncomingMessage): boolean {
    const header = req.headers.authorization;
    if (typeof header !== 'string') return false;
    const given = Buffer.from(header);
    return given.length === this.expectedAuthorization.length && timingSafeEqual(given, this.expectedAuthorization);
  }

  private context(req: IncomingMessage): ApiContext {
    // Artifact links use the address the client reached us at (e.g. `localhost` or a container name).
    const host = req.headers.host;
    return {
      tasks: this.tasks,
      saved: this.saved,
      unknownProjects: this.unknownProjects,
      now: Date.now(),
      origin: host && /^[A-Za-z0-9.\-:[\]]+$/.test(host) ? `http://${host}` : this.origin,
    };
  }
}

function faultReply(fault: Fault): Reply {
  const status = fault.status ?? 500;
  const reply = errorReply(status, fault.error ?? defaultFaultMessage(status));
  const retryAfter = fault.retryAfterSeconds ?? (status === 429 ? 1 : undefined);
  if (retryAfter !== undefined) reply.headers = { 'retry-after': String(Math.ceil(retryAfter)) };
  return reply;
}

function sendJson(res: ServerResponse, reply: Reply): void {
  const json = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    ...reply.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}

/** Path without query and trailing slash, still percent-encoded (a `%2F` in a name must not split it). */
function normalizePath(url: string): string {
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function readBody(req: IncomingMessage): Promise<Buffer | typeof TOO_LARGE> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Keep draining past the limit, so the answer still reaches the client.
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? TOO_LARGE : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseBody(raw: Buffer | typeof TOO_LARGE): RequestBody {
  if (raw === TOO_LARGE) return INVALID_JSON;
  if (raw.length === 0) return undefined;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return INVALID_JSON;
  }
}

function safeDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}
