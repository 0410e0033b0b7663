// The MCP server: BrowserAI tasks as MCP tools, each backed by a durable `browserTask` (or
// `runSavedTask`) workflow through the client API (starters/tasks.ts). A tool call waits a bounded
// time and reports where the task stands; the task never depends on the call, the session or this
// process. One `Server` per MCP session (stdio has one; HTTP one per session, http.ts).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { WorkflowNotFoundError } from '@temporalio/client';
import { SavedTasks } from '../starters/saved-tasks';
import { InvalidInputError, type BrowserTasks } from '../starters/tasks';
import { instructionProblems, isPlainObject, taskInputProblems } from '../contract/input';
import { runSavedTaskInputProblems } from '../contract/saved-task-input';
import type { InputRequest } from '../contract/messages';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../contract/version';
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
  fenceProblems,
  inServersLane,
  mintedHere,
  mintWorkflowId,
  ownershipProblems,
  resolveFence,
  type McpFence,
  type McpFenceOptions,
} from './fence';
import { loadToolSchemas } from './tool-schemas';
import { typedCodeProblems, waitForTask, type AskedCode, type WaitContext } from './wait-for-task';

/** Options of `createMcpServer`. */
export interface McpServerOptions {
  /** The task client (`BrowserTasks.fromEnv()`): its namespace and task queue are the server's. */
  tasks: BrowserTasks;
  /** What MCP clients may set, and the prefix of the workflow IDs they reach; everything closed by default. */
  fence?: McpFenceOptions;
  /** How often a waiting call reads the task's progress for notifications; default 2 s. */
  progressIntervalMs?: number;
  /** How long the server waits for the user to answer a code request; default 10 min (and never past the request's own timeout). */
  elicitationTimeoutMs?: number;
  /** Diagnostics, one line each (the CLI writes them to stderr); never a code. Default: none. */
  log?: (line: string) => void;
}

const TOOL_DESCRIPTIONS: Record<string, string> = {
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

/** What a tool handler returns: the structured result, or refused input. */
type ToolAnswer = { structured: Record<string, unknown> } | { refused: string };

/** The MCP server of BrowserAI tasks, for one session: connect it to a transport. */
export function createMcpServer(options: McpServerOptions): Server {
  const fence = resolveFence(options.fence);
  const log = options.log ?? (() => undefined);
  const schemas = loadToolSchemas();
  const tools: Tool[] = Object.keys(TOOL_DESCRIPTIONS).map((name) => {
    const toolSchemas = schemas.get(name);
    if (!toolSchemas) throw new Error(`schemas/contract.json has no mcp tool "${name}": run npm run schemas`);
    return { name, description: TOOL_DESCRIPTIONS[name], ...toolSchemas } as Tool;
  });
  const server = new Server(
    { name: PACKAGE_NAME, version: PACKAGE_VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        'BrowserAI browser tasks run as durable Temporal workflows: a task outlives this session. Keep the workflowId ' +
        'a tool returns; get_task resumes the task from any session. One-time codes are typed once.',
    },
  );
  const handlers = new ToolHandlers(options, fence, server, log);

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = request.params;
    try {
      const answer = await handlers.call(name, args, extra);
      if ('refused' in answer) return { isError: true, content: [{ type: 'text', text: answer.refused }] };
      return {
        structuredContent: answer.structured,
        content: [{ type: 'text', text: JSON.stringify(answer.structured, null, 2) }],
      };
    } catch (err) {
      if (extra.signal.aborted) throw err;
      const message = err instanceof Error ? err.message : String(err);
      log(`mcp: ${name} failed: ${message}`);
      return { isError: true, content: [{ type: 'text', text: `${name} failed: ${message}` }] };
    }
  });
  return server;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

class ToolHandlers {
  readonly #savedTasks: SavedTasks;

  constructor(
    readonly options: McpServerOptions,
    readonly fence: McpFence,
    readonly server: Server,
    readonly log: (line: string) => void,
  ) {
    this.#savedTasks = new SavedTasks(options.tasks.client, options.tasks.taskQueue);
  }

  get tasks(): BrowserTasks {
    return this.options.tasks;
  }

