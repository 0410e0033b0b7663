// The Tasks extension (`io.modelcontextprotocol/tasks`, protocol 2026-07-28): an MCP task is a
// `browserTask` workflow, its task ID the workflow ID. Everything is read from Temporal on each
// request, so any server instance answers for any task, and a new process continues where another
// stopped. tasks/get reads the workflow's description (no billed action) and, while it waits for a
// code, its open request (one query per request, remembered); tasks/update types a code through the
// same signal as submit_code (typed once); tasks/cancel cancels the workflow (one stop).
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  CLIENT_CAPABILITIES_META_KEY,
  type CallToolResult,
  type InputRequest as McpInputRequest,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { WorkflowNotFoundError, type WorkflowExecutionDescription } from '@temporalio/client';
import { isPlainObject } from '../contract/text';
import { stateQuery, type InputRequest } from '../contract/messages';
import { BrowserAIAwaitingInput, BrowserAIAwaitingInputSince } from '../contract/search-attributes';
import { finishedIfClosed } from '../starters/awaiting-input';
import type { BrowserTasks } from '../starters/tasks';
import { codeAnswer, codeForm, codeInputKey, sequenceOfKey } from './code-requests';
import { ownershipProblems, type McpFence } from './fence';
import { endedReport, reportResult } from './task-report';
import { progressLine } from './wait-for-task';

/** The extension's identifier, in capabilities. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** A task's status, as the extension names it. */
export type McpTaskState = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A task as tasks/get and notifications/tasks tell it (DetailedTask). */
export interface DetailedMcpTask {
  taskId: string;
  status: McpTaskState;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** null: kept as long as the namespace keeps the workflow's history. */
  ttlMs: null;
  pollIntervalMs: number;
  inputRequests?: Record<string, McpInputRequest>;
  result?: CallToolResult & { resultType: 'complete' };
}

/** Whether the request declared the Tasks extension among its client capabilities (2026-07-28 envelope). */
export function declaresTasks(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  return isPlainObject(capabilities?.extensions?.[TASKS_EXTENSION]);
}

/** tasks/* from a client that did not declare the extension: -32021, as the extension asks. */
export function requireTasksExtension(ctx: ServerContext): void {
  if (!declaresTasks(ctx))
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      `Missing required client capability: declare the ${TASKS_EXTENSION} extension`,
    );
}

// Remembered in this process only, to save queries: a request while it is open (keyed by when the
// wait began), a task once it ended (it never changes again). Any process can recompute either.
const openRequests = new Map<string, InputRequest | null>();
const endedTasks = new Map<string, DetailedMcpTask>();
const REMEMBERED = 1_000;

function remember<V>(map: Map<string, V>, key: string, value: V): V {
  map.set(key, value);
  if (map.size > REMEMBERED) map.delete(map.keys().next().value!);
  return value;
}

/** The extension's three methods and task creation, over the task client. */
export class McpTasks {
  constructor(
    private readonly tasks: BrowserTasks,
    private readonly fence: McpFence,
    private readonly pollIntervalMs: number,
    private readonly log: (line: string) => void,
  ) {}

  /** The task of a workflow just started (a task-augmented tools/call): `resultType: task`. */
  async created(workflowId: string): Promise<Record<string, unknown>> {
    const { inputRequests: _requests, result: _result, ...task } = await this.detailed(workflowId);
    return { resultType: 'task', ...task };
  }

