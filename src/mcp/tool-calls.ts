// The tools' calls: each checks all of its arguments at once, acts through the client API (start,
// signal, cancel), then waits a bounded time and reports where the task stands. A task that asks
// for a code is put to the user as `input_required` (code-requests.ts), and the call goes on with
// the answer; a client that declared the Tasks extension gets the started task as an MCP task
// instead of a wait (mcp-tasks.ts). Nothing here depends on the call, the session or the process:
// the task is a workflow, and every round of a call is answered from Temporal and the sealed state.
import {
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type InputRequiredResult,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { WorkflowNotFoundError } from '@temporalio/client';
import { instructionProblems, taskInputProblems } from '../contract/input-problems';
import { isPlainObject } from '../contract/text';
import { runSavedTaskInputProblems } from '../contract/saved-task-input';
import { stateQuery, type InputRequest } from '../contract/messages';
import { SavedTasks } from '../starters/saved-tasks';
import { InvalidInputError, type BrowserTasks } from '../starters/tasks';
import type {
  McpAddInstructionsInput,
  McpListInput,
  McpRecentTasks,
  McpRunSavedTaskInput,
  McpRunTaskInput,
  McpSubmitCodeInput,
  McpTaskRef,
  McpWaitOptions,
  McpWaitingTasks,
} from './contract';
import {
  MAX_ASKS,
  argumentsDigest,
  askForCode,
  codeAnswer,
  codeInputKey,
  type CodeRequestState,
} from './code-requests';
import { fenceProblems, inServersLane, mintedHere, mintWorkflowId, ownershipProblems, type McpFence } from './fence';
import { declaresTasks, type McpTasks } from './mcp-tasks';
import { reportResult, waitingReport } from './task-report';
import { typedCodeProblems, waitForTask, type WaitContext } from './wait-for-task';

/** What a tool call answers: a report (or a refusal), a question for the user, or an MCP task. */
export type ToolCallAnswer = CallToolResult | InputRequiredResult | Record<string, unknown>;

/** The tools and their descriptions, in the order tools/list gives them. */
export const TOOL_DESCRIPTIONS: Record<string, string> = {
  run_task:
    'Run a BrowserAI browser task (a durable Temporal workflow) and wait up to waitSeconds for it. Returns its ' +
    'workflowId and status: completed with its result, waiting for a code or instructions, or still running (then ' +
    'call get_task later: the task goes on without this call). When the task asks for a one-time code and this ' +
    'client supports elicitation, the user is asked for it here.',
  run_saved_task: 'Run a BrowserAI saved task by name (with optional overrides) and wait for it, as run_task does.',
  get_task:
    'Where a task stands, waiting up to waitSeconds (0: just look): its result once done. Resumes any task this ' +
    'server started, from any session.',
  submit_code: 'Give a waiting task the one-time code it asked for (typed once), then wait for it as get_task does.',
  add_instructions:
    'Send instructions to an awaitable session (task.awaitable) waiting for them, then wait until it waits again ' +
    'or ends. Each instruction is {"action": "..."}.',
  end_session: 'End an awaitable session once its instructions are done, and wait for its results.',
  cancel_task: 'Cancel a task: its workflow sends BrowserAI one stop and ends with the results so far.',
  list_waiting_tasks: "This server's tasks that wait for input now (a code or instructions), longest wait first.",
  list_my_tasks: 'The tasks this server started, newest first, with their workflow status.',
};

/** What the calls share across a server's instances. */
export interface ToolCallsOptions {
  tasks: BrowserTasks;
  fence: McpFence;
  mcpTasks: McpTasks;
  codec: RequestStateCodec<CodeRequestState>;
  progressIntervalMs: number;
  log: (line: string) => void;
}

/** The tools of one server instance (one request, session or connection). */
export class ToolCalls {
  readonly #savedTasks: SavedTasks;

  constructor(
    private readonly options: ToolCallsOptions,
    /** Whether the client can be asked (elicitation), for this request. */
    private readonly canElicit: (ctx: ServerContext) => boolean,
  ) {
    this.#savedTasks = new SavedTasks(options.tasks.client, options.tasks.taskQueue);
  }

  get #tasks(): BrowserTasks {
    return this.options.tasks;
  }

  async call(name: string, args: Record<string, unknown>, ctx: ServerContext): Promise<ToolCallAnswer> {
    if (!Object.hasOwn(TOOL_DESCRIPTIONS, name))
      return refused(`Unknown tool "${name}". The tools are: ${Object.keys(TOOL_DESCRIPTIONS).join(', ')}.`);
    const problems = argumentProblems(name, args, this.options.fence);
    if (problems.length > 0) return refusedInput(problems);
    try {
      const state = ctx.mcpReq.requestState<CodeRequestState>();
      if (state !== undefined) return await this.#answered(name, args, state, ctx);
      switch (name) {
        case 'list_waiting_tasks':
          return reportResult(await this.#listWaiting(args as McpListInput));
        case 'list_my_tasks':
          return reportResult(await this.#listMine(args as McpListInput));
      }
      const { workflowId, after } = await this.#act(name, args);
      if ((name === 'run_task' || name === 'run_saved_task') && declaresTasks(ctx))
        return await this.options.mcpTasks.created(workflowId);
      return await this.#wait(name, args, workflowId, after, ctx, 0);
    } catch (err) {
      if (err instanceof InvalidInputError) return refusedInput(err.problems);
      if (err instanceof WorkflowNotFoundError)
        return refused(`No task with workflowId "${String(args.workflowId)}" is known (or its history is gone).`);
      throw err;
    }
  }

  /** What the tool does before it waits; `after`: the request it answered, which the wait looks past. */
  async #act(name: string, args: Record<string, unknown>): Promise<{ workflowId: string; after: number }> {
    const { fence, log } = this.options;
    switch (name) {
      case 'run_task': {
        const { task } = args as unknown as McpRunTaskInput;
        const handle = await this.#tasks.start(inServersLane(task, fence), { workflowId: mintWorkflowId(fence) });
        log(`mcp: started ${handle.workflowId}`);
        return { workflowId: handle.workflowId, after: 0 };
      }
      case 'run_saved_task': {
        const { savedTask } = args as unknown as McpRunSavedTaskInput;
        const handle = await this.#savedTasks.run(savedTask.name, inServersLane(savedTask.overrides ?? {}, fence), {
          workflowId: mintWorkflowId(fence),
        });
        log(`mcp: started saved task run ${handle.workflowId}`);
        return { workflowId: handle.workflowId, after: 0 };
      }
    }
    const { workflowId } = args as unknown as McpTaskRef;
    if (name === 'get_task') return { workflowId, after: 0 };
    const after = await this.#openRequestSequence(workflowId);
    switch (name) {
      case 'submit_code':
        await this.#tasks.submitCode(workflowId, (args as unknown as McpSubmitCodeInput).code.trim());
        log(`mcp: a code was submitted to ${workflowId}`);
        break;
      case 'add_instructions':
        await this.#tasks.append(workflowId, (args as unknown as McpAddInstructionsInput).instructions);
        break;
      case 'end_session':
        await this.#tasks.complete(workflowId);
        break;
      case 'cancel_task':
        await this.#tasks.cancel(workflowId);
        break;
    }
    return { workflowId, after };
  }

  /** The request the task waits on now (one query), which the call is about to answer: the wait looks past it. */
  async #openRequestSequence(workflowId: string): Promise<number> {
    return (await this.#openRequest(workflowId))?.sequence ?? 0;
  }

  async #openRequest(workflowId: string): Promise<InputRequest | null> {
    return (await this.#tasks.handle(workflowId).query(stateQuery)).inputRequest;
  }

  /**
   * A retried call with the user's answer to a code request (`requestState`, verified by the SDK
   * with the server's key before this runs). The state must belong to this very call, and its
   * request must still be the one the task waits on: a state replayed after its code was typed, or
   * brought to another call or another server's task, is refused and nothing is typed.
   */
  async #answered(
    name: string,
    args: Record<string, unknown>,
    state: CodeRequestState,
    ctx: ServerContext,
  ): Promise<ToolCallAnswer> {
    if (
      state.tool !== name ||
      state.argsDigest !== argumentsDigest(args) ||
      ownershipProblems(state.workflowId, this.options.fence).length > 0
    )
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        'requestState belongs to another call: retry the call that received it, with the same arguments',
      );
    const { workflowId, sequence } = state;
    const request = await this.#openRequest(workflowId);
    if (request?.sequence !== sequence || request.kind !== 'code')
      return refused(
        `The code request ${sequence} of task ${workflowId} is no longer open (answered already, or the task moved ` +
          `on): nothing was typed. Call get_task with workflowId "${workflowId}" to see where it stands.`,
      );
    const answer = codeAnswer(ctx.mcpReq.inputResponses, sequence);
    if ('missing' in answer) return askForCode(this.options.codec, state, request, ctx);
    if ('malformed' in answer) {
      if (state.asked >= MAX_ASKS)
        return reportResult(waitingReport(request, 'The user could not be asked for the code. '));
      return askForCode(
        this.options.codec,
        { ...state, asked: state.asked + 1 },
        request,
        ctx,
        answer.malformed.join('; '),
      );
    }
    const waitOptions = args as McpWaitOptions;
    if ('none' in answer) {
      if (waitOptions.ifCodeDeclined !== 'cancel')
        return reportResult(waitingReport(request, `The user ${answer.none} the code request. `));
      await this.#tasks.cancel(workflowId);
      this.options.log(`mcp: the user ${answer.none} the code request; cancelling ${workflowId} as the call asked`);
    } else {
      await this.#tasks.submitCode(workflowId, answer.code);
      this.options.log(`mcp: a code was submitted to ${workflowId} for request ${sequence}`);
    }
    return this.#wait(name, args, workflowId, sequence, ctx, state.progressSent);
  }

  /** Waits for the task within the call, with progress when asked; a code request goes to the user. */
  async #wait(
    name: string,
    args: Record<string, unknown>,
    workflowId: string,
    after: number,
    ctx: ServerContext,
    progressSent: number,
  ): Promise<ToolCallAnswer> {
    const waitOptions = args as McpWaitOptions;
    const progressToken = ctx.mcpReq._meta?.progressToken;
    const context: WaitContext = {
      tasks: this.#tasks,
      signal: ctx.mcpReq.signal,
      progressIntervalMs: this.options.progressIntervalMs,
      progress:
        progressToken === undefined
          ? undefined
          : (message) =>
              ctx.mcpReq.notify({
                method: 'notifications/progress',
                params: { progressToken, progress: ++progressSent, message },
              }),
    };
    let outcome;
    try {
      outcome = await waitForTask(context, workflowId, waitOptions, after);
    } catch (err) {
      // A cancelled call cancels nothing, unless it asked to (cancelIfCallCancelled).
      if (ctx.mcpReq.signal.aborted && waitOptions.cancelIfCallCancelled) {
        this.options.log(`mcp: the call was cancelled; cancelling ${workflowId} as it asked`);
        await this.#tasks.cancel(workflowId).catch(() => undefined);
      }
      throw err;
    }
    if ('report' in outcome) return reportResult(outcome.report);
    const request = outcome.codeWanted;
    if (!this.canElicit(ctx))
      return reportResult(waitingReport(request, 'This MCP client cannot ask the user (no elicitation). '));
    const state: CodeRequestState = {
      workflowId,
      sequence: request.sequence,
      tool: name,
      argsDigest: argumentsDigest(args),
      asked: 1,
      progressSent,
    };
    this.options.log(`mcp: asking the user for the code of ${workflowId} (${codeInputKey(request.sequence)})`);
    return askForCode(this.options.codec, state, request, ctx);
  }

  async #listWaiting(args: McpListInput): Promise<McpWaitingTasks> {
    const listed = await this.#tasks.listAwaitingInput({
      limit: args.limit ?? 20,
      details: true,
      workflowIdPrefix: this.options.fence.idPrefix,
    });
    // A longer prefix that begins with this one is another server's.
    return { tasks: listed.filter((task) => mintedHere(task.workflowId, this.options.fence)) };
  }

  async #listMine(args: McpListInput): Promise<McpRecentTasks> {
    const limit = args.limit ?? 20;
    const query = `WorkflowId STARTS_WITH ${quoted(this.options.fence.idPrefix)} AND WorkflowType IN ('browserTask', 'runSavedTask')`;
    const tasks: McpRecentTasks['tasks'] = [];
    for await (const listed of this.#tasks.client.workflow.list({ query, pageSize: limit })) {
      if (!mintedHere(listed.workflowId, this.options.fence)) continue; // another prefix that begins with this one
      tasks.push({
        workflowId: listed.workflowId,
        workflowStatus: listed.status.name,
        workflowType: listed.type,
        startTime: listed.startTime.toISOString(),
        closeTime: listed.closeTime?.toISOString() ?? null,
      });
      if (tasks.length >= limit) break;
    }
    return { tasks };
  }
}

