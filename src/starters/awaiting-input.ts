// Being told when a task needs input, from a service that holds a Temporal client: wait for the
// next input request (one update the workflow answers when it happens: no polling loop here), and
// list the tasks waiting for input now (visibility).
import { WorkflowFailedError, type Client, type WorkflowExecutionInfo, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, TerminatedFailure, TimeoutFailure } from '@temporalio/common';
import { FailureType } from '../contract/errors';
import type { InboxView } from '../contract/inbox-messages';
import type { BrowserTaskResult } from '../contract/input';
import { INPUT_WAIT_MS } from '../contract/input-waits';
import {
  nextInputRequestUpdate,
  stateQuery,
  type InputRequest,
  type InputRequestWait,
  type TaskFinished,
} from '../contract/messages';
import { BrowserAIAwaitingInputSince, BrowserAIExecutionId, BrowserAIProject } from '../contract/search-attributes';
import type { browserTask } from '../workflows';
import { isCutKeyword, keywordValue } from '../workflows/keyword-value';

/** What `BrowserTasks.nextInputRequest` returns: the request, or how the task finished. */
export type NextInputRequest =
  { kind: 'input-requested'; request: InputRequest; open: boolean } | { kind: 'finished'; finished: TaskFinished };

/**
 * Sends the `nextInputRequest` update and waits for its answer: the workflow answers when the task
 * makes a request after `after`, or finishes. The SDK waits on the server (long polls), not on a
 * loop of ours. A run that continued as new meanwhile, or a wait that reached its bound, is asked
 * again; a closed workflow is read.
 */
export async function waitForInputRequest(
  handle: WorkflowHandle<typeof browserTask>,
  after: number,
  waitMs?: number,
): Promise<NextInputRequest> {
  const ids = new WaitUpdateIds(after);
  for (;;) {
    let answer: InputRequestWait;
    try {
      answer = await handle.executeUpdate(nextInputRequestUpdate, {
        args: [{ after, ...(waitMs !== undefined ? { waitMs } : {}) }],
        updateId: ids.current,
      });
    } catch (err) {
      const finished = await finishedIfClosed(handle);
      if (finished) return { kind: 'finished', finished };
      throw err;
    }
    if (answer.kind !== 'continued') return answer;
    ids.next();
  }
}

/**
 * The update IDs of one wait. Every caller waiting after the same `after` within the same five
 * minutes (INPUT_WAIT_MS.max) sends the same ID, so the server joins a retry (a caller restarted,
 * or one that timed out and asked again) to the update already waiting instead of holding one
 * more. After a `continued` answer the next ID is a later one: the server answers an ID it has
 * answered with the same answer.
 */
class WaitUpdateIds {
  #round: number;

  constructor(private readonly after: number) {
    this.#round = WaitUpdateIds.#now();
  }

  get current(): string {
    return `nextInputRequest-after-${this.after}-${this.#round}`;
  }

  next(): void {
    this.#round = Math.max(this.#round + 1, WaitUpdateIds.#now());
  }

  static #now(): number {
    return Math.floor(Date.now() / INPUT_WAIT_MS.max);
  }
}

/** How a closed workflow's task finished, read from the workflow itself (no worker needed); undefined while it runs. */
export async function finishedIfClosed(handle: WorkflowHandle<typeof browserTask>): Promise<TaskFinished | undefined> {
  const description = await handle.describe();
  if (description.status.name === 'RUNNING') return undefined;
  const base = { workflowId: handle.workflowId };
  try {
    const result: BrowserTaskResult = await handle.result();
    const stopped = result.status.toLowerCase() === 'stopped' && result.stopConfirmed === undefined;
    return {
      ...base,
      executionId: result.executionId,
      status: result.status,
      outcome: stopped ? 'cancelled' : 'completed',
      ...(result.stopConfirmed !== undefined ? { stopConfirmed: result.stopConfirmed } : {}),
    };
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    const { cause } = err;
    const soFar =
      cause instanceof ApplicationFailure ? (cause.details?.[0] as BrowserTaskResult | undefined) : undefined;
    const type = cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
    const timedOut =
      cause instanceof TimeoutFailure ||
      type === FailureType.TaskTimeout ||
      type === FailureType.AwaitingInputTimeout ||
      type === FailureType.Timeout;
    return {
      ...base,
      executionId: soFar?.executionId ?? null,
      status: soFar?.status ?? description.status.name.toLowerCase(),
      outcome:
        cause instanceof CancelledFailure || cause instanceof TerminatedFailure
          ? 'cancelled'
          : timedOut
            ? 'timed_out'
            : 'failed',
      ...(type ? { failureType: type } : {}),
      ...(soFar?.stopConfirmed !== undefined ? { stopConfirmed: soFar.stopConfirmed } : {}),
    };
  }
}

/** A task waiting for input, as `BrowserTasks.listAwaitingInput` lists it. */
export interface AwaitingTask {
  workflowId: string;
  runId: string;
  executionId: string | null;
  project: string | null;
  /** When the wait began (ISO 8601), and how long it has lasted at the moment of listing. */
  since: string | null;
  waitedMs: number | null;
  /** The open input request, when the list asked each task (`details: true`, or a namespace without our search attributes). */
  request?: InputRequest;
  /** A task with a `codeRecipient`, when the list asked it: where its code arrives (masked) and the latest inbox messages. */
  inbox?: InboxView;
}

