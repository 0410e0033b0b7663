// What each tool of the MCP server takes and gives, as TypeScript types: scripts/schemas.ts turns
// them into the JSON Schemas of schemas/ (contract group `mcp`), and the server serves those very
// files as the tools' inputSchema and outputSchema, so there is one contract and no second copy.
import type { Instruction } from '../contract/browserai-types';
import type { AwaitingTask } from '../starters/awaiting-input';
import type { BrowserTaskInput, BrowserTaskResult } from '../contract/input';
import type { RunSavedTaskInput } from '../contract/saved-task-input';
import type { InputRequest } from '../contract/messages';

/** How long a tool call waits, and what it does when the wait meets a code request or the call is cancelled. */
export interface McpWaitOptions {
  /**
   * How long this call waits for the task, in seconds; default 50 (0: do not wait). A task still running then is
   * reported with its workflowId and state, never as an error: call `get_task` to wait again.
   * @asType integer
   * @minimum 0
   * @maximum 600
   */
  waitSeconds?: number;
  /**
   * When the user declines or cancels the server's request for a one-time code: `keep-waiting` (default) leaves the
   * task waiting for a code (submit it later with `submit_code`); `cancel` cancels the task (one stop).
   */
  ifCodeDeclined?: 'keep-waiting' | 'cancel';
  /** Cancel the task when the client cancels this tool call; default false (a cancelled call only stops waiting). */
  cancelIfCallCancelled?: boolean;
}

/** Input of `run_task`: the task, as `browserTask` takes it, and how long to wait for it. */
export interface McpRunTaskInput extends McpWaitOptions {
  task: BrowserTaskInput;
}

/** Input of `run_saved_task`: the saved task's name and what this run changes, as `runSavedTask` takes them. */
export interface McpRunSavedTaskInput extends McpWaitOptions {
  savedTask: RunSavedTaskInput;
}

/** Input of `get_task`, `end_session` and `cancel_task`: a task this server started, and how long to wait for it. */
export interface McpTaskRef extends McpWaitOptions {
  /**
   * The task's workflow ID, as `run_task` or `run_saved_task` returned it.
   * @minLength 1
   * @maxLength 1000
   */
  workflowId: string;
}

/** Input of `submit_code`: the one-time code the task asked for, typed once. Never echoed back. */
export interface McpSubmitCodeInput extends McpTaskRef {
  /**
   * The one-time code as the user received it: 1 to 64 letters, digits or dashes.
   * @pattern ^[A-Za-z0-9-]{1,64}$
   */
  code: string;
}

/** Input of `add_instructions`: instructions for an awaitable session, sent in order after any before. */
export interface McpAddInstructionsInput extends McpTaskRef {
  /** @minItems 1 */
  instructions: Instruction[];
}

/** Input of `list_waiting_tasks` and `list_my_tasks`. */
export interface McpListInput {
  /**
   * At most this many tasks; default 20.
   * @asType integer
   * @minimum 1
   * @maximum 100
   */
  limit?: number;
}

/**
 * Where a task stands, as every task tool answers: `running` (call `get_task` to wait again), `waiting_for_code` (call
 * `submit_code`), `waiting_for_instructions` (an awaitable session: `add_instructions` or `end_session`), or how it
 * ended.
 */
export type McpTaskStatus =
  'running' | 'waiting_for_code' | 'waiting_for_instructions' | 'completed' | 'failed' | 'cancelled' | 'timed_out';

/** What every task tool answers. Never a one-time code, token or credential. */
export interface McpTaskReport {
  workflowId: string;
  status: McpTaskStatus;
  /** BrowserAI's ID of the task; null until BrowserAI created it. */
  executionId: string | null;
  /** What to do next, in words, for the model and the user. */
  next: string;
  /** The open input request, while the task waits for input. Its prompt is masked. */
  inputRequest?: InputRequest;
  /** The task's result, once it completed (or, cancelled, the results so far). */
  result?: BrowserTaskResult;
  /** Why the task failed or timed out: the workflow's failure type and message. */
  failure?: { type: string | null; message: string };
  /** Present when a stop was needed: whether BrowserAI took it (false: the task may still run; stop it from the dashboard). */
  stopConfirmed?: boolean;
}

/** What `list_waiting_tasks` answers: this server's tasks waiting for input, longest wait first. */
export interface McpWaitingTasks {
  tasks: AwaitingTask[];
}

/** One task of `list_my_tasks`. */
export interface McpRecentTask {
  workflowId: string;
  /** The workflow's status: Running, Completed, Failed, Canceled, Terminated, TimedOut, ContinuedAsNew. */
  workflowStatus: string;
  /** `browserTask` or `runSavedTask`. */
  workflowType: string;
  startTime: string;
  closeTime: string | null;
}

/** What `list_my_tasks` answers: the tasks this server started, newest first. */
export interface McpRecentTasks {
  tasks: McpRecentTask[];
}
