// The BrowserAI endpoints: request validation and the JSON shapes of the answers. Kept apart from
// the HTTP plumbing (server.ts) so each answer is a plain value the server can send, or, under a
// `dropAfterHandling` fault, compute and then throw away.
//
// Which fields an answer carries depends on the mode (mode.ts): `observed` answers as real
// BrowserAI was seen to, `documented` as the interface description lists.

import type { GeoLocation, Instruction } from '../contract/browserai-types';
import { artifactUrl } from './artifacts';
import { hostileResult, longStatus } from './hostile';
import { largeText } from './large-text';
import type { EmulatorMode, EndedTaskAnswer } from './mode';
import { FAIL_ERROR } from './scenario';
import type { SavedTaskStore, StoredSavedTask } from './saved-tasks';
import { isEnded, TooManyRunningTasks, type StoredEntry, type Task, type TaskStatus, type TaskStore } from './tasks';

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Marks a request body that was sent but is not JSON. */
export const INVALID_JSON: unique symbol = Symbol('invalid JSON');
export type RequestBody = unknown | typeof INVALID_JSON;

export interface ApiContext {
  tasks: TaskStore;
  saved: SavedTaskStore;
  unknownProjects: ReadonlySet<string>;
  now: number;
  /** Origin the client reached the emulator at, for the artifact URLs of result entries. */
  origin: string;
  /** Which fields the answers carry. */
  mode: EmulatorMode;
  /** Status of the answer to instructions or a stop for a task that has ended. */
  endedTaskAnswer: EndedTaskAnswer;
}

type Handler = (ctx: ApiContext, params: string[], body: RequestBody) => Reply;

interface Route {
  method: string;
  pattern: RegExp;
  /** Names the endpoint in statistics, with identifiers replaced by placeholders. */
  key: string;
  handle: Handler;
}

export const TASK_TYPES: ReadonlySet<string> = new Set(['crawler_automation', 'script_automation', 'natural_language']);
/** The n8n node creates saved tasks as `crawler_automation`; the description documents `natural_language`. */
export const SAVED_TASK_TYPES: ReadonlySet<string> = new Set(['natural_language', 'crawler_automation']);

export const MESSAGES = {
  unauthorized: 'Unauthorized',
  createInvalid: 'Invalid input or project not found',
  invalid: 'Invalid input',
  taskNotFound: 'Task not found',
  savedTaskNotFound: 'Saved task not found',
  invalidCommand: 'Invalid command or task ID',
  /** Not in any version of the docs: only sent when `endedTaskAnswer` is 409. */
  taskEnded: 'Task already ended',
  /** Not in any version of the docs: the emulator refuses a second saved task of the same name with a 409. */
  savedTaskExists: 'Saved task already exists',
  internal: 'Internal server error',
  notFound: 'Not found',
  methodNotAllowed: 'Method not allowed',
  /** Not in any version of the docs: a GUESS at the refusal of a create past the account's running-task limit. */
  tooManyRunning: 'Too many running tasks',
  /** Success messages, as the docs' examples show them. */
  taskStopped: 'Task stopped successfully',
  savedTaskCreated: 'Saved task created successfully',
} as const;

export function errorReply(status: number, message: string): Reply {
  return { status, body: { error: message } };
}

const ROUTES: Route[] = [
  { method: 'POST', pattern: /^\/tasks$/, key: 'POST /tasks', handle: createTask },
  { method: 'GET', pattern: /^\/tasks\/([^/]+)$/, key: 'GET /tasks/{id}', handle: getTask },
  {
    method: 'POST',
    pattern: /^\/tasks\/([^/]+)\/instructions$/,
    key: 'POST /tasks/{id}/instructions',
    handle: appendInstructions,
  },
  {
    method: 'PUT',
    pattern: /^\/tasks\/([^/]+)\/instructions$/,
    key: 'PUT /tasks/{id}/instructions',
    handle: replaceInstructions,
  },
  { method: 'POST', pattern: /^\/tasks\/([^/]+)\/command$/, key: 'POST /tasks/{id}/command', handle: command },
  { method: 'GET', pattern: /^\/results\/([^/]+)$/, key: 'GET /results/{id}', handle: getResults },
  { method: 'POST', pattern: /^\/saved_tasks$/, key: 'POST /saved_tasks', handle: createSavedTask },
  { method: 'GET', pattern: /^\/saved_tasks$/, key: 'GET /saved_tasks', handle: listSavedTasks },
  // `.+`: a client that does not encode a slash in the name still reaches the saved task.
  { method: 'GET', pattern: /^\/saved_tasks\/name\/(.+)$/, key: 'GET /saved_tasks/name/{name}', handle: getSavedTask },
];

