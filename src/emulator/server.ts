// The HTTP side of the emulator: a real server on a real port, so clients are tested with their
// own HTTP stack, keep-alive pool, timeouts and error paths, exactly as against BrowserAI. It
// records every API request (tests assert how many creates, polls or appends a client made),
// applies injected faults (queued ones, and random ones for chaos tests), and offers
// unauthenticated control endpoints under /__emulator/ so a worker or benchmark in another process
// can be observed and disturbed too.

import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { INVALID_JSON, MESSAGES, errorReply, matchRoute, type ApiContext, type Reply, type RequestBody } from './api';
import { artifactContent, parseArtifactPath } from './artifacts';
import { CodeSender, type EmulatorInbox } from './code-sender';
import { answerText } from './hostile';
import type { BrowserConnection } from './browser-connection';
import { FaultQueue, defaultFaultMessage, faultFromJson, type Fault, type FaultAnswer } from './faults';
import {
  DEFAULT_EMULATOR_MODE,
  EMULATOR_MODES,
  ENDED_TASK_ANSWERS,
  defaultEndedTaskAnswer,
  isEmulatorMode,
  isEndedTaskAnswer,
  type EmulatorMode,
  type EndedTaskAnswer,
} from './mode';
import { RandomFaults, randomFaultOptionsFrom, type RandomFaultKind, type RandomFaultOptions } from './random-faults';
import { SavedTaskStore } from './saved-tasks';
import { DEFAULT_AWAITING_IDLE_CLOSE_MS, DEFAULT_AWAITING_LAG_MS } from './scenario';
import { TaskStore, type DurationChooser, type EmulatedTask } from './tasks';
import type { EmulatorTotpSecret } from './totp-check';

/**
 * Options of `BrowserAIEmulator.start`: where it listens, its token, its mode, and the timings and faults of its
 * tasks.
 */
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
  /**
   * How long a task that is `awaiting` keeps reporting `awaiting` after instructions are appended
   * or replaced, before it goes `running` (its run ends that much later). BrowserAI's public MCP
   * client waits 1 s after an append because of this. `[awaiting-lag=...]` overrides it per task.
   * Default 1000 ms.
   */
  awaitingLagMs?: number;
  /**
   * How long a task may stay `awaiting` with no instructions (an awaitable session after its
   * instructions, or a `[needs-code]` task at the code form) before the session closes by itself
   * and the task ends `failed` with an `error` saying so. `[idle-close=...]` overrides it per task;
   * 0 never closes. Default 5 minutes: a GUESS borrowed from Bright Data's separate headless-browser
   * product (its idle sessions close after 5 minutes); BrowserAI's own limit is not documented.
   */
  awaitingIdleCloseMs?: number;
  /**
   * Which answers the emulator gives. `observed` (default): as real BrowserAI was seen to answer:
   * no `started`, `estimatedCompletion` or `scriptId`, `progress` only while a task has not ended,
   * `error` of a failed task as an object `{code, type, message}`. `documented`: every field the
   * interface description lists, `error` as a string. See mode.ts and docs/emulator.md.
   */
  mode?: EmulatorMode;
  /**
   * Status of the answer to instructions (append, replace) or a stop command for a task that has
   * ended, which BrowserAI's docs do not give: 400 with the endpoint's documented message
   * (`Invalid input` / `Invalid command or task ID`), 404 `Task not found`, or 409 `Task already
   * ended`. Default 400 in `observed` mode, 409 in `documented` mode.
   */
  endedTaskAnswer?: EndedTaskAnswer;
  /**
   * Chooses a task's running duration (milliseconds, for each of its runs) from its create
   * request, called once per `POST /tasks` with the project and the instruction texts. A number
   * wins over `[duration=...]`, `[slow]` and `defaultDurationMs`, so a benchmark can run the same
   * instructions for different durations across rounds; undefined leaves the task to those. A
   * negative or non-finite number is a bug in the caller: the create then answers 500.
   */
  durationFor?: (task: { project: string; instructions: string[] }) => number | undefined;
  /**
   * Whether a task logs, when its browser opens, the connection URL with its per-task proxy
   * password and the inspector link embedding it (`Connecting to browser: wss://…`,
   * `Inspector: https://…?wss=…`), so clients' redaction meets a real-looking secret; see
   * {@link BrowserAIEmulator.taskSecrets}. In both modes. Default true.
   */
  logBrowserConnection?: boolean;
  /**
   * The emulator's own copies of TOTP secrets (base32, 6 digits, SHA-1; 30-s steps unless a
   * `period` in seconds is given), by name: a
   * `[needs-totp=NAME]` task accepts only the code of secret NAME for the time step in which the
   * code arrives, as a site checking an authenticator code strictly would. Default none.
   */
  totpSecrets?: Record<string, EmulatorTotpSecret>;
  /**
   * Gives each API request (never /__emulator/ ones), with probability `rate`, one random fault.
   * Off by default; see also {@link BrowserAIEmulator.setRandomFaults}.
   */
  randomFaults?: RandomFaultOptions;
  /**
   * Host names (without port) the control endpoints (/__emulator/) answer to, besides `localhost`,
   * `127.0.0.1`, `::1` and the `host` the emulator listens on (when not a wildcard such as
   * 0.0.0.0). A request naming any other host in `Host` (or `Origin`) is refused with 403: the
   * endpoints need no token, and without the check a web page could reach them by DNS rebinding.
   * Default none; `EMULATOR_CONTROL_HOSTS` (comma list) for `npm run emulator`.
   */
  controlHosts?: string[];
  /**
   * The account's limit on tasks running at once (queued, running or awaiting): a create past it
   * is refused with 429 `{"error": "Too many running tasks"}` and no `Retry-After`, and creates
   * nothing. A GUESS: BrowserAI documents no such limit or answer (no version documents a 429), but
   * a plan surely bounds concurrent browser sessions, and a 429 is what a limit would most likely
   * answer. 0 (default): no limit, as nothing is known.
   */
  maxRunningTasks?: number;
  /**
   * Where `[sms-code=…]` and `[email-code=…]` tasks send their codes, as a site does through
   * Twilio or Mailgun: the inbox's URL and the secrets it verifies. Default none (they send nothing).
   */
  inbox?: EmulatorInbox;
}

