// Checks of BrowserAI's 2xx answers, one per endpoint. An answer is data from outside: it may
// lack documented fields, carry them with other types, be an HTML page from a proxy, or not be
// JSON at all. Each function takes what came over the wire (`unknown`) and returns the typed
// value the rest of the project may rely on, or throws a BrowserAIError of kind
// `MalformedAnswer`. Fields the project cannot do without are checked (a create answer needs a
// usable executionId and a status, a task answer a status); documented optional fields of the
// wrong type are dropped, as if absent.
//
// Every value is also bounded here, once, so nothing later meets a value Temporal refuses or one
// that stalls the worker (bounds.ts): an answer nested too deep is cut at ANSWER_LIMITS.depth, and
// the fields that end up in search attributes, heartbeats, the `state` query, current details,
// logs and failure messages (status, times, progress, logs, error) are cut to their limits, with
// a mark saying so. Results are not cut here: the activities fit them to the history budget.
//
// Error messages never show the body: it may hold secrets (engine logs carry proxy credentials)
// or megabytes. They say what was wrong, the JSON type of the body and its field names.
// Pure: no Node built-ins, no I/O.

import { ANSWER_LIMITS, boundDepth, cutText } from './bounds';
import { BrowserAIError, adviceFor } from './errors';
import type {
  CreateSavedTaskResponse,
  InstructionsAnswer,
  ResultEntry,
  SavedTask,
  StopResponse,
  TaskExecution,
  TaskMetadata,
  TaskProgress,
  TaskResults,
} from '../contract/browserai-types';

/** Where an answer came from: the request and the HTTP status it was answered with. */
export interface AnswerOrigin {
  method: string;
  path: string;
  status: number;
  /** The answer's `content-type`, for messages only. */
  contentType?: unknown;
}

type Record_ = Record<string, unknown>;

/** Real execution IDs are 24 hex digits (as the emulator's); anything ID-like is accepted, so a format change never wedges a workflow. */
const EXECUTION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Whether an `executionId` from an answer can be used in later paths (`undefined`/`null` spelled out cannot). */
export function isUsableExecutionId(value: unknown): value is string {
  return typeof value === 'string' && EXECUTION_ID.test(value) && !isSpelledOutNothing(value);
}

function isSpelledOutNothing(value: string): boolean {
  const lower = value.trim().toLowerCase();
  return lower === 'undefined' || lower === 'null';
}

/**
 * Whether a value can go into a path as one segment without changing which endpoint is
 * called: not empty, not `undefined`/`null` spelled out (a missing ID turned into text),
 * no `/`, no `.`/`..` segment, and encodable (no lone surrogates).
 */
export function isUsablePathSegment(value: unknown): value is string {
  if (typeof value !== 'string' || value.trim() === '') return false;
  if (isSpelledOutNothing(value) || value === '.' || value.includes('..') || value.includes('/')) return false;
  try {
    encodeURIComponent(value);
  } catch {
    return false;
  }
  return true;
}

/** Like {@link isUsablePathSegment}, for a saved task's name: may hold `/` (it travels encoded), never be `.`, `..` or blank. */
export function isUsableSavedTaskName(value: unknown): value is string {
  if (typeof value !== 'string' || value.trim() === '' || value === '.' || value === '..') return false;
  try {
    encodeURIComponent(value);
  } catch {
    return false;
  }
  return true;
}

/**
 * The JSON value of a raw answer body. The client asks axios for text, so a body that is not
 * JSON (an HTML page, `not json`, nothing) is told apart from a JSON string; any of those on a
 * 2xx is a malformed answer.
 */
export function jsonBody(raw: unknown, origin: AnswerOrigin): unknown {
  if (typeof raw !== 'string') return raw;
  const parsed = parseJson(raw);
  if (parsed.ok) return boundDepth(parsed.value);
  const type = mediaType(origin.contentType);
  const problem =
    raw.trim() === ''
      ? 'with an empty body'
      : `with a body that is not JSON (${type ? `${type}, ` : ''}${raw.length} characters)`;
  throw malformedAnswer(origin, problem);
}

