import axios, { AxiosError, type AxiosInstance, type AxiosRequestConfig, type Method } from 'axios';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../version';
import { BrowserAIError, adviceFor, kindForStatus, parseRetryAfter, type BrowserAIErrorKind } from './errors';
import { RequestPacer } from './pacer';
import type {
  CreateSavedTaskRequest,
  CreateSavedTaskResponse,
  CreateTaskRequest,
  InstructionsRequest,
  SavedTask,
  StopResponse,
  TaskExecution,
  TaskMetadata,
  TaskResults,
} from './types';

export const DEFAULT_BASE_URL = 'https://browser.ai/api/v1';

export interface BrowserAIClientOptions {
  apiToken: string;
  /** Default `https://browser.ai/api/v1`. */
  baseUrl?: string;
  /** Per-request timeout; default 30 s. */
  timeoutMs?: number;
  /** Spaces requests out so one worker never sends more than this many per second; default unlimited. */
  maxRequestsPerSecond?: number;
  /** Overrides the `user-agent` (default `browserai-temporal/<version>`). */
  userAgent?: string;
}

export interface RequestOptions {
  /** Aborts the request, e.g. an activity's cancellation signal. */
  signal?: AbortSignal;
  timeoutMs?: number;
}

// Connection failures that prove the request never reached BrowserAI.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ERR_INVALID_URL']);

/**
 * Typed client for the BrowserAI HTTP API. Every failure is a {@link BrowserAIError};
 * the token lives only in a closure used by the request interceptor, so neither
 * `console.log(client)` nor any thrown error can show it.
 */
export class BrowserAIClient {
  readonly baseUrl: string;
  readonly #http: AxiosInstance;
  readonly #pacer?: RequestPacer;

