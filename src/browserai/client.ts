import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import axios, { AxiosError, type AxiosInstance, type AxiosRequestConfig, type Method } from 'axios';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../contract/version';
import { BrowserAIError, adviceFor, kindForStatus, parseRetryAfter, type BrowserAIErrorKind } from './errors';
import {
  createAnswer,
  createSavedTaskAnswer,
  errorAnswerMessage,
  instructionsAnswer,
  isUsablePathSegment,
  isUsableSavedTaskName,
  jsonBody,
  lenientBody,
  redactSavedTask,
  malformedAnswer,
  resultsAnswer,
  savedTaskAnswer,
  savedTaskListAnswer,
  stopAnswer,
  taskMetadataAnswer,
  type AnswerOrigin,
} from './answers';
import { RequestPacer } from './pacer';
import { createTransport, proxyFailure, type ProxyRoute } from './proxy';
import { redactSecretsDeep } from './redact';
import { startRequestSpan } from './request-span';
import type {
  CreateSavedTaskRequest,
  CreateSavedTaskResponse,
  CreateTaskRequest,
  InstructionsAnswer,
  InstructionsRequest,
  SavedTask,
  StopResponse,
  TaskExecution,
  TaskMetadata,
  TaskResults,
} from '../contract/browserai-types';

export const DEFAULT_BASE_URL = 'https://browser.ai/api/v1';
/** Default of `timeoutMs`: the whole request, from sending it to the last byte of its answer. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** The range `timeoutMs` (BROWSERAI_REQUEST_TIMEOUT_MS) must be in, in whole milliseconds. */
export const REQUEST_TIMEOUT_RANGE_MS = { min: 1_000, max: 120_000 } as const;
/**
 * Default of `maxResponseBytes`: an answer's body (after decompression) is read up to this size.
 * Far above any answer BrowserAI is known to send (results of page HTML run to a few MB), low
 * enough that a runaway body cannot exhaust a worker's memory.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** The smallest `maxResponseBytes` accepted: a poll answer with its progress log needs some room. */
export const MIN_MAX_RESPONSE_BYTES = 64 * 1024;
/** The lowest `maxRequestsPerSecond` accepted: one request every 10 s (below it, a worker cannot keep a task polled). */
export const MIN_REQUESTS_PER_SECOND = 0.1;

/**
 * Options of a `BrowserAIClient`: the API token (required), the base URL, timeouts, the request rate, the proxy and a
 * request hook.
 */
export interface BrowserAIClientOptions {
  apiToken: string;
  /** Default `https://browser.ai/api/v1`. */
  baseUrl?: string;
  /**
   * The deadline of each request, from sending it to the last byte of its answer (not an idle
   * timeout: an answer that trickles in slowly is given up on too). Default 30 s; whole
   * milliseconds from 1 s to 2 min.
   */
  timeoutMs?: number;
  /**
   * The largest answer body read, in bytes (after decompression); a bigger one is refused unread:
   * a 2xx as `MalformedAnswer`, an error answer with its status's kind and no message. Default
   * 16 MiB; at least 64 KiB.
   */
  maxResponseBytes?: number;
  /** Spaces requests out so one worker never sends more than this many per second (at least 0.1); default unlimited. */
  maxRequestsPerSecond?: number;
  /** Overrides the `user-agent` (default `browserai-temporal/<version>`). */
  userAgent?: string;
  /**
   * The HTTP proxy to reach BrowserAI through, `http://[user:password@]host:port`; `false` for
   * none. Default: from the environment (`HTTPS_PROXY`, or `HTTP_PROXY` for an http base URL,
   * and `NO_PROXY`), read when the client is created. HTTPS goes through a CONNECT tunnel, so
   * the proxy never sees the token or the bodies. See proxy.ts.
   */
  proxy?: string | false;
  /**
   * Called after every request that was sent, answered or not (e.g. to record metrics:
   * `recordBrowserAIRequest` in telemetry/activity-metrics.ts). Gets the route template, never the
   * path with its IDs. Must not throw; if it does, the request is unaffected.
   */
  onRequest?: (event: BrowserAIRequestEvent) => void;
}

