// Faults let a test make the next matching request(s) misbehave the way a real network or a real
// overloaded service does, so clients' retry, timeout and idempotency handling can be exercised.

/**
 * A body sent instead of the real answer, to test clients against malformed or partial answers.
 * The first of `transform`, `json`, `raw` that is given is sent.
 */
export interface FaultAnswer {
  /** Default 200. */
  status?: number;
  /** Builds the body (sent as JSON) from the real one, e.g. to drop fields. In-process only. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test's transform reads the body's fields freely
  transform?: (realBody: any) => unknown;
  /** Sent as JSON (`null` included). */
  json?: unknown;
  /** Sent as is, with `contentType`: an HTML error page, a truncated body, `not json`... Default empty. */
  raw?: string;
  /** Content type of `raw`; default `text/html`. */
  contentType?: string;
  /** Extra response headers, e.g. `location` for a redirect. */
  headers?: Record<string, string>;
}

/**
 * A fault the emulator applies to the next matching request(s): an error status, a hang, a delay, a lost answer or a
 * replaced body.
 */
export interface Fault {
  /** HTTP method to match (case-insensitive); any method when absent. */
  method?: string;
  /** Matched against the path without the `/api/v1` prefix and without the query, e.g. `/tasks`. */
  path?: RegExp;
  /** Status to answer with; 500 when the fault neither hangs nor drops. */
  status?: number;
  /** Error message of the `{error}` body; defaults by status ("Internal server error" for 5xx). */
  error?: string;
  /** Sent as `Retry-After`; a 429 sends 1 when absent. */
  retryAfterSeconds?: number;
  /** Extra headers of the status answer, e.g. `location` for a 307 (the request is then not performed). */
  headers?: Record<string, string>;
  /** Hold the request open without answering until the client gives up or the server closes. */
  hang?: boolean;
  /** Perform the request for real (e.g. create the task), then destroy the socket: the answer is lost. */
  dropAfterHandling?: boolean;
  /** Answer normally, but only after this many milliseconds (a slow BrowserAI, not a broken one). */
  delayMs?: number;
  /**
   * Send the answer (the real one without `status`, else the fault's status or `answer`) one byte
   * every this many milliseconds after its headers: a stalled link or a slow proxy, which never
   * leaves the connection idle for long.
   */
  trickleMs?: number;
  /**
   * Perform the request for real (e.g. create the task, append the instructions), then send this
   * instead of the real answer. `status` and `error` of the fault are ignored.
   */
  answer?: FaultAnswer;
  /** How many matching requests it affects; default 1. */
  times?: number;
}

interface ArmedFault {
  fault: Fault;
  remaining: number;
}

export class FaultQueue {
  private armed: ArmedFault[] = [];

  add(fault: Fault): void {
    this.armed.push({ fault: { ...fault }, remaining: Math.max(1, Math.floor(fault.times ?? 1)) });
  }

  clear(): void {
    this.armed = [];
  }

  get pending(): Fault[] {
    return this.armed.map(({ fault, remaining }) => ({ ...fault, times: remaining }));
  }

  /** The first armed fault matching the request, consumed once; faults fire in the order added. */
  take(method: string, path: string): Fault | undefined {
    const index = this.armed.findIndex(({ fault }) => matches(fault, method, path));
    if (index < 0) return undefined;
    const armed = this.armed[index]!;
    armed.remaining -= 1;
    if (armed.remaining <= 0) this.armed.splice(index, 1);
    return armed.fault;
  }
}

/**
 * Longer paths never match a fault's pattern: with {@link patternProblem}'s limits, matching a path
 * this long takes milliseconds whatever the pattern, and no API path is anywhere near as long.
 */
export const MAX_FAULT_PATH_LENGTH = 1_024;

function matches(fault: Fault, method: string, path: string): boolean {
  if (fault.method !== undefined && fault.method.toUpperCase() !== method.toUpperCase()) return false;
  if (fault.path !== undefined) {
    if (path.length > MAX_FAULT_PATH_LENGTH) return false;
    fault.path.lastIndex = 0; // a /g or /y pattern would otherwise remember the previous match
    if (!fault.path.test(path)) return false;
  }
  return true;
}

export function defaultFaultMessage(status: number): string {
  if (status >= 500) return 'Internal server error';
  if (status === 429) return 'Too many requests';
  if (status === 401) return 'Unauthorized';
  if (status === 404) return 'Not found';
  return 'Injected fault';
}

