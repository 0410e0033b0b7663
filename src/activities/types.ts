import type { GeoLocation, Instruction, ResultEntry, TaskExecution, TaskType } from '../browserai/types';
import type { StatusCategory } from '../browserai/status';
import type { Delivery } from './at-most-once';
import type { TrimReport } from './trim';

// Inputs and outputs of the activities: everything here is written into workflow history,
// so each type carries only what the workflow needs, already cut to size.

export type { Delivery, TrimReport };

export interface CreateTaskInput {
  instructions: Instruction[];
  type: TaskType;
  project: string;
  geoLocation: GeoLocation;
  inspect?: boolean;
  awaitable?: boolean;
  delivery: Delivery;
}

export interface SendInstructionsInput {
  executionId: string;
  instructions: Instruction[];
  awaitable?: boolean;
  delivery: Delivery;
}

/** What the workflow keeps of a task: small, no instruction texts. */
export interface TaskSnapshot {
  executionId: string;
  status: string;
  category: StatusCategory;
  progress: { status?: string; logs: string[] };
  started?: string | null;
  estimatedCompletion?: string | null;
  /** The task's output (`GET /tasks` `result`), cut to size; set once the task has ended. */
  result?: unknown;
  error?: string | null;
}

export interface PollTaskInput {
  executionId: string;
  /** The category the workflow last saw: the activity returns as soon as the task leaves it. */
  knownCategory: StatusCategory;
  estimatedCompletion?: string | null;
  initialIntervalMs: number;
  maxIntervalMs: number;
  /** Return unchanged after this long, so the workflow can look around (continue-as-new, details). */
  maxSpanMs: number;
  /**
   * Wait before the first poll: the caller has just seen the status (a create or append answer,
   * the previous poll), so an immediate `GET` would only repeat it.
   */
  sleepFirst?: boolean;
  /** Until then a 404 is taken as "not visible yet" (eventual consistency right after the create), not as fatal. */
  notFoundRetryUntilMs?: number;
  /**
   * Instructions were just sent: an `awaiting` read before this time is not trusted (BrowserAI
   * may still report the state from before it took them), unless another status was seen first.
   */
  awaitingTrustedFromMs?: number;
}

export interface PollTaskOutput {
  snapshot: TaskSnapshot;
  /** False when the span ran out with the task still in `knownCategory`. */
  changed: boolean;
  polls: number;
  /** Statuses outside the known vocabulary seen in this activity, treated as running. */
  unknownStatuses: string[];
}

export interface GetResultsInput {
  executionId: string;
  maxBytes: number;
}

export interface TaskResultsSummary {
  executionId: string;
  status: string | null;
  started?: string | null;
  completed?: string | null;
  results: ResultEntry[];
  /** Present when the results were cut to fit in workflow history. */
  trimmed?: TrimReport;
}

/** What create, append and replace answered. `status` is null when an append's answer carried none (a 2xx still means accepted). */
export type TaskExecutionAnswer = Pick<TaskExecution, 'executionId' | 'started' | 'estimatedCompletion' | 'scriptType'> & { status: string | null };

export interface StopTaskInput {
  executionId: string;
  /**
   * Until then a "task not found" answer means "not visible yet" (the task was created moments
   * ago) and the stop is retried; after it, the task is taken to be gone.
   */
  notFoundRetryUntilMs: number;
}

export interface StopTaskOutput {
  /** `stopped`: BrowserAI accepted the stop; `already-ended`: it refused, and the task had ended; `not-found`: no such task. */
  outcome: 'stopped' | 'already-ended' | 'not-found';
  /** The status seen when the stop was refused. */
  status?: string;
}
