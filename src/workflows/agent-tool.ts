// `browserai-temporal/agent-tool`: a browser for an AI agent written as a Temporal workflow. The
// agent's model calls the `browserTask` tool; the tool runs the task as a child `browserTask`
// workflow, so it is as durable as the agent (a worker restart, a deploy, a long task lose nothing)
// and cancelling the agent cancels the task (one stop). Framework-free: Temporal's AI SDK and
// OpenAI Agents integrations pin Temporal SDK 1.23 and cannot share a workflow bundle with 1.24
// (docs/design/agent-tool.md); any agent loop calls `execute` with the model's arguments.
//
// Workflow-safe: import it in workflow code only. The model chooses the instructions (and, if the
// developer lets it, the country); everything else about the task (project, type, timeouts, TOTP
// secret, webhooks) is the developer's, fixed in `task`, never the model's.
import { ChildWorkflowFailure, ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { executeChild, isCancellation, ParentClosePolicy, uuid4, workflowInfo } from '@temporalio/workflow';
import type { browserTask } from './browser-task';
import type { BrowserTaskInput, BrowserTaskResult } from '../contract/input';
import { taskInputProblems } from '../contract/input-problems';

/** What the model passes to the `browserTask` tool. */
export interface BrowserTaskToolArgs {
  /**
   * What the browser should do, in order, in plain words (e.g. "Open https://example.com and return the page title").
   * @minItems 1
   * @maxItems 20
   */
  instructions: string[];
  /**
   * ISO 3166-1 alpha-2 country the browser appears to be in; default the developer's.
   * @pattern ^[A-Za-z]{2}$
   */
  country?: string;
}

/** What the tool gives back to the model: the task's output, or why there is none. */
export interface BrowserTaskToolResult {
  ok: boolean;
  /** The `browserTask` workflow, for the developer's logs and the Temporal UI. */
  workflowId: string;
  /** BrowserAI's final status (ok), or the failure type (not ok: a `FailureType` name, or `Cancelled`). */
  status: string;
  /** The task's output (ok). */
  result?: unknown;
  /** What went wrong (not ok), for the model to explain or retry differently. */
  error?: string;
}

/** Options of `browserTaskTool`: the task the tool runs, but for its instructions. */
export interface BrowserTaskToolOptions {
  /** Project, type, location, timeouts, TOTP secret...: what `browserTask` takes, but `instructions`. */
  task: Omit<BrowserTaskInput, 'instructions'>;
  /** The task queue of the workers that run `browserTask`; default the agent workflow's own. */
  taskQueue?: string;
  /** May the model choose the country? Default false: `task.geoLocation` always. */
  modelChoosesCountry?: boolean;
  /** The tool's name, as the model sees it; default `browserTask`. */
  name?: string;
}

/** The tool's definition for a model: name, description and the JSON Schema of its arguments (from the contract). */
export interface AgentToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

// The contract's schema of BrowserTaskToolArgs (schemas/, generated from the type above): bundled
// with the workflow code, so the definition the model sees is the contract itself.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ARGS_SCHEMA = require('../../../schemas/browser-task-tool-args.schema.json') as {
  $defs: { BrowserTaskToolArgs: Record<string, unknown> };
};

/** What `browserTaskTool` returns: the definition to give the model, and the function to run its calls. */
export interface BrowserTaskTool {
  definition: AgentToolDefinition;
  /** Runs one call of the model (its arguments as the model wrote them) as a child `browserTask`; rethrows cancellation. */
  execute(args: unknown): Promise<BrowserTaskToolResult>;
}

/** A `browserTask` tool for an agent workflow's model. */
export function browserTaskTool(options: BrowserTaskToolOptions): BrowserTaskTool {
  const { properties, ...rest } = ARGS_SCHEMA.$defs.BrowserTaskToolArgs as { properties: Record<string, unknown> };
  const { country: _country, ...withoutCountry } = properties;
  const definition: AgentToolDefinition = {
    name: options.name ?? 'browserTask',
    description:
      'Runs a task in a real web browser (BrowserAI) and returns its output: give the steps as plain instructions. ' +
      'It can take minutes; it may fail (the error says why).',
    parameters: { ...rest, properties: options.modelChoosesCountry ? properties : withoutCountry },
  };
  return {
    definition,
    execute: (args) => runBrowserTaskTool(options, args),
  };
}

/** One tool call: the child workflow's result, or its failure, as the model should read it. Cancellation is not swallowed. */
async function runBrowserTaskTool(options: BrowserTaskToolOptions, args: unknown): Promise<BrowserTaskToolResult> {
  const parent = workflowInfo().workflowId;
  // Bounded, and unique per call and per run chain (uuid4 is the workflow's own, replay-safe).
  const workflowId = `${parent.slice(0, 200)}-browser-${uuid4()}`;
  const refuse = (error: string): BrowserTaskToolResult => ({ ok: false, workflowId, status: 'InvalidInput', error });
  if (!args || typeof args !== 'object') return refuse('arguments must be an object with "instructions"');
  const { instructions, country, ...rest } = args as Partial<BrowserTaskToolArgs> & Record<string, unknown>;
  if (!Array.isArray(instructions) || instructions.length === 0 || instructions.length > 20)
    return refuse('instructions must be a list of 1 to 20 plain-text steps');
  // Refused, never dropped: a model that asked for a priority or a longer timeout is told it has none.
  const notYours = [
    ...(country !== undefined && !options.modelChoosesCountry ? ['country'] : []),
    ...Object.keys(rest),
  ];
  if (notYours.length > 0)
    return refuse(
      `${notYours.join(', ')} ${notYours.length > 1 ? 'are' : 'is'} not yours to choose here: give only ` +
        (options.modelChoosesCountry ? 'instructions and country' : 'instructions'),
    );
  const input: BrowserTaskInput = {
    ...options.task,
    instructions: instructions.map((action) => ({ action: String(action) })),
    ...(country !== undefined ? { geoLocation: { ...options.task.geoLocation, country } } : {}),
  };
  const problems = taskInputProblems(input);
  if (problems.length > 0) return refuse(`invalid task: ${problems.join('; ')}`);
  try {
    const result: BrowserTaskResult = await executeChild<typeof browserTask>('browserTask', {
      workflowId,
      args: [input],
      ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
      // An agent that ends, times out or is terminated with the task still running has it cancelled
      // (one stop); Temporal's default, TERMINATE, would leave the BrowserAI task running unstopped.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      staticSummary: `Agent tool: BrowserAI task · project ${input.project}`,
    });
    return { ok: true, workflowId, status: result.status, result: result.result ?? result.results };
  } catch (err) {
    // The agent itself was cancelled: so is the task (Temporal cancels the child); the agent ends too.
    if (isCancellation(err)) throw err;
    if (!(err instanceof ChildWorkflowFailure)) throw err;
    const cause = err.cause;
    const status =
      cause instanceof ApplicationFailure
        ? (cause.type ?? 'Failed')
        : cause instanceof CancelledFailure
          ? 'Cancelled'
          : 'Failed';
    return { ok: false, workflowId, status, error: cause?.message ?? err.message };
  }
}