/** One request sent to BrowserAI, as `onRequest` sees it. */
export interface BrowserAIRequestEvent {
  method: string;
  /** The route template, e.g. `/tasks/{id}`: no execution ID, no saved task name. */
  route: string;
  /** The HTTP status; undefined when no answer came. */
  status?: number;
  /** Why no answer came. */
  failure?: 'network' | 'timeout' | 'aborted';
  durationMs: number;
  /** The Retry-After of a 429, when it had one. */
  retryAfterMs?: number;
}

/** Per-request options of the client's methods: a cancellation signal and a timeout of its own. */
export interface RequestOptions {
  /** Aborts the request, e.g. an activity's cancellation signal. */
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** A copy of an answer (or any JSON value) with its secrets masked. */
type Redactor = <T>(value: T) => T;

// Connection failures that prove the request never reached BrowserAI.
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_INVALID_URL',
]);

/**
 * Typed client for the BrowserAI HTTP API. Every failure is a {@link BrowserAIError};
 * the token lives only in closures (the request interceptor's, the redactor's), so neither
 * `console.log(client)` nor any thrown error can show it.
 *
 * Every answer is redacted, then checked and bounded (answers.ts, bounds.ts), before it is
 * returned. Redaction (see redact.ts) comes first, so no cut can leave half a credential that the
 * masker no longer recognises: URL credentials, token-like
 * query parameters and the API token itself become `•••` in task answers, progress logs,
 * errors, results and saved tasks alike, so no activity, heartbeat, history or log ever holds
 * them. Results are not exempt: a result that legitimately contains a credential URL
 * (`https://user:pw@…` scraped from a page) comes back masked. The one exception is the
 * instruction texts of saved tasks: they are the user's own input, and running a saved task
 * types them, so masking them would run a different task.
 */
export class BrowserAIClient {
  readonly baseUrl: string;
  /** `baseUrl` parsed once, for the request spans' server address and port. */
  readonly #baseUrl: URL;
  /** The deadline of a request (sent to fully answered), unless the call passes its own. */
  readonly requestTimeoutMs: number;
  /** The largest answer body read. */
  readonly maxResponseBytes: number;
  /**
   * Names the BrowserAI account without revealing the token: the first 16 hex digits of a SHA-256
   * of the base URL and token. Workers with the same one share a fleet limiter (docs/fleet.md).
   */
  readonly accountKey: string;
  readonly #http: AxiosInstance;
  readonly #pacer?: RequestPacer;
  readonly #redact: Redactor;
  readonly #proxy?: ProxyRoute;
  readonly #onRequest?: (event: BrowserAIRequestEvent) => void;

