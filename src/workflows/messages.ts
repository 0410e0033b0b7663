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
