// Signals, updates and queries of `browserTask`, defined once: the workflow sets handlers
// for these objects and the starters send them, so a name can never drift between the two.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Instruction } from '../browserai/types';
import type { TaskExecutionAnswer } from '../activities/types';
import type { BrowserTaskResult } from './input';

export interface InstructionsMessage {
  instructions: Instruction[];
}

export interface CodeMessage {
  code: string;
  /** Type it even if this task has already typed (or queued) this very code; default false. */
  force?: boolean;
}

/** Appends instructions (`POST /tasks/{id}/instructions`), after any sent before. */
export const appendInstructionsSignal = defineSignal<[InstructionsMessage]>('appendInstructions');
/** Replaces all instructions (`PUT /tasks/{id}/instructions`). */
export const replaceInstructionsSignal = defineSignal<[InstructionsMessage]>('replaceInstructions');
/** Appends one instruction built from `codeInstructionTemplate`. Typed once, even across retries; a code this task already typed is ignored unless `force`. */
export const submitCodeSignal = defineSignal<[CodeMessage]>('submitCode');
/** Ends an awaitable session: once its instructions are done, one stop, then the results. */
export const completeSignal = defineSignal<[]>('complete');

/**
 * Answers with BrowserAI's executionId as soon as the task exists, or fails `TaskNotCreated`.
 * Sent with the start (update-with-start: `BrowserTasks.start(input, { waitForExecutionId: true })`)
 * by callers that store the executionId.
 */
export const executionIdUpdate = defineUpdate<string, []>('executionId');

/** Like `appendInstructions`, but the caller gets BrowserAI's answer, or a rejection once the task has ended. */
export const addInstructionsUpdate = defineUpdate<TaskExecutionAnswer, [InstructionsMessage]>('addInstructions');

export interface BrowserTaskState {
  executionId: string | null;
  status: string;
  awaitingInput: boolean;
  progress: { status?: string; logs: string[] };
  started: string | null;
  estimatedCompletion: string | null;
  /** Instructions received but not yet sent to BrowserAI (codes are counted, never shown). */
  pendingInstructions: number;
  error: string | null;
  /** Set once the task has ended: the final result, or on cancellation the results so far. */
  outcome: BrowserTaskResult | null;
  /** null until a stop is needed; then whether BrowserAI took it. false: the task may still be running. */
  stopConfirmed: boolean | null;
}

export const stateQuery = defineQuery<BrowserTaskState>('state');

/**
 * What `browserTask` signals (`browserTaskAwaitingInputSignal`) to its parent workflow, or to the
 * workflow named by `notifyWorkflowId`, each time its task starts to await input. Answer with
 * `submitCodeSignal`, `appendInstructionsSignal` or `completeSignal` to workflow `workflowId`.
 * Carries no instruction, code or log line.
 */
export interface AwaitingInputNotice {
  /** The `browserTask` workflow that awaits input. */
  workflowId: string;
  /** BrowserAI's ID of the task. */
  executionId: string;
  /** BrowserAI's status (`awaiting`, or the spelling BrowserAI used). */
  status: string;
  /** When the wait began (ISO 8601), and when it gives up with `AwaitingInputTimeout`. */
  since: string;
  timesOutAt: string;
}

export const browserTaskAwaitingInputSignal = defineSignal<[AwaitingInputNotice]>('browserTaskAwaitingInput');