type ResolvedOptions = Required<Omit<EmulatorOptions, 'randomFaults' | 'durationFor' | 'inbox'>> &
  Pick<EmulatorOptions, 'randomFaults' | 'inbox'> & { durationFor: DurationChooser | undefined };

/** An API request the emulator received, as tests inspect it. */
export interface RecordedRequest {
  method: string;
  /** Without the `/api/v1` prefix and the query string, still percent-encoded, e.g. `/tasks/6650c2f1…`. */
  path: string;
  /** Status answered (or that would have been, under `dropAfterHandling`); 0 while unanswered or hung. */
  status: number;
  /** Arrival time, epoch milliseconds. */
  at: number;
  /** Parsed JSON body of POST and PUT requests (the raw text when it is not JSON). */
  body?: unknown;
  /** Set when an injected fault shaped the outcome. */
  fault?: 'status' | 'hang' | 'drop' | 'delay' | 'answer' | 'trickle';
  /** Set when that fault was a random one (`randomFaults`). */
  randomFault?: RandomFaultKind;
}

export type { Fault, FaultAnswer } from './faults';
export type { RandomFaultKind, RandomFaultOptions } from './random-faults';
export type { EmulatedTask } from './tasks';
export type { BrowserConnection } from './browser-connection';
export type { EmulatorMode, EndedTaskAnswer } from './mode';

const API_PREFIX = '/api/v1';
const CONTROL_PREFIX = '/__emulator';
const ARTIFACT_PREFIX = '/artifacts/';
/** Far above any real instruction list; only stops a runaway client from exhausting memory. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const TOO_LARGE = Symbol('body too large');

/**
 * A BrowserAI-compatible HTTP server for tests and local runs: every endpoint the project calls, tasks driven by
 * markers in their instructions, injectable faults, and inspection of what it received.
 */
export class BrowserAIEmulator {
  /** e.g. `http://127.0.0.1:40123/api/v1`. */
  readonly baseUrl: string;
  readonly apiToken: string;
  /** Every API request in arrival order; emptied (same array) by {@link resetRequests}. */
  readonly requests: RecordedRequest[] = [];
  /** Which answers this emulator gives (see {@link EmulatorOptions.mode}). */
  readonly mode: EmulatorMode;
  /** Status it answers to instructions or a stop for an ended task (see {@link EmulatorOptions.endedTaskAnswer}). */
  readonly endedTaskAnswer: EndedTaskAnswer;