export type RouteMatch =
  | { kind: 'route'; key: string; run: (ctx: ApiContext, body: RequestBody) => Reply }
  | { kind: 'error'; key: string; reply: Reply };

/** Finds the endpoint of a path (relative to `/api/v1`, still percent-encoded). */
export function matchRoute(method: string, path: string): RouteMatch {
  let pathKnown = false;
  for (const route of ROUTES) {
    const match = route.pattern.exec(path);
    if (!match) continue;
    pathKnown = true;
    if (route.method !== method) continue;
    let params: string[];
    try {
      params = match.slice(1).map((param) => decodeURIComponent(param));
    } catch {
      return { kind: 'error', key: route.key, reply: errorReply(400, MESSAGES.invalid) };
    }
    return { kind: 'route', key: route.key, run: (ctx, body) => route.handle(ctx, params, body) };
  }
  return pathKnown
    ? { kind: 'error', key: `${method} (method not allowed)`, reply: errorReply(405, MESSAGES.methodNotAllowed) }
    : { kind: 'error', key: `${method} (unknown path)`, reply: errorReply(404, MESSAGES.notFound) };
}

function createTask(ctx: ApiContext, _params: string[], body: RequestBody): Reply {
  const invalid = errorReply(400, MESSAGES.createInvalid);
  if (!isRecord(body)) return invalid;
  const instructions = parseInstructions(body.instructions);
  const geoLocation = parseGeoLocation(body.geoLocation);
  const { project, type, inspect, awaitable } = body;
  if (!instructions || !geoLocation) return invalid;
  if (typeof project !== 'string' || project.trim() === '' || ctx.unknownProjects.has(project)) return invalid;
  if (typeof type !== 'string' || !TASK_TYPES.has(type)) return invalid;
  if (inspect !== undefined && typeof inspect !== 'boolean') return invalid;
  if (awaitable !== undefined && typeof awaitable !== 'boolean') return invalid;
  let task: Task;
  try {
    task = ctx.tasks.create({ instructions, geoLocation, project, type, awaitable }, ctx.now);
  } catch (err) {
    if (err instanceof TooManyRunningTasks) return errorReply(429, MESSAGES.tooManyRunning);
    throw err;
  }
  return { status: 200, body: taskExecution(task, ctx) };
}

/**
 * `observed`: a finished task was seen answered with `executionId`, `scriptType`, `status`,
 * `geoLocation` and `result` only, so an ended task has no `progress`; `progress` of a task not
 * ended yet is a GUESS (the dashboard shows the engine's log lines while a task runs), as is
 * `error` as an object (see engine-errors.ts); `error` is left out when there is none.
 * `documented`: every field of the interface description, `error` as its message or null.
 */
function getTask(ctx: ApiContext, [id]: string[]): Reply {
  const task = visibleTask(ctx, id!);
  if (!task) return errorReply(404, MESSAGES.taskNotFound);
  const { now } = ctx;
  const status = task.status(now);
  const shown = status === 'running' && task.scenario.unknownStatus ? 'thinking' : status;
  const reported = reportStatus(task, shown);
  const last = task.visibleEntries(now).at(-1);
  const hasOutput = status === 'awaiting' || status === 'finalized' || status === 'stopped';
  const result = hasOutput && last ? entryResult(task, last) : null;
  const { bigProgressBytes } = task.scenario;
  const progress = {
    status: bigProgressBytes !== null && !isEnded(status) ? largeText(bigProgressBytes, 'progress') : reported,
    logs: task.visibleLogs(now),
  };
  const common = {
    executionId: task.executionId,
    scriptType: task.scriptType,
    status: reported,
    geoLocation: answeredGeoLocation(task.geoLocation),
  };
  if (ctx.mode === 'documented') {
    return {
      status: 200,
      body: {
        ...common,
        scriptId: task.scriptId,
        progress,
        started: iso(task.createdAt),
        estimatedCompletion: isoOrNull(task.estimatedCompletion(now)),
        result,
        error: task.error?.message ?? null,
      },
    };
  }
  const body: Record<string, unknown> = { ...common };
  if (!isEnded(status)) body.progress = progress;
  body.result = result;
  if (task.error) body.error = { ...task.error };
  return { status: 200, body };
}