/** Parses a fault sent as JSON to the control endpoint, where `path` is a regex source string. */
export function faultFromJson(value: unknown): Fault | string {
  if (!isRecord(value)) return 'fault must be a JSON object';
  const fault: Fault = {};
  if (value.method !== undefined) {
    if (typeof value.method !== 'string') return 'method must be a string';
    fault.method = value.method;
  }
  if (value.path !== undefined) {
    if (typeof value.path !== 'string') return 'path must be a regex source string';
    const flags = value.pathFlags === undefined ? '' : value.pathFlags;
    if (typeof flags !== 'string') return 'pathFlags must be a string';
    try {
      fault.path = new RegExp(value.path, flags);
    } catch {
      return 'path is not a valid regular expression';
    }
    const problem = patternProblem(value.path);
    if (problem) return `path ${problem}`;
  }
  if (value.status !== undefined) {
    if (!isStatus(value.status)) return 'status must be an HTTP status code';
    fault.status = value.status;
  }
  if (value.error !== undefined) {
    if (typeof value.error !== 'string') return 'error must be a string';
    fault.error = value.error;
  }
  if (value.delayMs !== undefined) {
    if (typeof value.delayMs !== 'number' || !(value.delayMs >= 0)) return 'delayMs must be a non-negative number';
    fault.delayMs = value.delayMs;
  }
  if (value.headers !== undefined) {
    const headers = headersFromJson(value.headers);
    if (!headers) return 'headers must be an object of strings';
    fault.headers = headers;
  }
  if (value.trickleMs !== undefined) {
    if (typeof value.trickleMs !== 'number' || !(value.trickleMs >= 1)) return 'trickleMs must be a number, at least 1';
    fault.trickleMs = value.trickleMs;
  }
  if (value.retryAfterSeconds !== undefined) {
    if (typeof value.retryAfterSeconds !== 'number' || !(value.retryAfterSeconds >= 0)) {
      return 'retryAfterSeconds must be a non-negative number';
    }
    fault.retryAfterSeconds = value.retryAfterSeconds;
  }
  for (const flag of ['hang', 'dropAfterHandling'] as const) {
    if (value[flag] !== undefined) {
      if (typeof value[flag] !== 'boolean') return `${flag} must be a boolean`;
      fault[flag] = value[flag];
    }
  }
  if (value.times !== undefined) {
    if (!Number.isInteger(value.times) || (value.times as number) < 1) return 'times must be a positive integer';
    fault.times = value.times as number;
  }
  if (value.answer !== undefined) {
    const answer = answerFromJson(value.answer);
    if (typeof answer === 'string') return answer;
    fault.answer = answer;
  }
  return fault;
}

function answerFromJson(value: unknown): FaultAnswer | string {
  if (!isRecord(value)) return 'answer must be a JSON object';
  if (value.transform !== undefined) return 'answer.transform is only available in-process';
  const answer: FaultAnswer = {};
  if (value.status !== undefined) {
    if (!isStatus(value.status)) return 'answer.status must be an HTTP status code';
    answer.status = value.status;
  }
  // `json: null` is a body too (the JSON text `null`); only an absent field means "none".
  if ('json' in value) answer.json = value.json;
  if (value.headers !== undefined) {
    const headers = headersFromJson(value.headers);
    if (!headers) return 'answer.headers must be an object of strings';
    answer.headers = headers;
  }
  for (const field of ['raw', 'contentType'] as const) {
    if (value[field] !== undefined) {
      if (typeof value[field] !== 'string') return `answer.${field} must be a string`;
      answer[field] = value[field];
    }
  }
  return answer;
}

function headersFromJson(value: unknown): Record<string, string> | undefined {
  return isRecord(value) && Object.values(value).every((v) => typeof v === 'string')
    ? (value as Record<string, string>)
    : undefined;
}

function isStatus(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 100 && (value as number) <= 599;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Why matching a path against this pattern could take unbounded time (catastrophic backtracking,
 * `^/(a+)+$`), or undefined when it cannot. A fault sent over HTTP may come from anywhere, and one
 * slow match freezes the emulator for every client. Refused: a repeated group that itself repeats
 * or alternates, backreferences, lookarounds, more than two unbounded repeats (`*`, `+`, `{n,}`,
 * `{n,m}`) or more than four repeats in all. Patterns a fault needs (`^/tasks$`,
 * `^/tasks/[^/]+/instructions$`, `/command$`, `^/(tasks|results)/`) pass.
 */
export function patternProblem(source: string): string | undefined {
  const groups: Array<{ repeats: boolean }> = [];
  let lastGroupRepeats: boolean | undefined; // the group just closed, if the previous token was `)`
  let unbounded = 0;
  let repeats = 0;
  for (let i = 0; i < source.length;) {
    const c = source[i]!;
    const quantifier = /^(?:[*+?]|\{\d+(?:,\d*)?\})\??/.exec(source.slice(i))?.[0];
    if (quantifier) {
      if (lastGroupRepeats)
        return 'repeats a group that itself repeats or alternates (e.g. (a+)+): write it without the nesting';
      repeats += 1;
      if (quantifier[0] !== '?') unbounded += 1;
      if (groups.length > 0) groups.at(-1)!.repeats = true;
      lastGroupRepeats = undefined;
      i += quantifier.length;
      continue;
    }
    lastGroupRepeats = undefined;
    if (c === '\\') {
      if (/[1-9k]/.test(source[i + 1] ?? '')) return 'has a backreference: fault paths need none';
      i += 2;
    } else if (c === '[') {
      // A character class: skip to its unescaped `]` (a `]` first in the class is literal).
      let j = i + 1;
      if (source[j] === '^') j += 1;
      if (source[j] === ']') j += 1;
      while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      i = j + 1;
    } else if (c === '(') {
      if (/^\(\?<?[=!]/.test(source.slice(i))) return 'has a lookaround: fault paths need none';
      groups.push({ repeats: false });
      const prefix = /^\((?:\?:|\?<[A-Za-z_$][\w$]*>)?/.exec(source.slice(i))![0];
      i += prefix.length;
    } else if (c === ')') {
      const group = groups.pop();
      lastGroupRepeats = group?.repeats ?? false;
      if (group?.repeats && groups.length > 0) groups.at(-1)!.repeats = true;
      i += 1;
    } else {
      if (c === '|' && groups.length > 0) groups.at(-1)!.repeats = true;
      i += 1;
    }
  }
  if (unbounded > 2 || repeats > 4) {
    return 'has too many repeats (at most two of *, + or {n,m}, four with ?): match a shorter part of the path';
  }
  return undefined;
}