/** The body of an error answer: its JSON value, or the text itself when it is not JSON. */
export function lenientBody(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  const parsed = parseJson(raw);
  return parsed.ok ? boundDepth(parsed.value) : raw;
}

/** The message of an error answer: its `{error}` (a text, or an object's JSON), else its text; cut to ANSWER_LIMITS.errorAnswer. */
export function errorAnswerMessage(body: unknown): string | undefined {
  let message: string | undefined;
  if (isRecord(body) && 'error' in body) {
    const error = body.error;
    message = typeof error === 'string' ? error : error === undefined ? undefined : JSON.stringify(error);
  } else if (typeof body === 'string' && body.trim() !== '') message = body.trim();
  return message === undefined ? undefined : cutText(message, ANSWER_LIMITS.errorAnswer);
}

/** `POST /tasks`: an object with a usable `executionId` and a non-empty `status`. */
export function createAnswer(body: unknown, origin: AnswerOrigin): TaskExecution {
  const answer = requireObject(body, origin);
  if (!isUsableExecutionId(answer.executionId)) {
    const problem =
      'executionId' in answer ? 'with an "executionId" that is not a usable ID' : 'without an "executionId"';
    throw malformedAnswer(origin, problem, body);
  }
  const executionId = answer.executionId;
  if (!isNonEmptyString(answer.status)) {
    throw malformedAnswer(
      origin,
      statusProblem(answer),
      body,
      executionId,
      `It did create task ${executionId}, which should be stopped.`,
    );
  }
  return { ...executionFields(answer), executionId, status: cutText(answer.status, ANSWER_LIMITS.shortText) };
}

/**
 * `POST` and `PUT /tasks/{id}/instructions`: any object means the instructions were accepted;
 * without a non-empty string status, `status` is null.
 */
export function instructionsAnswer(body: unknown, origin: AnswerOrigin, sentExecutionId: string): InstructionsAnswer {
  const answer = requireObject(body, origin);
  return {
    ...executionFields(answer),
    executionId: isUsableExecutionId(answer.executionId) ? answer.executionId : sentExecutionId,
    status: isNonEmptyString(answer.status) ? cutText(answer.status, ANSWER_LIMITS.shortText) : null,
  };
}

/** `GET /tasks/{id}`: an object with a non-empty `status`; progress, logs and error made to fit their types. */
export function taskMetadataAnswer(body: unknown, origin: AnswerOrigin, requestedExecutionId: string): TaskMetadata {
  const answer = requireObject(body, origin);
  if (!isNonEmptyString(answer.status)) throw malformedAnswer(origin, statusProblem(answer), body);
  const meta: TaskMetadata = {
    ...executionFields(answer),
    executionId: isUsableExecutionId(answer.executionId) ? answer.executionId : requestedExecutionId,
    status: cutText(answer.status, ANSWER_LIMITS.shortText),
  };
  keepText(meta, 'scriptId', isString, ANSWER_LIMITS.shortText);
  const progress = progressOf(answer.progress);
  if (progress) meta.progress = progress;
  else delete meta.progress;
  const error = errorText(answer.error);
  if (error === undefined) delete meta.error;
  else meta.error = error === null ? null : cutText(error, ANSWER_LIMITS.error);
  return meta;
}

/** `GET /results/{id}`: an object; `results` is an array of objects (anything else: empty). */
export function resultsAnswer(body: unknown, origin: AnswerOrigin, requestedExecutionId: string): TaskResults {
  const answer = requireObject(body, origin);
  const results: ResultEntry[] = Array.isArray(answer.results) ? answer.results.filter(isRecord) : [];
  const out: TaskResults = {
    ...answer,
    executionId: isUsableExecutionId(answer.executionId) ? answer.executionId : requestedExecutionId,
    status: isNonEmptyString(answer.status) ? cutText(answer.status, ANSWER_LIMITS.shortText) : null,
    results,
  };
  keepText(out, 'started', isStringOrNull, ANSWER_LIMITS.shortText);
  keepText(out, 'completed', isStringOrNull, ANSWER_LIMITS.shortText);
  return out;
}