  private readonly origin: string;
  private readonly expectedAuthorization: Buffer;
  private readonly tasks: TaskStore;
  private readonly saved = new SavedTaskStore();
  private readonly faults = new FaultQueue();
  private readonly randomFaults = new RandomFaults();
  /** Sockets of hung requests: destroyed on close, whatever else the server does with its connections. */
  private readonly hungSockets = new Set<Socket>();
  private readonly unknownProjects: ReadonlySet<string>;
  /** Host names the control endpoints answer to (see EmulatorOptions.controlHosts). */
  private readonly controlHosts: ReadonlySet<string>;
  private readonly endpointCounts = new Map<string, number>();
  private codeSender: CodeSender | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly server: Server,
    origin: string,
    options: ResolvedOptions,
  ) {
    this.origin = origin;
    this.baseUrl = `${origin}${API_PREFIX}`;
    this.apiToken = options.apiToken;
    this.expectedAuthorization = Buffer.from(`apikey ${options.apiToken}`);
    this.mode = options.mode;
    this.endedTaskAnswer = options.endedTaskAnswer;
    this.tasks = new TaskStore({
      queueMs: options.queueMs,
      defaultDurationMs: options.defaultDurationMs,
      awaitingLagMs: options.awaitingLagMs,
      awaitingIdleCloseMs: options.awaitingIdleCloseMs,
      durationFor: options.durationFor,
      logBrowserConnection: options.logBrowserConnection,
      totpSecrets: options.totpSecrets,
      maxRunningTasks: options.maxRunningTasks,
    });
    this.unknownProjects = new Set(options.unknownProjects);
    const listening = options.host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    this.controlHosts = new Set([
      'localhost',
      '127.0.0.1',
      '::1',
      // A wildcard address is no name a client uses: it would let every name in.
      ...(listening === '0.0.0.0' || listening === '::' ? [] : [listening]),
      ...options.controlHosts.map((host) => host.trim().toLowerCase()),
    ]);
    this.randomFaults.set(options.randomFaults);
    if (options.inbox) this.sendCodesTo(options.inbox);
  }

  /** Starts the emulator and resolves once it listens. */
  static async start(options: EmulatorOptions = {}): Promise<BrowserAIEmulator> {
    const mode = options.mode ?? DEFAULT_EMULATOR_MODE;
    if (!isEmulatorMode(mode))
      throw new RangeError(`Invalid mode: ${String(mode)} (known: ${EMULATOR_MODES.join(', ')})`);
    const resolved: ResolvedOptions = {
      port: options.port ?? 0,
      host: options.host ?? '127.0.0.1',
      apiToken: options.apiToken ?? 'emulator-token',
      defaultDurationMs: options.defaultDurationMs ?? 1500,
      queueMs: options.queueMs ?? 200,
      unknownProjects: options.unknownProjects ?? ['missing-project'],
      awaitingLagMs: options.awaitingLagMs ?? DEFAULT_AWAITING_LAG_MS,
      awaitingIdleCloseMs: options.awaitingIdleCloseMs ?? DEFAULT_AWAITING_IDLE_CLOSE_MS,
      mode,
      endedTaskAnswer: options.endedTaskAnswer ?? defaultEndedTaskAnswer(mode),
      durationFor: options.durationFor,
      logBrowserConnection: options.logBrowserConnection ?? true,
      totpSecrets: options.totpSecrets ?? {},
      randomFaults: options.randomFaults,
      controlHosts: options.controlHosts ?? [],
      maxRunningTasks: options.maxRunningTasks ?? 0,
      inbox: options.inbox,
    };
    if (!Number.isInteger(resolved.port) || resolved.port < 0 || resolved.port > 65535) {
      throw new RangeError(`Invalid emulator port: ${resolved.port}`);
    }
    for (const name of ['defaultDurationMs', 'queueMs', 'awaitingLagMs', 'awaitingIdleCloseMs'] as const) {
      if (!Number.isFinite(resolved[name]) || resolved[name] < 0)
        throw new RangeError(`Invalid ${name}: ${resolved[name]}`);
    }
    if (!isEndedTaskAnswer(resolved.endedTaskAnswer)) {
      throw new RangeError(
        `Invalid endedTaskAnswer: ${String(resolved.endedTaskAnswer)} (known: ${ENDED_TASK_ANSWERS.join(', ')})`,
      );
    }
    if (resolved.randomFaults !== undefined) {
      const problem = randomFaultOptionsFrom(resolved.randomFaults);
      if (typeof problem === 'string') throw new RangeError(`Invalid randomFaults: ${problem}`);
    }

    const server = createServer((req, res) => {
      // `emulator` is set below, before the server listens.
      emulator.onRequest(req, res).catch(() => {
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
    const emulator = new BrowserAIEmulator(server, `http://${host}:${port}`, resolved);
    return emulator;
  }

  /** Applies a fault to the next matching request(s). */
  inject(fault: Fault): void {
    this.faults.add(fault);
  }

  /** Removes every injected fault not yet used. */
  clearFaults(): void {
    this.faults.clear();
  }

  /** Where `[sms-code=…]` and `[email-code=…]` tasks send their codes from now on (see {@link EmulatorOptions.inbox}). */
  sendCodesTo(inbox: EmulatorInbox): void {
    this.codeSender?.close();
    this.codeSender = new CodeSender(inbox);
    this.tasks.codeSender = this.codeSender;
  }

  /** Turns random faults on (reseeding the PRNG) or, with undefined, off. Throws RangeError on invalid options. */
  setRandomFaults(options: RandomFaultOptions | undefined): void {
    this.randomFaults.set(options);
  }

  /** Random faults injected so far, by kind, since the emulator started (queued faults are not counted). */
  injectedFaults(): Record<RandomFaultKind, number> {
    return this.randomFaults.injected;
  }

  /** Empties the list of recorded requests. */
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

  /**
   * The secret in a task's log lines: its proxy password and the connection URL that carries it
   * (see {@link EmulatorOptions.logBrowserConnection}), for tests that check a client never
   * stores or shows them. Undefined for an unknown execution ID.
   */
  taskSecrets(executionId: string): { proxyPassword: string; connectionUrl: string } | undefined {
    const connection: BrowserConnection | undefined = this.tasks.get(executionId)?.connection;
    return connection && { proxyPassword: connection.proxyPassword, connectionUrl: connection.connectionUrl };
  }

  /** Every task, as `task()` shows it: lets a harness react to BrowserAI's side as a user would. */
  listTasks(): EmulatedTask[] {
    return this.tasks.list(Date.now());
  }

  /** Tasks not ended yet (queued, running or awaiting): what a test must stop, or what a client left behind. */
  runningTasks(): EmulatedTask[] {
    return this.tasks.listNotEnded(Date.now());
  }

  /**
   * The most tasks not ended at once (queued, running or awaiting) since the start or the last
   * `resetPeakRunning`: what a fleet limit must keep at or under its number.
   */
  peakRunning(): number {
    return this.tasks.peakRunning;
  }

  /** Sets the account's limit on running tasks (EmulatorOptions.maxRunningTasks, a GUESS); 0: none. */
  setMaxRunningTasks(limit: number): void {
    this.tasks.maxRunningTasks = limit;
  }

  /** Starts counting `peakRunning` again from the tasks not ended now. */
  resetPeakRunning(): void {
    this.tasks.peakRunning = this.tasks.countRunning(Date.now());
  }

  /** Stops listening and destroys every connection, hung ones included, so it never waits on a client. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.codeSender?.close();
      this.server.close(() => resolve());
      for (const socket of this.hungSockets) socket.destroy();
      this.hungSockets.clear();
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
      const foreign = this.foreignControlHost(req);
      if (foreign !== undefined) {
        sendJson(
          res,
          errorReply(
            403,
            `The control endpoints answer only to this machine's names; "${foreign}" is not one. ` +
              'Reach them as localhost or 127.0.0.1, or add the name to controlHosts (EMULATOR_CONTROL_HOSTS).',
          ),
        );
        return;
      }
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

    // A queued fault wins; the PRNG is only asked when none applies.
    let fault = this.faults.take(method, path);
    if (!fault) {
      const random = this.randomFaults.draw();
      if (random) {
        fault = random.fault;
        record.randomFault = random.kind;
      }
    }
    if (fault?.hang) {
      // Nothing is ever written; close() or the client's own abort ends the connection.
      record.fault = 'hang';
      const socket = res.socket;
      if (socket) {
        this.hungSockets.add(socket);
        socket.once('close', () => this.hungSockets.delete(socket));
      }
      return;
    }
    if (fault?.delayMs !== undefined) {
      record.fault = 'delay';
      await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
    } else if (fault && !fault.dropAfterHandling && !fault.answer && !(fault.trickleMs && fault.status === undefined)) {
      record.fault = 'status';
      const reply = faultReply(fault);
      record.status = reply.status;
      sendJson(res, reply, fault.trickleMs);
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
    const trickleMs = fault?.trickleMs;
    if (trickleMs !== undefined && res.socket) {
      // Destroyed by close() like a hung request: a trickle may outlast the test that started it.
      const socket = res.socket;
      this.hungSockets.add(socket);
      socket.once('close', () => this.hungSockets.delete(socket));
      record.fault ??= 'trickle';
    }
    if (fault?.answer) {
      record.fault = 'answer';
      record.status = fault.answer.status ?? 200;
      sendAnswer(res, fault.answer, reply, trickleMs);
      return;
    }
    sendJson(res, reply, trickleMs);
  }

  private onControlRequest(res: ServerResponse, method: string, path: string, raw: Buffer | typeof TOO_LARGE): void {
    const endpoint = `${method} ${path}`;
    if (endpoint === 'GET /requests') {
      sendJson(res, { status: 200, body: this.requests.map(({ body: _body, ...rest }) => rest) });
    } else if (endpoint === 'DELETE /requests') {
      this.resetRequests();
      sendJson(res, { status: 200, body: { ok: true } });
    } else if (endpoint === 'GET /stats') {
      sendJson(res, {
        status: 200,
        body: { requests: Object.fromEntries(this.endpointCounts), tasks: this.tasks.size },
      });
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
    } else if (endpoint === 'GET /random-faults') {
      sendJson(res, {
        status: 200,
        body: { options: this.randomFaults.options ?? null, injected: this.injectedFaults() },
      });
    } else if (endpoint === 'PUT /random-faults') {
      const options = randomFaultOptionsFrom(parseBody(raw));
      if (typeof options === 'string') {
        sendJson(res, errorReply(400, `randomFaults ${options}`));
      } else {
        this.setRandomFaults(options);
        sendJson(res, { status: 200, body: { ok: true } });
      }
    } else if (endpoint === 'DELETE /random-faults') {
      this.setRandomFaults(undefined);
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

  /** The host a control request names in `Host` or `Origin` that is not one of ours; undefined when both are ours. */
  private foreignControlHost(req: IncomingMessage): string | undefined {
    const named = [req.headers.host === undefined ? '' : `http://${req.headers.host}`];
    if (req.headers.origin !== undefined) named.push(req.headers.origin);
    for (const value of named) {
      const hostname = URL.canParse(value) ? new URL(value).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase() : '';
      if (!this.controlHosts.has(hostname)) return hostname || value.replace(/^http:\/\//, '') || '(none)';
    }
    return undefined;
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
      mode: this.mode,
      endedTaskAnswer: this.endedTaskAnswer,
      origin: host && /^[A-Za-z0-9.\-:[\]]+$/.test(host) ? `http://${host}` : this.origin,
    };
  }
}

function faultReply(fault: Fault): Reply {
  const status = fault.status ?? 500;
  const reply = errorReply(status, fault.error ?? defaultFaultMessage(status));
  const retryAfter = fault.retryAfterSeconds ?? (status === 429 ? 1 : undefined);
  if (retryAfter !== undefined) reply.headers = { 'retry-after': String(Math.ceil(retryAfter)) };
  if (fault.headers) reply.headers = { ...reply.headers, ...fault.headers };
  return reply;
}

function sendJson(res: ServerResponse, reply: Reply, trickleMs?: number): void {
  sendText(res, reply.status, 'application/json; charset=utf-8', answerText(reply.body), reply.headers, trickleMs);
}

/** The replacement of a real answer: `transform` of it (as the client would have parsed it), else `json`, else `raw`. */
function sendAnswer(res: ServerResponse, answer: FaultAnswer, real: Reply, trickleMs?: number): void {
  const status = answer.status ?? 200;
  if (answer.transform || answer.json !== undefined) {
    const body = answer.transform ? answer.transform(JSON.parse(JSON.stringify(real.body))) : answer.json;
    // A transform may return undefined: that is an empty body, not the text `undefined`.
    sendText(res, status, 'application/json; charset=utf-8', JSON.stringify(body) ?? '', answer.headers, trickleMs);
  } else {
    sendText(res, status, answer.contentType ?? 'text/html', answer.raw ?? '', answer.headers, trickleMs);
  }
}

function sendText(
  res: ServerResponse,
  status: number,
  contentType: string,
  text: string,
  headers?: Record<string, string>,
  trickleMs?: number,
): void {
  const body = Buffer.from(text);
  res.writeHead(status, { ...headers, 'content-type': contentType, 'content-length': body.length });
  if (trickleMs === undefined) {
    res.end(body);
    return;
  }
  res.flushHeaders();
  let sent = 0;
  const timer = setInterval(() => {
    if (res.destroyed || sent >= body.length) {
      clearInterval(timer);
      if (!res.destroyed) res.end();
      return;
    }
    res.write(body.subarray(sent, sent + 1));
    sent += 1;
  }, trickleMs);
  res.once('close', () => clearInterval(timer));
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