/**
 * Every problem of a call's arguments, at once (the client API's checks, and the fence's): nothing
 * is started or sent while there is one.
 */
export function argumentProblems(name: string, args: Record<string, unknown>, fence: McpFence): string[] {
  if (name === 'list_waiting_tasks' || name === 'list_my_tasks') return limitProblems(args);
  const problems = waitOptionProblems(args);
  switch (name) {
    case 'run_task': {
      const { task } = args as Partial<McpRunTaskInput>;
      if (!isPlainObject(task)) return [...problems, 'task must be an object: what browserTask takes'];
      return [...problems, ...[...fenceProblems(task, fence), ...taskInputProblems(task)].map((p) => `task: ${p}`)];
    }
    case 'run_saved_task': {
      const { savedTask } = args as Partial<McpRunSavedTaskInput>;
      if (!isPlainObject(savedTask)) return [...problems, 'savedTask must be an object: { name, overrides? }'];
      return [
        ...problems,
        ...[...fenceProblems(savedTask.overrides, fence, 'overrides.'), ...runSavedTaskInputProblems(savedTask)].map(
          (p) => `savedTask: ${p}`,
        ),
      ];
    }
  }
  problems.push(...ownershipProblems(args.workflowId, fence));
  if (name === 'submit_code') problems.push(...typedCodeProblems(args.code));
  if (name === 'add_instructions') problems.push(...instructionProblems(args.instructions));
  return problems;
}

function waitOptionProblems(args: McpWaitOptions): string[] {
  const problems: string[] = [];
  const { waitSeconds, ifCodeDeclined, cancelIfCallCancelled } = args;
  if (waitSeconds !== undefined && !(Number.isInteger(waitSeconds) && waitSeconds >= 0 && waitSeconds <= 600))
    problems.push('waitSeconds must be a whole number of seconds from 0 to 600');
  if (ifCodeDeclined !== undefined && ifCodeDeclined !== 'keep-waiting' && ifCodeDeclined !== 'cancel')
    problems.push('ifCodeDeclined must be "keep-waiting" or "cancel"');
  if (cancelIfCallCancelled !== undefined && typeof cancelIfCallCancelled !== 'boolean')
    problems.push('cancelIfCallCancelled must be true or false');
  return problems;
}

function limitProblems(args: McpListInput): string[] {
  const { limit } = args;
  return limit === undefined || (Number.isInteger(limit) && limit >= 1 && limit <= 100)
    ? []
    : ['limit must be a whole number from 1 to 100'];
}

function refused(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

function refusedInput(problems: string[]): CallToolResult {
  return refused(`Invalid input: ${problems.join('; ')}. Nothing was started or sent.`);
}

function quoted(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