  async call(name: string, args: Record<string, unknown>, extra: Extra): Promise<ToolAnswer> {
    const problems = waitOptionProblems(args);
    if (name === 'list_waiting_tasks' || name === 'list_my_tasks') problems.push(...limitProblems(args));
    else if (name !== 'run_task' && name !== 'run_saved_task')
      problems.push(...ownershipProblems(args.workflowId, this.fence));
    if (problems.length > 0) return refused(problems);
    try {
      switch (name) {
        case 'run_task':
          return await this.runTask(args as unknown as McpRunTaskInput, extra);
        case 'run_saved_task':
          return await this.runSavedTask(args as unknown as McpRunSavedTaskInput, extra);
        case 'get_task':
          return { structured: { ...(await this.wait(args as unknown as McpTaskRef, extra)) } };
        case 'submit_code':
          return await this.submitCode(args as unknown as McpSubmitCodeInput, extra);
        case 'add_instructions':
          return await this.addInstructions(args as unknown as McpAddInstructionsInput, extra);
        case 'end_session':
          return await this.afterSignal(args as unknown as McpTaskRef, extra, (id) => this.tasks.complete(id));
        case 'cancel_task':
          return await this.afterSignal(args as unknown as McpTaskRef, extra, (id) => this.tasks.cancel(id));
        case 'list_waiting_tasks':
          return { structured: { ...(await this.listWaiting(args as McpListInput)) } };
        case 'list_my_tasks':
          return { structured: { ...(await this.listMine(args as McpListInput)) } };
        default:
          return { refused: `Unknown tool "${name}". The tools are: ${Object.keys(TOOL_DESCRIPTIONS).join(', ')}.` };
      }
    } catch (err) {
      if (err instanceof InvalidInputError) return refused(err.problems);
      if (err instanceof WorkflowNotFoundError)
        return { refused: `No task with workflowId "${String(args.workflowId)}" is known (or its history is gone).` };
      throw err;
    }
  }

  async runTask(args: McpRunTaskInput, extra: Extra): Promise<ToolAnswer> {
    if (!isPlainObject(args.task)) return refused(['task must be an object: what browserTask takes']);
    const problems = [...fenceProblems(args.task, this.fence), ...taskInputProblems(args.task)];
    if (problems.length > 0) return refused(problems.map((p) => `task: ${p}`));
    const handle = await this.tasks.start(inServersLane(args.task, this.fence), {
      workflowId: mintWorkflowId(this.fence),
    });
    this.log(`mcp: started ${handle.workflowId}`);
    return { structured: { ...(await this.wait({ ...args, workflowId: handle.workflowId }, extra)) } };
  }