/** Options of `BrowserTasks.listAwaitingInput`. */
export interface ListAwaitingOptions {
  /** Only this BrowserAI project. */
  project?: string;
  /** At most this many tasks; default 100, at most 1,000. */
  limit?: number;
  /** Ask each task for its open input request (one query each, which needs a worker). Default false. */
  details?: boolean;
  /** Only workflows whose ID begins so (the visibility query filters on it: a server's own tasks, e.g. MCP's). */
  workflowIdPrefix?: string;
}

/**
 * Tasks waiting for input, longest wait first, from visibility (`BrowserAIAwaitingInput = true`,
 * with `BrowserAIAwaitingInputSince`). A namespace without our search attributes cannot filter on
 * them: then the running `browserTask` workflows are listed and each is asked (the `state` query).
 */
export async function listAwaitingInput(client: Client, options: ListAwaitingOptions = {}): Promise<AwaitingTask[]> {
  const limit = Math.max(1, Math.min(options.limit ?? 100, 1_000));
  // As the workflow stores it: a project over 255 characters is cut and hashed (keyword-value.ts).
  const project =
    options.project === undefined ? '' : ` AND BrowserAIProject = ${quoted(keywordValue(options.project))}`;
  const running =
    options.workflowIdPrefix === undefined
      ? RUNNING
      : `${RUNNING} AND WorkflowId STARTS_WITH ${quoted(options.workflowIdPrefix)}`;
  const now = Date.now();
  let tasks: AwaitingTask[];
  try {
    tasks = await collect(client, `${running} AND BrowserAIAwaitingInput = true${project}`, limit, (listed) => {
      const since = listed.typedSearchAttributes.get(BrowserAIAwaitingInputSince);
      const known = since !== undefined && since.getTime() > 0;
      return {
        workflowId: listed.workflowId,
        runId: listed.runId,
        executionId: listed.typedSearchAttributes.get(BrowserAIExecutionId) || null,
        project: wholeProject(listed.typedSearchAttributes.get(BrowserAIProject), options.project),
        since: known ? since.toISOString() : null,
        waitedMs: known ? Math.max(0, now - since.getTime()) : null,
      };
    });
  } catch (err) {
    if (!isUnknownSearchAttribute(err)) throw err;
    return askEachRunningTask(client, limit, options.project, running);
  }
  if (options.details) await Promise.all(tasks.map((task) => addRequest(client, task)));
  // Tasks that publish nothing (started without our search attributes: by a caller in another
  // language, or by a release that dropped them all where the namespace lacked one) are asked.
  const silent = await askEachRunningTask(
    client,
    limit,
    options.project,
    `${running} AND BrowserAIAwaitingInput IS NULL`,
  );
  return [...tasks, ...silent].sort((a, b) => (b.waitedMs ?? -1) - (a.waitedMs ?? -1)).slice(0, limit);
}

const RUNNING = "WorkflowType = 'browserTask' AND ExecutionStatus = 'Running'";

/**
 * Without our search attributes: every running browserTask (or those `query` lists), asked whether
 * it waits (bounded by `limit`).
 */
async function askEachRunningTask(
  client: Client,
  limit: number,
  project?: string,
  query = RUNNING,
): Promise<AwaitingTask[]> {
  const running = await collect(client, query, limit, (listed): AwaitingTask => ({
    workflowId: listed.workflowId,
    runId: listed.runId,
    executionId: null,
    project: null,
    since: null,
    waitedMs: null,
  }));
  await Promise.all(running.map((task) => addRequest(client, task)));
  const now = Date.now();
  return running
    .filter((task) => task.request && (project === undefined || task.request.project === project))
    .map((task) => ({ ...task, waitedMs: Math.max(0, now - Date.parse(task.since!)) }))
    .sort((a, b) => b.waitedMs - a.waitedMs);
}

async function addRequest(client: Client, task: AwaitingTask): Promise<void> {
  try {
    const state = await client.workflow.getHandle(task.workflowId, task.runId).query(stateQuery);
    if (!state.inputRequest) return;
    task.request = state.inputRequest;
    if (state.inbox) task.inbox = state.inbox;
    task.executionId ??= state.executionId;
    if (task.project === null || isCutKeyword(task.project)) task.project = state.inputRequest.project;
    task.since ??= state.inputRequest.since;
  } catch {
    // It closed meanwhile, or no worker answers queries: listed without its request.
  }
}

/** The project as the caller knows it: the one filtered on, or the listed value (cut, if over 255 characters, until `details` asks the task). */
function wholeProject(listed: string | undefined, filtered: string | undefined): string | null {
  if (!listed) return null;
  return filtered !== undefined && keywordValue(filtered) === listed ? filtered : listed;
}

async function collect<T>(
  client: Client,
  query: string,
  limit: number,
  map: (listed: WorkflowExecutionInfo) => T,
): Promise<T[]> {
  const found: T[] = [];
  for await (const listed of client.workflow.list({ query, pageSize: Math.min(limit, 1_000) })) {
    found.push(map(listed));
    if (found.length >= limit) break;
  }
  return found;
}

function quoted(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The server refuses a visibility query naming a search attribute the namespace lacks. */
function isUnknownSearchAttribute(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (/BrowserAI\w+/.test(e.message) && /(not defined|unknown|invalid|no mapping|not a valid)/i.test(e.message))
      return true;
  }
  return false;
}