function appendInstructions(ctx: ApiContext, [id]: string[], body: RequestBody): Reply {
  return changeInstructions(ctx, id!, body, (task, instructions) => task.append(instructions, ctx.now));
}

function replaceInstructions(ctx: ApiContext, [id]: string[], body: RequestBody): Reply {
  return changeInstructions(ctx, id!, body, (task, instructions) => task.replace(instructions, ctx.now));
}

/**
 * Real clients send extra fields (geoLocation, awaitable, project, type) with appended
 * instructions; they are accepted and ignored: the session keeps the settings it was created with.
 */
function changeInstructions(
  ctx: ApiContext,
  id: string,
  body: RequestBody,
  change: (task: Task, instructions: Instruction[]) => 'ok' | 'ended',
): Reply {
  const task = ctx.tasks.get(id);
  if (!task) return errorReply(404, MESSAGES.taskNotFound);
  const instructions = isRecord(body) ? parseInstructions(body.instructions, true) : undefined;
  if (!instructions) return errorReply(400, MESSAGES.invalid);
  if (change(task, instructions) === 'ended') return endedTaskReply(ctx.endedTaskAnswer, MESSAGES.invalid);
  ctx.tasks.changed(task);
  return { status: 200, body: taskExecution(task, ctx) };
}

function command(ctx: ApiContext, [id]: string[], body: RequestBody): Reply {
  if (!isRecord(body) || body.command !== 'stop') return errorReply(400, MESSAGES.invalidCommand);
  // A task not visible yet never sees the command: it is neither applied nor counted.
  const task = visibleTask(ctx, id!);
  if (!task) return errorReply(404, MESSAGES.taskNotFound);
  if (task.stop(ctx.now) === 'ended') return endedTaskReply(ctx.endedTaskAnswer, MESSAGES.invalidCommand);
  return { status: 200, body: { message: MESSAGES.taskStopped } };
}

/**
 * The answer to instructions or a stop for a task that has ended: unknown for real BrowserAI, so
 * chosen by `endedTaskAnswer` (mode.ts). `invalidMessage` is the endpoint's documented 400 message.
 */
function endedTaskReply(answer: EndedTaskAnswer, invalidMessage: string): Reply {
  switch (answer) {
    case 400:
      return errorReply(400, invalidMessage);
    case 404:
      return errorReply(404, MESSAGES.taskNotFound);
    case 409:
      return errorReply(409, MESSAGES.taskEnded);
  }
}

function getResults(ctx: ApiContext, [id]: string[]): Reply {
  const task = visibleTask(ctx, id!);
  if (!task) return errorReply(404, MESSAGES.taskNotFound);
  const { now } = ctx;
  const status = task.status(now);
  return {
    status: 200,
    body: {
      executionId: task.executionId,
      status: reportStatus(task, status),
      started: iso(task.createdAt),
      completed: isoOrNull(task.endedAt),
      results: task.visibleEntries(now).map((entry) => resultEntry(task, entry, ctx.origin)),
    },
  };
}

/**
 * The task as reads and stop commands find it: a `[not-visible=...]` task is unknown to them for a
 * while after its create. This eventual consistency is a GUESS, not observed: nothing public shows
 * BrowserAI doing it, but an ID answered by a create and then 404 on the first poll is the kind of
 * thing a replicated store does, and a client should survive it. Appends and replaces still find
 * the task.
 */
function visibleTask(ctx: ApiContext, id: string): Task | undefined {
  const task = ctx.tasks.get(id);
  return task && task.isVisible(ctx.now) ? task : undefined;
}

function createSavedTask(ctx: ApiContext, _params: string[], body: RequestBody): Reply {
  const invalid = errorReply(400, MESSAGES.invalid);
  if (!isRecord(body)) return invalid;
  const { name, project, type, cron_settings } = body;
  const instructions = parseInstructions(body.instructions);
  const geoLocation = parseGeoLocation(body.geoLocation);
  if (typeof name !== 'string' || name.trim() === '' || !instructions || !geoLocation) return invalid;
  if (typeof project !== 'string' || project.trim() === '' || ctx.unknownProjects.has(project)) return invalid;
  if (typeof type !== 'string' || !SAVED_TASK_TYPES.has(type)) return invalid;
  if (cron_settings !== undefined && cron_settings !== null && typeof cron_settings !== 'string') return invalid;
  const saved = ctx.saved.create(
    { name, instructions, type, project, geoLocation, cron_settings: cron_settings ?? '' },
    ctx.now,
  );
  if (!saved) return errorReply(409, MESSAGES.savedTaskExists);
  return { status: 200, body: { taskId: saved.taskId, message: MESSAGES.savedTaskCreated } };
}