  constructor(options: BrowserAIClientOptions) {
    if (!options.apiToken || options.apiToken.trim() === '') {
      throw new TypeError('BrowserAIClient needs an API token: set BROWSERAI_API_TOKEN (or pass apiToken).');
    }
    this.baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.requestTimeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const problem = clientOptionsProblem(this.requestTimeoutMs, this.maxResponseBytes, options.maxRequestsPerSecond);
    if (problem) throw new TypeError(`BrowserAIClient: ${problem}.`);
    const token = options.apiToken;
    this.accountKey = createHash('sha256').update(`${this.baseUrl}\n${token}`).digest('hex').slice(0, 16);
    this.#redact = (value) => redactSecretsDeep(value, [token]);
    const transport = createTransport(this.baseUrl, options.proxy);
    this.#baseUrl = new URL(this.baseUrl);
    this.#proxy = transport.proxy;
    this.#onRequest = options.onRequest;
    this.#http = axios.create({
      baseURL: this.baseUrl,
      // axios's own proxy support sends https requests to the proxy in plain HTTP, token and
      // bodies included; the agents tunnel through it instead (proxy.ts).
      proxy: false,
      httpAgent: transport.httpAgent,
      httpsAgent: transport.httpsAgent,
      // An idle timeout (the socket's); each request also gets a deadline for the whole exchange (#request).
      timeout: this.requestTimeoutMs,
      headers: {
        'content-type': 'application/json',
        'user-agent': options.userAgent ?? `${PACKAGE_NAME}/${PACKAGE_VERSION}`,
      },
      // Status handling is ours: every non-2xx becomes a typed error below.
      validateStatus: () => true,
      // The body is read by us, up to maxResponseBytes (readBody), and parsed by us (answers.ts):
      // with axios's own lenient parsing, a 2xx HTML page or `not json` would arrive as a string
      // indistinguishable from a JSON string answer.
      responseType: 'stream',
      maxBodyLength: Infinity,
      // A redirect is refused, never followed: followed, it would re-post a create or a code to
      // another host, and an https -> http one would leave the proxy route (proxy.ts).
      maxRedirects: 0,
      transitional: { clarifyTimeoutError: true },
    });
    this.#http.interceptors.request.use((config) => {
      config.headers.set('authorization', `apikey ${token}`);
      return config;
    });
    if (options.maxRequestsPerSecond) {
      this.#pacer = new RequestPacer(options.maxRequestsPerSecond);
    }
  }

  /** `POST /tasks`: creates a task; the answer is checked to carry a usable `executionId` and `status`. */
  createTask(body: CreateTaskRequest, options?: RequestOptions): Promise<TaskExecution> {
    return this.#request('POST', '/tasks', body, options).then((a) => createAnswer(this.#redact(a.body), a.origin));
  }

  /** A 2xx means the instructions were accepted; its `status` is null when the answer has none. */
  appendInstructions(
    executionId: string,
    body: InstructionsRequest,
    options?: RequestOptions,
  ): Promise<InstructionsAnswer> {
    return this.#instructions('POST', executionId, body, options);
  }

  /** A 2xx means the instructions were accepted; its `status` is null when the answer has none. */
  replaceInstructions(
    executionId: string,
    body: InstructionsRequest,
    options?: RequestOptions,
  ): Promise<InstructionsAnswer> {
    return this.#instructions('PUT', executionId, body, options);
  }

  /** `POST /tasks/{id}/command` with `stop`. */
  async stopTask(executionId: string, options?: RequestOptions): Promise<StopResponse> {
    const path = `/tasks/${executionIdSegment('POST', '/tasks/{executionId}/command', executionId)}/command`;
    const answer = await this.#request('POST', path, { command: 'stop' }, options);
    return stopAnswer(this.#redact(answer.body), answer.origin);
  }

  /** `GET /tasks/{id}`: the task's status, progress, result and error, masked. */
  async getTask(executionId: string, options?: RequestOptions): Promise<TaskMetadata> {
    const path = `/tasks/${executionIdSegment('GET', '/tasks/{executionId}', executionId)}`;
    const answer = await this.#request('GET', path, undefined, options);
    return taskMetadataAnswer(this.#redact(answer.body), answer.origin, executionId);
  }

  /** `GET /results/{id}`: the task's results, whole and masked. */
  async getResults(executionId: string, options?: RequestOptions): Promise<TaskResults> {
    const path = `/results/${executionIdSegment('GET', '/results/{executionId}', executionId)}`;
    const answer = await this.#request('GET', path, undefined, options);
    return resultsAnswer(this.#redact(answer.body), answer.origin, executionId);
  }

  /** `POST /saved_tasks`: creates a saved task. */
  async createSavedTask(body: CreateSavedTaskRequest, options?: RequestOptions): Promise<CreateSavedTaskResponse> {
    const answer = await this.#request('POST', '/saved_tasks', body, options);
    return createSavedTaskAnswer(this.#redact(answer.body), answer.origin);
  }

  /** `GET /saved_tasks/name/{name}`: a saved task by name. */
  async getSavedTask(name: string, options?: RequestOptions): Promise<SavedTask> {
    if (!isUsableSavedTaskName(name)) {
      throw invalidPathInput('GET', '/saved_tasks/name/{name}', 'saved task name', name);
    }
    const answer = await this.#request('GET', `/saved_tasks/name/${encodeURIComponent(name)}`, undefined, options);
    return redactSavedTask(savedTaskAnswer(answer.body, answer.origin), this.#redact);
  }

  /** Not in the interface description; real clients call it. Accepts a bare array or one wrapped in an object. */
  async listSavedTasks(options?: RequestOptions): Promise<SavedTask[]> {
    const answer = await this.#request('GET', '/saved_tasks', undefined, options);
    return savedTaskListAnswer(answer.body).map((task) => redactSavedTask(task, this.#redact));
  }

  async #instructions(
    method: 'POST' | 'PUT',
    executionId: string,
    body: InstructionsRequest,
    options?: RequestOptions,
  ): Promise<InstructionsAnswer> {
    const path = `/tasks/${executionIdSegment(method, '/tasks/{executionId}/instructions', executionId)}/instructions`;
    const answer = await this.#request(method, path, body, options);
    return instructionsAnswer(this.#redact(answer.body), answer.origin, executionId);
  }

  /**
   * Sends one request; resolves with the JSON body of a 2xx answer (checked and redacted by the
   * caller), throws a BrowserAIError otherwise, its API message redacted.
   */
  async #request(
    method: Method,
    path: string,
    body: unknown,
    options: RequestOptions = {},
  ): Promise<{ body: unknown; origin: AnswerOrigin }> {
    try {
      await this.#pacer?.wait(options.signal);
      options.signal?.throwIfAborted();
    } catch {
      throw new BrowserAIError({
        kind: 'Aborted',
        mayHaveReachedServer: false,
        method,
        path,
        message: `BrowserAI ${method} ${path} was cancelled before it was sent.`,
      });
    }
    const timeoutMs = options.timeoutMs ?? this.requestTimeoutMs;
    // The request's deadline, for the whole exchange from now (the pacer's wait is not part of
    // it): axios's timeout is an idle one, which an answer trickling in a byte at a time never reaches.
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    const config: AxiosRequestConfig = { method, url: path, data: body, signal, timeout: timeoutMs };
    const route = routeTemplate(path);
    const span = startRequestSpan(method, route, this.#baseUrl);
    const sentAt = performance.now();
    const report = (event: Pick<BrowserAIRequestEvent, 'status' | 'failure' | 'retryAfterMs'>) => {
      span.end(event);
      try {
        this.#onRequest?.({ method, route, durationMs: performance.now() - sentAt, ...event });
      } catch {
        // a hook never changes what the request does
      }
    };
    const failed = (err: unknown): BrowserAIError => {
      const timedOut = deadline.aborted && !options.signal?.aborted;
      const error = this.#transportError(err, method, path, timedOut ? timeoutMs : undefined);
      report({ failure: error.kind === 'Timeout' ? 'timeout' : error.kind === 'Aborted' ? 'aborted' : 'network' });
      return error;
    };
    let response;
    let text: string | typeof TOO_LARGE = '';
    try {
      response = await this.#http.request<Readable>(config);
      if (isRedirect(response.status)) response.data.destroy();
      else text = await readBody(response.data, this.maxResponseBytes);
    } catch (err) {
      throw failed(err);
    }
    if (isRedirect(response.status)) {
      report({ status: response.status });
      throw this.#redirectError(response.status, response.headers.location, method, path);
    }
    if (response.status >= 200 && response.status < 300) {
      report({ status: response.status });
      const origin: AnswerOrigin = {
        method,
        path,
        status: response.status,
        contentType: response.headers['content-type'],
      };
      if (text === TOO_LARGE) throw this.#tooLargeError(origin);
      return { body: jsonBody(text, origin), origin };
    }
    const apiMessage = text === TOO_LARGE ? undefined : errorAnswerMessage(this.#redact(lenientBody(text)));
    const kind = kindForStatus(response.status, apiMessage, path);
    const retryAfterMs = kind === 'RateLimited' ? parseRetryAfter(response.headers['retry-after']) : undefined;
    report({ status: response.status, retryAfterMs });
    const said =
      text === TOO_LARGE
        ? ` (its body, over the ${this.maxResponseBytes}-byte limit, was not read)`
        : apiMessage
          ? ` "${apiMessage}"`
          : '';
    throw new BrowserAIError({
      kind,
      status: response.status,
      apiMessage,
      retryAfterMs,
      // A 5xx may come from a proxy after BrowserAI acted; every 4xx is a refusal.
      mayHaveReachedServer: kind === 'ServerError',
      method,
      path,
      message: `BrowserAI ${method} ${path} failed with ${response.status}${said}. ${adviceFor(kind, path)}`,
    });
  }

  /**
   * A 2xx answer too big to read. It reached BrowserAI, so it may have acted: with no executionId
   * readable, a create or append counts as ambiguous (at-most-once.ts), never as not sent.
   */
  #tooLargeError(origin: AnswerOrigin): BrowserAIError {
    return malformedAnswer(
      origin,
      `with a body over the ${this.maxResponseBytes}-byte limit; it was not read`,
      undefined,
      undefined,
      'If answers this big are expected, raise BROWSERAI_MAX_RESPONSE_BYTES (the client option maxResponseBytes).',
    );
  }

  /**
   * A redirect is never followed. By HTTP's rules a 3xx means the request was not acted on, so it
   * counts as not sent: a create or code may be sent again once the base URL is fixed.
   */
  #redirectError(status: number, location: unknown, method: string, path: string): BrowserAIError {
    const to =
      typeof location === 'string' && URL.canParse(location, this.baseUrl)
        ? new URL(location, this.baseUrl)
        : undefined;
    return new BrowserAIError({
      kind: 'NetworkError',
      status,
      mayHaveReachedServer: false,
      method,
      path,
      message:
        `BrowserAI ${method} ${path} was answered with a ${status} redirect${to ? ` to ${to.origin}` : ''}, which is not followed (it would send the request, API token included, to another address). ` +
        `Set BROWSERAI_BASE_URL to the address BrowserAI answers at${to ? ` (perhaps ${to.origin}/…)` : ''}, or fix the proxy or gateway that redirects.`,
    });
  }

  /** `deadlineMs`: the request's deadline passed (rather than the caller cancelling it). */
  #transportError(err: unknown, method: string, path: string, deadlineMs?: number): BrowserAIError {
    if (deadlineMs !== undefined) {
      return new BrowserAIError({
        kind: 'Timeout',
        mayHaveReachedServer: true,
        method,
        path,
        message: `BrowserAI ${method} ${path} was not fully answered within its ${deadlineMs} ms deadline (BROWSERAI_REQUEST_TIMEOUT_MS). ${adviceFor('Timeout')}`,
      });
    }
    const code = err instanceof AxiosError ? err.code : (err as NodeJS.ErrnoException | undefined)?.code;
    let kind: BrowserAIErrorKind = 'NetworkError';
    if (axios.isCancel(err) || code === 'ERR_CANCELED' || code === 'ABORT_ERR') kind = 'Aborted';
    else if (code === 'ETIMEDOUT' || code === 'ECONNABORTED') kind = 'Timeout';
    const cause = err instanceof AxiosError ? err.cause : undefined;
    const causeCode = (cause as NodeJS.ErrnoException | undefined)?.code;
    const notSent =
      (code !== undefined && NOT_SENT_CODES.has(code)) || (causeCode !== undefined && NOT_SENT_CODES.has(causeCode));
    // The proxy's own failures (unreachable, tunnel refused) happen before anything is sent to
    // BrowserAI. Their messages name the proxy's host, never the URL with its credentials.
    const viaProxy = kind === 'NetworkError' && this.#proxy ? proxyFailure(cause ?? err, this.#proxy) : undefined;
    if (viaProxy) {
      return new BrowserAIError({
        kind,
        mayHaveReachedServer: false,
        method,
        path,
        message: `BrowserAI ${method} ${path} was not sent: ${viaProxy.detail}. ${viaProxy.advice}`,
      });
    }
    const detail = causeCode ?? code ?? 'unknown error';
    return new BrowserAIError({
      kind,
      mayHaveReachedServer: !notSent,
      method,
      path,
      message: `BrowserAI ${method} ${path} got no answer (${detail}). ${adviceFor(kind)}`,
    });
  }
}

const TOO_LARGE = Symbol('too large');

const isRedirect = (status: number) => status >= 300 && status < 400;

/**
 * An answer's body as text, or TOO_LARGE (the stream destroyed, nothing more read) once it passes
 * `maxBytes`. A failure mid-body (reset, the request's deadline) rejects with the stream's error.
 */
async function readBody(stream: Readable, maxBytes: number): Promise<string | typeof TOO_LARGE> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      stream.destroy();
      return TOO_LARGE;
    }
    chunks.push(chunk);
  }
  // As axios's text responses: UTF-8, without a byte order mark.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
}

/** What is wrong with a client's limits, or undefined; the same bounds as the worker's configuration (config.ts). */
export function clientOptionsProblem(
  timeoutMs: number,
  maxResponseBytes: number,
  maxRequestsPerSecond: number | undefined,
): string | undefined {
  const { min, max } = REQUEST_TIMEOUT_RANGE_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < min || timeoutMs > max)
    return `timeoutMs must be whole milliseconds from ${min} to ${max} (got ${timeoutMs})`;
  if (!Number.isSafeInteger(maxResponseBytes) || maxResponseBytes < MIN_MAX_RESPONSE_BYTES)
    return `maxResponseBytes must be a whole number of bytes, at least ${MIN_MAX_RESPONSE_BYTES} (got ${maxResponseBytes})`;
  // 0 has always meant no limit.
  if (
    maxRequestsPerSecond !== undefined &&
    maxRequestsPerSecond !== 0 &&
    !(Number.isFinite(maxRequestsPerSecond) && maxRequestsPerSecond >= MIN_REQUESTS_PER_SECOND)
  )
    return `maxRequestsPerSecond must be at least ${MIN_REQUESTS_PER_SECOND} (one request every 10 s), or 0 or unset for no limit (got ${maxRequestsPerSecond})`;
  return undefined;
}