  constructor(options: BrowserAIClientOptions) {
    if (!options.apiToken || options.apiToken.trim() === '') {
      throw new TypeError('BrowserAIClient needs an API token: set BROWSERAI_API_TOKEN (or pass apiToken).');
    }
    this.baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    const token = options.apiToken;
    this.#http = axios.create({
      baseURL: this.baseUrl,
      timeout: options.timeoutMs ?? 30_000,
      headers: {
        'content-type': 'application/json',
        'user-agent': options.userAgent ?? `${PACKAGE_NAME}/${PACKAGE_VERSION}`,
      },
      // Status handling is ours: every non-2xx becomes a typed error below.
      validateStatus: () => true,
      // Results can hold page HTML; never let axios cap or re-encode them.
      maxContentLength: Infinity,
      maxBodyLength: Infinity,
      transitional: { clarifyTimeoutError: true },
    });
    this.#http.interceptors.request.use((config) => {
      config.headers.set('authorization', `apikey ${token}`);
      return config;
    });
    if (options.maxRequestsPerSecond && options.maxRequestsPerSecond > 0) {
      this.#pacer = new RequestPacer(options.maxRequestsPerSecond);
    }
  }

  createTask(body: CreateTaskRequest, options?: RequestOptions): Promise<TaskExecution> {
    return this.#request('POST', '/tasks', body, options);
  }

  appendInstructions(executionId: string, body: InstructionsRequest, options?: RequestOptions): Promise<TaskExecution> {
    return this.#request('POST', `/tasks/${encodeURIComponent(executionId)}/instructions`, body, options);
  }

  replaceInstructions(executionId: string, body: InstructionsRequest, options?: RequestOptions): Promise<TaskExecution> {
    return this.#request('PUT', `/tasks/${encodeURIComponent(executionId)}/instructions`, body, options);
  }

  stopTask(executionId: string, options?: RequestOptions): Promise<StopResponse> {
    return this.#request('POST', `/tasks/${encodeURIComponent(executionId)}/command`, { command: 'stop' }, options);
  }

  getTask(executionId: string, options?: RequestOptions): Promise<TaskMetadata> {
    return this.#request('GET', `/tasks/${encodeURIComponent(executionId)}`, undefined, options);
  }

  getResults(executionId: string, options?: RequestOptions): Promise<TaskResults> {
    return this.#request<TaskResults>('GET', `/results/${encodeURIComponent(executionId)}`, undefined, options).then(
      (answer) => ({ ...answer, results: Array.isArray(answer.results) ? answer.results : [] }),
    );
  }

  createSavedTask(body: CreateSavedTaskRequest, options?: RequestOptions): Promise<CreateSavedTaskResponse> {
    return this.#request('POST', '/saved_tasks', body, options);
  }

  getSavedTask(name: string, options?: RequestOptions): Promise<SavedTask> {
    return this.#request('GET', `/saved_tasks/name/${encodeURIComponent(name)}`, undefined, options);
  }

  /** Not in the interface description; real clients call it. Accepts a bare array or one wrapped in an object. */
  async listSavedTasks(options?: RequestOptions): Promise<SavedTask[]> {
    const answer = await this.#request<unknown>('GET', '/saved_tasks', undefined, options);
    if (Array.isArray(answer)) return answer as SavedTask[];
    if (answer && typeof answer === 'object') {
      const list = Object.values(answer).find(Array.isArray);
      if (list) return list as SavedTask[];
    }
    return [];
  }

  async #request<T>(method: Method, path: string, body: unknown, options: RequestOptions = {}): Promise<T> {
    const config: AxiosRequestConfig = { method, url: path, data: body, signal: options.signal };
    if (options.timeoutMs !== undefined) config.timeout = options.timeoutMs;
    try {
      await this.#pacer?.wait(options.signal);
      options.signal?.throwIfAborted();
    } catch {
      throw new BrowserAIError({ kind: 'Aborted', mayHaveReachedServer: false, method, path, message: `BrowserAI ${method} ${path} was cancelled before it was sent.` });
    }
    let response;
    try {
      response = await this.#http.request(config);
    } catch (err) {
      throw this.#transportError(err, method, path);
    }
    if (response.status >= 200 && response.status < 300) return response.data as T;
    const apiMessage = extractApiMessage(response.data);
    const kind = kindForStatus(response.status, apiMessage, path);
    const retryAfterMs = kind === 'RateLimited' ? parseRetryAfter(response.headers['retry-after']) : undefined;
    throw new BrowserAIError({
      kind,
      status: response.status,
      apiMessage,
      retryAfterMs,
      // A 5xx may come from a proxy after BrowserAI acted; every 4xx is a refusal.
      mayHaveReachedServer: kind === 'ServerError',
      method,
      path,
      message: `BrowserAI ${method} ${path} failed with ${response.status}${apiMessage ? ` "${apiMessage}"` : ''}. ${adviceFor(kind, path)}`,
    });
  }

  #transportError(err: unknown, method: string, path: string): BrowserAIError {
    const code = err instanceof AxiosError ? err.code : undefined;
    let kind: BrowserAIErrorKind = 'NetworkError';
    if (axios.isCancel(err) || code === 'ERR_CANCELED') kind = 'Aborted';
    else if (code === 'ETIMEDOUT' || code === 'ECONNABORTED') kind = 'Timeout';
    const cause = err instanceof AxiosError ? err.cause : undefined;
    const causeCode = (cause as NodeJS.ErrnoException | undefined)?.code;
    const notSent = (code !== undefined && NOT_SENT_CODES.has(code)) || (causeCode !== undefined && NOT_SENT_CODES.has(causeCode));
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

function extractApiMessage(data: unknown): string | undefined {
  if (data && typeof data === 'object' && 'error' in data) {
    const error = (data as { error: unknown }).error;
    if (typeof error === 'string') return error;
    if (error !== undefined) return JSON.stringify(error);
  }
  if (typeof data === 'string' && data.trim() !== '') return data.trim().slice(0, 200);
  return undefined;
}