/** `POST /tasks/{id}/command`: any JSON object or JSON string (real: `{"message": "Task stopped successfully"}`). */
export function stopAnswer(body: unknown, origin: AnswerOrigin): StopResponse {
  if (typeof body === 'string') return { message: cutText(body, ANSWER_LIMITS.shortText) };
  const answer = requireObject(body, origin, 'a JSON object or string');
  const out: StopResponse = { ...answer };
  keepText(out, 'message', isString, ANSWER_LIMITS.shortText);
  return out;
}

/** `POST /saved_tasks`: an object with a string `taskId`. */
export function createSavedTaskAnswer(body: unknown, origin: AnswerOrigin): CreateSavedTaskResponse {
  const answer = requireObject(body, origin);
  if (!isNonEmptyString(answer.taskId)) {
    throw malformedAnswer(
      origin,
      'taskId' in answer ? 'with a "taskId" that is not a non-empty string' : 'without a "taskId"',
      body,
    );
  }
  const out: CreateSavedTaskResponse = { ...answer, taskId: answer.taskId };
  dropUnless(out, 'message', isString);
  return out;
}

/** `GET /saved_tasks/name/{name}`: an object; `instructions` made an array of objects. */
export function savedTaskAnswer(body: unknown, origin: AnswerOrigin): SavedTask {
  const answer = requireObject(body, origin);
  const instructions = Array.isArray(answer.instructions) ? answer.instructions.filter(isRecord) : [];
  return { ...answer, instructions } as unknown as SavedTask;
}

/** `GET /saved_tasks` (not in the interface description): a bare array, or one wrapped in an object; else empty. */
export function savedTaskListAnswer(body: unknown): SavedTask[] {
  if (Array.isArray(body)) return body as SavedTask[];
  if (isRecord(body)) {
    const list = Object.values(body).find(Array.isArray);
    if (list) return list as SavedTask[];
  }
  return [];
}

/**
 * A saved task (or anything a saved-task list holds) redacted by `redact`, except the texts of
 * its instructions: those are what the user wrote, and running the saved task types them (there
 * is no endpoint that runs one: it is read and created as a task), so masking a credential in
 * them would run a different task. Everything else (name, project, BrowserAI's own fields) is redacted.
 */
export function redactSavedTask<T>(task: T, redact: <V>(value: V) => V): T {
  if (!isRecord(task) || !Array.isArray(task.instructions)) return redact(task);
  const { instructions, ...rest } = task;
  const kept = instructions.map((instruction: unknown) => {
    if (!isRecord(instruction) || typeof instruction.action !== 'string') return redact(instruction);
    const { action, ...others } = instruction;
    return { ...redact(others), action };
  });
  return { ...redact(rest), instructions: kept } as T;
}