/** A request path with its IDs and names replaced: `/tasks/{id}/command`, `/saved_tasks/name/{name}`. */
const ROUTE_SEGMENTS = new Set(['tasks', 'results', 'saved_tasks', 'name', 'instructions', 'command']);
function routeTemplate(path: string): string {
  const segments = path.split('?')[0].split('/');
  return segments
    .map((s, i) => (s === '' || ROUTE_SEGMENTS.has(s) ? s : segments[i - 1] === 'name' ? '{name}' : '{id}'))
    .join('/');
}

/** The encoded path segment of an execution ID; throws InvalidInput, before anything is sent, for one that is not usable. */
function executionIdSegment(method: string, template: string, executionId: string): string {
  if (!isUsablePathSegment(executionId)) throw invalidPathInput(method, template, 'execution ID', executionId);
  return encodeURIComponent(executionId);
}

function invalidPathInput(method: string, template: string, what: string, value: unknown): BrowserAIError {
  const shown =
    typeof value !== 'string'
      ? `a ${value === null ? 'null' : typeof value}`
      : value.length > 64
        ? `a ${value.length}-character string`
        : JSON.stringify(value);
  return new BrowserAIError({
    kind: 'InvalidInput',
    mayHaveReachedServer: false,
    method,
    path: template,
    message: `BrowserAI ${method} ${template} was not sent: ${shown} is not a usable ${what}${what === 'execution ID' ? ' (pass the executionId the create answer returned)' : ''}.`,
  });
}
