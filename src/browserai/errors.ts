// Typed errors for everything a BrowserAI call can end in. The API documents the `{error}`
// message but few status codes, so the kind is decided by status class first and by the
// message text where the status is ambiguous (400 is both "invalid input" and "invalid command").
// None of these errors keep a reference to the request: axios errors carry the request
// headers, and so the API token, which must never reach a log or a workflow history.

import type { BrowserAIErrorKind } from '../contract/errors';

export type { BrowserAIErrorKind };

/** The fields a `BrowserAIError` is built from. */
export interface BrowserAIErrorInit {
  kind: BrowserAIErrorKind;
  message: string;
  status?: number;
  /** The `{error}` text BrowserAI answered with, if any. */
  apiMessage?: string;
  /** `Retry-After` of a 429, in milliseconds. */
  retryAfterMs?: number;
  /**
   * Whether BrowserAI may have acted on the request although no answer says so: true for
   * timeouts, resets and 5xx; false when the request provably never got through (connection
   * refused, DNS failure, 4xx). Non-idempotent calls must not be repeated blindly when true.
   */
  mayHaveReachedServer: boolean;
  method: string;
  path: string;
  /**
   * The task this failed request concerns, when BrowserAI named one in an answer we could not
   * use: a malformed create answer with a usable `executionId` means a task was created, and
   * the caller should stop it.
   */
  executionId?: string;
}

/**
 * A failed BrowserAI request: its `kind` (a failure type), HTTP status, BrowserAI's message and whether the request
 * may have reached BrowserAI. Never carries the token or a request body.
 */
export class BrowserAIError extends Error {
  override readonly name: string = 'BrowserAIError';
  readonly kind: BrowserAIErrorKind;
  readonly status?: number;
  readonly apiMessage?: string;
  readonly retryAfterMs?: number;
  readonly mayHaveReachedServer: boolean;
  readonly method: string;
  readonly path: string;
  readonly executionId?: string;

  constructor(init: BrowserAIErrorInit) {
    super(init.message);
    this.kind = init.kind;
    this.status = init.status;
    this.apiMessage = init.apiMessage;
    this.retryAfterMs = init.retryAfterMs;
    this.mayHaveReachedServer = init.mayHaveReachedServer;
    this.method = init.method;
    this.path = init.path;
    if (init.executionId !== undefined) this.executionId = init.executionId;
  }

  /** 4xx answers other than 429 will answer the same way however often they are retried. */
  get retryable(): boolean {
    return (
      this.kind === 'RateLimited' ||
      this.kind === 'ServerError' ||
      this.kind === 'NetworkError' ||
      this.kind === 'Timeout'
    );
  }
}

export function isBrowserAIError(err: unknown): err is BrowserAIError {
  return err instanceof BrowserAIError;
}

const ADVICE: Record<BrowserAIErrorKind, string> = {
  InvalidInput:
    'Check the instructions, type, project (it must exist in your BrowserAI account) and geoLocation.country.',
  InvalidCommand: 'Only the "stop" command exists; check the execution ID.',
  Unauthorized: 'Check BROWSERAI_API_TOKEN: it must be a valid BrowserAI API token.',
  TaskNotFound: 'Check the execution ID; it is the executionId returned when the task was created.',
  SavedTaskNotFound: 'Check the saved task name (it is case-sensitive); list saved tasks to see what exists.',
  Conflict: 'The task is not in a state that allows this request (it may have ended).',
  RateLimited: 'BrowserAI is rate limiting this API token; the request will be retried after Retry-After.',
  ServerError: 'BrowserAI answered with a server error; it is retried with backoff.',
  NetworkError: 'BrowserAI could not be reached: check BROWSERAI_BASE_URL and the network.',
  Timeout: 'BrowserAI did not answer in time.',
  MalformedAnswer:
    'BrowserAI answered with something this client does not understand; report it with the request path.',
  Aborted: 'The request was cancelled.',
};

export function adviceFor(kind: BrowserAIErrorKind, path = ''): string {
  if (kind === 'Conflict' && path.startsWith('/saved_tasks'))
    return 'A saved task with this name already exists: choose another name, or use the existing one.';
  return ADVICE[kind];
}

/** Seconds or an HTTP date, as RFC 9110 allows; undefined when absent or unreadable. */
export function parseRetryAfter(header: unknown, now = Date.now()): number | undefined {
  if (typeof header !== 'string' || header.trim() === '') return undefined;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The kind of an HTTP error answer, from its status and `{error}` message. */
export function kindForStatus(status: number, apiMessage: string | undefined, path: string): BrowserAIErrorKind {
  const text = (apiMessage ?? '').toLowerCase();
  if (status === 401 || status === 403 || text === 'unauthorized') return 'Unauthorized';
  if (status === 429) return 'RateLimited';
  if (status >= 500) return 'ServerError';
  if (status === 409) return 'Conflict';
  if (status === 404 || text.includes('not found')) {
    if (text.includes('saved task') || path.startsWith('/saved_tasks')) return 'SavedTaskNotFound';
    // "Invalid input or project not found" is a 400 about the request, not a missing task.
    if (!text.includes('project not found')) return 'TaskNotFound';
  }
  if (text.includes('invalid command')) return 'InvalidCommand';
  return 'InvalidInput';
}