  async runSavedTask(args: McpRunSavedTaskInput, extra: Extra): Promise<ToolAnswer> {
    if (!isPlainObject(args.savedTask)) return refused(['savedTask must be an object: { name, overrides? }']);
    const problems = [
      ...fenceProblems(args.savedTask.overrides, this.fence, 'overrides.'),
      ...runSavedTaskInputProblems(args.savedTask),
    ];
    if (problems.length > 0) return refused(problems.map((p) => `savedTask: ${p}`));
    const overrides = inServersLane(args.savedTask.overrides ?? {}, this.fence);
    const handle = await this.#savedTasks.run(args.savedTask.name, overrides, {
      workflowId: mintWorkflowId(this.fence),
    });
    this.log(`mcp: started saved task run ${handle.workflowId}`);
    return { structured: { ...(await this.wait({ ...args, workflowId: handle.workflowId }, extra)) } };
  }

  async submitCode(args: McpSubmitCodeInput, extra: Extra): Promise<ToolAnswer> {
    const problems = typedCodeProblems(args.code);
    if (problems.length > 0) return refused(problems);
    const answered = await this.openRequestSequence(args.workflowId);
    await this.tasks.submitCode(args.workflowId, args.code.trim());
    this.log(`mcp: a code was submitted to ${args.workflowId}`);
    return { structured: { ...(await this.wait(args, extra, answered)) } };
  }

  async addInstructions(args: McpAddInstructionsInput, extra: Extra): Promise<ToolAnswer> {
    const problems = instructionProblems(args.instructions);
    if (problems.length > 0) return refused(problems);
    const answered = await this.openRequestSequence(args.workflowId);
    await this.tasks.append(args.workflowId, args.instructions);
    return { structured: { ...(await this.wait(args, extra, answered)) } };
  }

  async afterSignal(args: McpTaskRef, extra: Extra, send: (workflowId: string) => Promise<void>): Promise<ToolAnswer> {
    const answered = await this.openRequestSequence(args.workflowId);
    await send(args.workflowId);
    return { structured: { ...(await this.wait(args, extra, answered)) } };
  }

  /** The request the task waits on now (one query), which the call is about to answer: the wait looks past it. */
  async openRequestSequence(workflowId: string): Promise<number> {
    const state = await this.tasks.state(workflowId);
    return state.inputRequest?.sequence ?? 0;
  }

  async listWaiting(args: McpListInput): Promise<McpWaitingTasks> {
    const all = await this.tasks.listAwaitingInput({ limit: 1_000, details: true });
    return { tasks: all.filter((task) => mintedHere(task.workflowId, this.fence)).slice(0, args.limit ?? 20) };
  }

  async listMine(args: McpListInput): Promise<McpRecentTasks> {
    const limit = args.limit ?? 20;
    const prefix = this.fence.idPrefix.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
    const query = `WorkflowId STARTS_WITH '${prefix}' AND WorkflowType IN ('browserTask', 'runSavedTask')`;
    const tasks: McpRecentTasks['tasks'] = [];
    for await (const listed of this.tasks.client.workflow.list({ query, pageSize: limit })) {
      if (!mintedHere(listed.workflowId, this.fence)) continue; // another prefix that begins with this one
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

  /** Waits for the task within the call, with elicitation and progress when the client offers them. */
  async wait(args: McpTaskRef, extra: Extra, after = 0) {
    const { workflowId } = args;
    const progressToken = extra._meta?.progressToken;
    let progressCount = 0;
    const context: WaitContext = {
      tasks: this.tasks,
      signal: extra.signal,
      progressIntervalMs: this.options.progressIntervalMs ?? 2_000,
      log: this.log,
      askForCode: this.server.getClientCapabilities()?.elicitation
        ? (request) => this.askForCode(request, extra)
        : undefined,
      progress:
        progressToken === undefined
          ? undefined
          : (message) =>
              extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress: ++progressCount, message },
              }),
    };
    try {
      return await waitForTask(context, workflowId, args, after);
    } catch (err) {
      // A cancelled call cancels nothing, unless it asked to (cancelIfCallCancelled).
      if (extra.signal.aborted && args.cancelIfCallCancelled) {
        this.log(`mcp: the call was cancelled; cancelling ${workflowId} as it asked`);
        await this.tasks.cancel(workflowId).catch(() => undefined);
      }
      throw err;
    }
  }

  /** Asks the user for the code through the client (`elicitation/create`, tied to this tool call). */
  async askForCode(request: InputRequest, extra: Extra): Promise<AskedCode> {
    const timeoutMs = Math.max(
      1_000,
      Math.min(this.options.elicitationTimeoutMs ?? 600_000, Date.parse(request.timesOutAt) - Date.now()),
    );
    let message =
      `BrowserAI task ${request.workflowId} (project ${request.project}) asks for a one-time code.` +
      (request.refusedCodes > 0 ? ` The last code was refused (${request.attemptsLeft ?? '?'} attempts left).` : '') +
      (request.prompt ? `\n\nThe page says:\n${request.prompt}` : '');
    for (let attempt = 1; attempt <= 3; attempt++) {
      let result;
      try {
        result = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: {
              message,
              requestedSchema: {
                type: 'object',
                properties: {
                  code: {
                    type: 'string',
                    title: 'One-time code',
                    description: 'Letters, digits or dashes',
                    minLength: 1,
                    maxLength: 64,
                  },
                },
                required: ['code'],
              },
            },
          },
          ElicitResultSchema,
          { timeout: timeoutMs, signal: extra.signal },
        );
      } catch (err) {
        if (extra.signal.aborted) throw err;
        this.log(
          `mcp: asking for a code for ${request.workflowId} failed: ${err instanceof Error ? err.message : err}`,
        );
        return { none: 'failed' };
      }
      if (result.action !== 'accept') return { none: result.action === 'decline' ? 'declined' : 'cancelled' };
      const code = typeof result.content?.code === 'string' ? result.content.code.trim() : '';
      const problems = typedCodeProblems(code);
      if (problems.length === 0) return { code };
      message = `That was not a one-time code (${problems.join('; ')}). Please type the code again.`;
    }
    return { none: 'failed' };
  }
}

function refused(problems: string[]): ToolAnswer {
  return { refused: `Invalid input: ${problems.join('; ')}. Nothing was started or sent.` };
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