  /** tasks/get: where the workflow stands, its open code request, or its result. */
  async detailed(taskId: string): Promise<DetailedMcpTask> {
    this.#checkOwned(taskId);
    const ended = endedTasks.get(taskId);
    if (ended) return ended;
    const handle = this.tasks.handle(taskId);
    let description: WorkflowExecutionDescription;
    try {
      description = await handle.describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw notFound();
      throw err;
    }
    const base = {
      taskId,
      createdAt: description.startTime.toISOString(),
      ttlMs: null,
      pollIntervalMs: this.pollIntervalMs,
    };
    if (description.status.name !== 'RUNNING') {
      const finished = await finishedIfClosed(handle);
      if (!finished) return this.detailed(taskId);
      const report = await endedReport(this.tasks, finished);
      const lastUpdatedAt = (description.closeTime ?? description.startTime).toISOString();
      return remember(
        endedTasks,
        taskId,
        report.status === 'cancelled'
          ? { ...base, status: 'cancelled', statusMessage: report.next, lastUpdatedAt }
          : {
              ...base,
              status: 'completed',
              statusMessage: report.next,
              lastUpdatedAt,
              // As tools/call would have answered it on this protocol (where every result says its type).
              result: { ...reportResult(report), resultType: 'complete' },
            },
      );
    }
    const request = await this.#openRequest(taskId, description);
    const lastUpdatedAt = new Date(
      Math.max(
        description.startTime.getTime(),
        request ? Date.parse(request.since) : 0,
        ...(description.raw.pendingActivities ?? []).map((a) => timestampMs(a.lastHeartbeatTime)),
      ),
    ).toISOString();
    if (request?.kind === 'code' && request.answeredBy === 'caller')
      return {
        ...base,
        status: 'input_required',
        statusMessage: `The task waits for a one-time code (request ${request.sequence}); it gives up at ${request.timesOutAt}.`,
        lastUpdatedAt,
        inputRequests: { [codeInputKey(request.sequence)]: codeForm(request) },
      };
    // Instructions come from the model through tools, not from the user through a form.
    const statusMessage =
      request?.kind === 'instructions'
        ? `The session waits for instructions: call add_instructions with workflowId "${taskId}", or end_session.`
        : ((await progressLine(this.tasks, description)) ?? 'The task is running.');
    return { ...base, status: 'working', statusMessage, lastUpdatedAt };
  }

  /**
   * tasks/update: a code for the request the task waits on now is typed (once: the workflow ignores
   * a code it has typed); answers to requests no longer open, declines and unknown keys are ignored,
   * as the extension asks. A malformed code is refused, so that the client asks the user again.
   */
  async update(taskId: string, inputResponses: unknown): Promise<void> {
    this.#checkOwned(taskId);
    if (!isPlainObject(inputResponses))
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'inputResponses must be an object');
    const sequences = Object.keys(inputResponses)
      .map(sequenceOfKey)
      .filter((s) => s !== undefined);
    let request: InputRequest | null;
    try {
      ({ inputRequest: request } = await this.tasks.handle(taskId).query(stateQuery));
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw notFound();
      throw err;
    }
    if (!request || request.kind !== 'code' || request.answeredBy !== 'caller' || !sequences.includes(request.sequence))
      return;
    const answer = codeAnswer(inputResponses, request.sequence);
    if ('malformed' in answer)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Invalid input: ${answer.malformed.join('; ')}. Nothing was typed: answer ${codeInputKey(request.sequence)} again.`,
      );
    if (!('code' in answer)) return;
    await this.tasks.submitCode(taskId, answer.code);
    this.log(`mcp: a code was submitted to ${taskId} for request ${request.sequence} (tasks/update)`);
  }

  /** tasks/cancel: cancels the workflow (one stop); a task already ended is acknowledged as well. */
  async cancel(taskId: string): Promise<void> {
    this.#checkOwned(taskId);
    try {
      await this.tasks.cancel(taskId);
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // Closed already (cancel is refused), or unknown.
      await this.tasks
        .handle(taskId)
        .describe()
        .catch(() => {
          throw notFound();
        });
    }
  }

  /** The request the task waits on now: remembered per wait, asked (one query) once. */
  async #openRequest(taskId: string, description: WorkflowExecutionDescription): Promise<InputRequest | null> {
    const awaiting = description.typedSearchAttributes.get(BrowserAIAwaitingInput);
    if (awaiting === false) return null;
    const since = description.typedSearchAttributes.get(BrowserAIAwaitingInputSince)?.getTime();
    // Without our search attributes (awaiting unknown) nothing tells one wait from the next: ask each time.
    const key = awaiting === true && since ? `${taskId}@${since}` : undefined;
    if (key && openRequests.has(key)) return openRequests.get(key)!;
    const { inputRequest } = await this.tasks.handle(taskId).query(stateQuery);
    return key ? remember(openRequests, key, inputRequest) : inputRequest;
  }

  #checkOwned(taskId: unknown): void {
    // Another server's task, or none: the same answer, so that IDs outside the prefix reveal nothing.
    if (ownershipProblems(taskId, this.fence).length > 0) throw notFound();
  }
}

function notFound(): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
}

/** A protobuf timestamp in milliseconds, 0 when unset (the SDK's own helper for this is internal). */
function timestampMs(
  ts: { seconds?: number | { toNumber(): number } | null; nanos?: number | null } | null | undefined,
): number {
  if (!ts) return 0;
  const seconds = typeof ts.seconds === 'number' ? ts.seconds : (ts.seconds?.toNumber() ?? 0);
  return seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1_000_000);
}