function getSavedTask(ctx: ApiContext, [name]: string[]): Reply {
  const saved = ctx.saved.byNameOf(name!);
  return saved ? { status: 200, body: savedTaskBody(saved) } : errorReply(404, MESSAGES.savedTaskNotFound);
}

function listSavedTasks(ctx: ApiContext): Reply {
  return { status: 200, body: ctx.saved.list().map(savedTaskBody) };
}

/**
 * The answer of create, append and replace. A real create answer had these four fields only
 * (`observed`); the interface description adds `started` and `estimatedCompletion` (`documented`).
 */
function taskExecution(task: Task, ctx: ApiContext): Record<string, unknown> {
  const { now } = ctx;
  const execution: Record<string, unknown> = {
    executionId: task.executionId,
    scriptType: task.scriptType,
    status: reportStatus(task, task.status(now)),
    geoLocation: answeredGeoLocation(task.geoLocation),
  };
  if (ctx.mode === 'documented') {
    execution.started = iso(task.createdAt);
    execution.estimatedCompletion = isoOrNull(task.estimatedCompletion(now));
  }
  if (task.scenario.bigCreateBytes !== null) execution.debug = largeText(task.scenario.bigCreateBytes, 'extra');
  return execution;
}

/** A real create answer showed the country in lower case (`us` for a request's `US`), whatever the request sent. */
function answeredGeoLocation(geo: GeoLocation): GeoLocation {
  return { ...geo, country: geo.country.toLowerCase() };
}

function resultEntry(task: Task, entry: StoredEntry, origin: string): Record<string, unknown> {
  const failed = entry.state === 'failed';
  return {
    model_output: failed
      ? `Step ${entry.step}/${entry.total} failed: ${FAIL_ERROR}`
      : `Step ${entry.step}/${entry.total} completed.`,
    result: entryResult(task, entry),
    state: entry.state,
    metadata: { url: `https://example.com/step-${entry.step}`, title: `Example page ${entry.step}`, step: entry.step },
    history_index: entry.historyIndex,
    screenshot_url: artifactUrl(origin, task.executionId, entry.historyIndex, 'screenshot'),
    html_url: artifactUrl(origin, task.executionId, entry.historyIndex, 'html'),
    console_url: artifactUrl(origin, task.executionId, entry.historyIndex, 'console'),
    insert_ts: iso(entry.at),
  };
}

function entryResult(task: Task, entry: StoredEntry): unknown {
  if (entry.state === 'failed') return FAIL_ERROR;
  if (entry.large && task.scenario.largeResultBytes !== null)
    return largeText(task.scenario.largeResultBytes, 'result');
  const ordinary = `Instruction ${entry.step} of ${entry.total} done`;
  return hostileResult(task, entry, ordinary) ?? ordinary;
}

function savedTaskBody(saved: StoredSavedTask): Record<string, unknown> {
  return {
    taskId: saved.taskId,
    name: saved.name,
    instructions: saved.instructions.map((instruction) => ({ ...instruction })),
    type: saved.type,
    project: saved.project,
    geoLocation: { ...saved.geoLocation },
    cron_settings: saved.cron_settings,
  };
}

function reportStatus(task: Task, status: TaskStatus | 'thinking'): string {
  const shown = task.scenario.uppercaseStatus ? status.toUpperCase() : status;
  const { longStatusChars } = task.scenario;
  return longStatusChars !== null && status !== 'thinking' && !isEnded(status)
    ? longStatus(shown, longStatusChars)
    : shown;
}

/** Item `type` is optional: real clients omit it on append. */
function parseInstructions(value: unknown, allowType = false): Instruction[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const instructions: Instruction[] = [];
  for (const item of value) {
    if (!isRecord(item) || typeof item.action !== 'string') return undefined;
    if (allowType && item.type !== undefined && typeof item.type !== 'string') return undefined;
    instructions.push(
      allowType && typeof item.type === 'string' ? { action: item.action, type: item.type } : { action: item.action },
    );
  }
  return instructions;
}

function parseGeoLocation(value: unknown): GeoLocation | undefined {
  if (!isRecord(value) || typeof value.country !== 'string') return undefined;
  const geo: GeoLocation = { country: value.country };
  if (typeof value.city === 'string') geo.city = value.city;
  if (typeof value.zipcode === 'string') geo.zipcode = value.zipcode;
  return geo;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