/** A short description of a JSON value that never shows its content: its type, and an object's field names. */
export function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? '' : 's'}`;
  if (typeof value === 'string') return `a string of ${value.length} characters`;
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  if (typeof value !== 'object') return typeof value;
  const keys = Object.keys(value);
  if (keys.length === 0) return 'an empty object';
  const plain = keys.filter((k) => FIELD_NAME.test(k));
  const shown = plain.slice(0, MAX_FIELDS);
  const others = keys.length - shown.length;
  const list =
    shown.join(', ') +
    (others > 0 ? `${shown.length > 0 ? ' and ' : ''}${others} other field${others === 1 ? '' : 's'}` : '');
  return `an object with field${keys.length === 1 ? '' : 's'} ${list}`;
}

// Field names shown in messages: short, plain identifiers only; anything else is counted.
const FIELD_NAME = /^[A-Za-z_$][A-Za-z0-9_$-]{0,39}$/;
const MAX_FIELDS = 12;

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (trimmed === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(trimmed) as unknown };
  } catch {
    return { ok: false };
  }
}

function mediaType(contentType: unknown): string | undefined {
  if (typeof contentType !== 'string') return undefined;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,62}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,62}$/.test(type) ? type : undefined;
}

/** A 2xx answer this client cannot use: it reached BrowserAI, so whatever it asked for may have been done. */
export function malformedAnswer(
  origin: AnswerOrigin,
  problem: string,
  body?: unknown,
  executionId?: string,
  extra?: string,
): BrowserAIError {
  const got = body === undefined ? '' : ` (got ${describeJson(body)})`;
  return new BrowserAIError({
    kind: 'MalformedAnswer',
    status: origin.status,
    // It answered 2xx: whatever the request asked for may have been done.
    mayHaveReachedServer: true,
    method: origin.method,
    path: origin.path,
    executionId,
    message: `BrowserAI ${origin.method} ${origin.path} answered ${origin.status} ${problem}${got}.${extra ? ` ${extra}` : ''} ${adviceFor('MalformedAnswer')}`,
  });
}

function requireObject(body: unknown, origin: AnswerOrigin, wanted = 'a JSON object'): Record_ {
  if (isRecord(body)) return body;
  throw malformedAnswer(origin, `with ${describeJson(body)} instead of ${wanted}`);
}

function statusProblem(answer: Record_): string {
  if (!('status' in answer)) return 'without a string "status"';
  return typeof answer.status === 'string' ? 'with an empty "status"' : 'without a string "status"';
}

/** The documented optional fields of a task execution, dropped when of the wrong type, cut when too long. */
function executionFields(answer: Record_): Record_ {
  const out: Record_ = { ...answer };
  dropUnless(out, 'geoLocation', isRecord);
  keepText(out, 'scriptType', isString, ANSWER_LIMITS.shortText);
  keepText(out, 'started', isStringOrNull, ANSWER_LIMITS.shortText);
  keepText(out, 'estimatedCompletion', isStringOrNull, ANSWER_LIMITS.shortText);
  return out;
}

/** An optional text field: dropped unless `ok` (a string, or null where null is allowed), cut to `maxChars`. */
function keepText(target: Record_, key: string, ok: (value: unknown) => boolean, maxChars: number): void {
  dropUnless(target, key, ok);
  if (typeof target[key] === 'string') target[key] = cutText(target[key], maxChars);
}

/** `progress` with its status a string (cut to its limit) or absent, and its latest log lines, each cut to its limit. */
function progressOf(value: unknown): TaskProgress | undefined {
  if (!isRecord(value)) return undefined;
  const logs = Array.isArray(value.logs) ? value.logs.filter(isString) : [];
  const progress: TaskProgress = {
    ...value,
    logs: logs.slice(-ANSWER_LIMITS.logLines).map((line) => cutText(line, ANSWER_LIMITS.logLine)),
  };
  keepText(progress, 'status', isString, ANSWER_LIMITS.progressStatus);
  return progress;
}

/**
 * `error` as text: a string as is, an error object (BrowserAI's catalogue has `{code, type,
 * message}`) as its message or else its JSON. The caller cuts it.
 */
function errorText(value: unknown): string | null | undefined {
  if (value === undefined || value === null || typeof value === 'string') return value;
  if (isRecord(value) && typeof value.message === 'string') return value.message;
  if (typeof value === 'object') {
    try {
      return JSON.stringify(value);
    } catch {
      return `[error ${describeJson(value)}]`;
    }
  }
  return String(value);
}

function dropUnless(target: Record_, key: string, ok: (value: unknown) => boolean): void {
  if (key in target && !ok(target[key])) delete target[key];
}

function isRecord(value: unknown): value is Record_ {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function isStringOrNull(value: unknown): boolean {
  return value === null || typeof value === 'string';
}
