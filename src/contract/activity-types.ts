import type { GeoLocation, Instruction, ResultEntry, TaskExecution, TaskType } from './browserai-types';
import type { RecipientMember } from './inbox-messages';
import type { StatusCategory } from './status';
import type { SlotTicket } from './fleet-messages';

// Inputs and outputs of the activities: everything here is written into workflow history,
// so each type carries only what the workflow needs, already cut to size.

/**
 * Whether a create, append or replace whose answer was lost may be sent again: `at-most-once` (default) fails
 * `AmbiguousRequest` instead, since BrowserAI has no idempotency keys; `at-least-once` retries and may start a second
 * task.
 */
export type Delivery = 'at-most-once' | 'at-least-once';

/** What was cut from a task's results to fit in workflow history; the full results stay at BrowserAI. */
export interface TrimReport {
  /** Size of the results as BrowserAI returned them, in bytes of JSON. */
  originalBytes: number;
  keptBytes: number;
  truncatedFields: number;
  droppedEntries: number;
  note: string;
}

/** Input of `browserAICreateTask`: the task to create, and whether the create may be repeated (`delivery`). */
export interface CreateTaskInput {
  instructions: Instruction[];
  type: TaskType;
  project: string;
  geoLocation: GeoLocation;
  inspect?: boolean;
  awaitable?: boolean;
  delivery: Delivery;
  /** How long a stop is retried: the worker stops a task whose create was answered too late (the workflow's setting; default 30 min). */
  stopRetryWindowMs?: number;
  /** The task's place in the fleet's line, used when the worker has a fleet limit (activities/fleet.ts). */
  place?: SlotPlace;
  /**
   * Answer at once, without the look a second after a `queued` answer: the workflow's first poll
   * looks instead, so instructions and codes sent meanwhile are not held behind the look. Unset
   * (runs from before it): the create looks itself.
   */
  lookInPoll?: boolean;
  /** The task's code recipient: the create joins its workflow before it creates the task, so every code the task sets off finds it. */
  codeRecipient?: RecipientJoin;
}

/** What the create needs to join the workflow of a task's code recipient. */
export interface RecipientJoin {
  /** The recipient's address, in normal form. */
  address: string;
  member: RecipientMember;
  /** Where the recipient's workflow runs when it is not running yet: the task's own queue. */
  taskQueue: string;
}

/** Who asks for a fleet slot, and where it stands in line. */
export interface SlotPlace {
  workflowId: string;
  /** The workflow's first run: a slot belongs to the workflow across continue-as-new. */
  firstExecutionRunId: string;
  runId: string;
  /** The workflow's task queue (kept for runs from before the limiter had a queue of its own; unused). */
  taskQueue: string;
  priority: number;
  fairnessKey: string;
  fairnessWeight: number;
  /** The limiter that granted the workflow a slot already (after a wait): the create asks it for none. */
  heldFrom?: string;
  /** The place the limiter gave when the task last asked: a task asking again gets it back. */
  ticket?: SlotTicket;
}

/**
 * The create found no free fleet slot and sent nothing; a `browserAISlotGranted` signal follows, and
 * a task that hears none within `askAgainMs` asks again (answers from before it had none).
 */
export interface WaitingForSlot {
  waitingForSlot: { limiterId: string; position: number; sinceMs: number; ticket?: SlotTicket; askAgainMs?: number };
}

/**
 * Input of `browserAIAppendInstructions` and `browserAIReplaceInstructions`: the instructions (a code among them,
 * maybe) for one task.
 */
export interface SendInstructionsInput {
  executionId: string;
  instructions: Instruction[];
  awaitable?: boolean;
  delivery: Delivery;
  /** The task's one-time codes, masked out of a failure's text (BrowserAI may quote what it was sent). */
  codes?: string[];
  /** The task's TOTP codes, masked the same way (computed in the activity: the workflow never learns them). */
  totp?: TotpMask;
}

/** What the workflow keeps of a task: small, no instruction texts. */
export interface TaskSnapshot {
  executionId: string;
  status: string;
  category: StatusCategory;
  progress: { status?: string; logs: string[] };
  started?: string | null;
  estimatedCompletion?: string | null;
  /** The task's output (`GET /tasks` `result`), cut to size; absent while BrowserAI shows none. */
  result?: unknown;
  error?: string | null;
}

/** Input of `browserAIPollTask`: the task, the status the workflow last saw, and how to pace the polls. */
export interface PollTaskInput {
  executionId: string;
  /** The status the workflow last saw: the activity returns as soon as BrowserAI reports another. */
  knownStatus: string;
  estimatedCompletion?: string | null;
  initialIntervalMs: number;
  maxIntervalMs: number;
  /** Wanted mean time from the task's end to a poll seeing it (where the end is expected). */
  targetDetectionMs: number;
  /**
   * The task's kind (type, project, hash of its instructions), set while no input was sent since
   * the create: the worker learns how long tasks of a kind run, and polls where they end.
   */
  kind?: string;
  /**
   * When the task was created or last sent input (epoch ms): where its expected end lies on the
   * clock (its kind's window while it has one, else the prior).
   */
  phaseStartedAtMs?: number;
  /**
   * One-time codes this task was sent: removed from what BrowserAI shows (a log line may echo a
   * typed code) before it is heartbeated or returned. The client removes credentials itself.
   */
  codes?: string[];
  /** The task's TOTP codes (typed ones and the current ones), masked like `codes`. */
  totp?: TotpMask;
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
  /**
   * Read the results too when the task is seen ended, cut to this many bytes of JSON, and return
   * them with the end: the workflow then needs no activity of its own to read them. Unset (runs
   * from before it): the end comes back without them.
   */
  resultsMaxBytes?: number;
}

/**
 * What `browserAIPollTask` returns: the task as last seen, whether its status changed, and its results once it ended.
 */
export interface PollTaskOutput {
  snapshot: TaskSnapshot;
  /** False when the span ran out with the task still in `knownStatus`. */
  changed: boolean;
  polls: number;
  /** Statuses outside the known vocabulary seen in this activity, treated as running. */
  unknownStatuses: string[];
  /** Where a task of a known kind ended (ms after `phaseStartedAtMs`), when it taught its kind something. */
  learnedEndMs?: number;
  /** The results, read right after the poll saw the end (`resultsMaxBytes`); absent when that read failed. */
  results?: TaskResultsSummary;
}

/** Input of `browserAIGetResults`: the task, and the byte budget its results are cut to. */
export interface GetResultsInput {
  executionId: string;
  maxBytes: number;
  /** One-time codes this task was sent, masked in the results (see PollTaskInput.codes). */
  codes?: string[];
  totp?: TotpMask;
}

/** The results of a task (`GET /results/{id}`) as the workflow keeps them: masked and cut to fit in history. */
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
export type TaskExecutionAnswer = Pick<
  TaskExecution,
  'executionId' | 'started' | 'estimatedCompletion' | 'scriptType'
> & {
  status: string | null;
  /** Create only: the task's kind, for the worker's duration model (see PollTaskInput.kind). */
  kind?: string;
};

/** What `browserAICreateTask` returns: the create's answer, and what a look right after it saw. */
export interface CreatedTask extends TaskExecutionAnswer {
  /**
   * What the look a second after a `queued` answer saw, when the task was running by then: the
   * workflow shows it (progress lines) as it would a poll's, since no poll returns at
   * queued -> running for such a task.
   */
  seen?: TaskSnapshot;
  /** The fleet limiter whose slot the task holds, when the worker has a fleet limit. */
  slot?: { limiterId: string };
  /** Answered `queued` and did not look (`lookInPoll`): the workflow's first poll is the look. */
  lookInPoll?: true;
  /** The workflow of the task's code recipient, which the create joined. */
  recipientWorkflowId?: string;
}

/** Input of `browserAIStopTask`. */
export interface StopTaskInput {
  executionId: string;
  /**
   * Until then a "task not found" answer means "not visible yet" (the task was created moments
   * ago) and the stop is retried; after it, the task is taken to be gone.
   */
  notFoundRetryUntilMs: number;
}

/** What `browserAIStopTask` found: the stop taken, the task already ended, or no such task. */
export interface StopTaskOutput {
  /** `stopped`: BrowserAI accepted the stop; `already-ended`: it refused, and the task had ended; `not-found`: no such task. */
  outcome: 'stopped' | 'already-ended' | 'not-found';
  /** The status seen when the stop was refused. */
  status?: string;
}

/** Where a task's TOTP codes come from, for masking: the secret's name and the time steps typed so far. */
export interface TotpMask {
  secretName: string;
  steps: number[];
}

/** Input of `browserAITypeTotpCode`: the activity computes the current code of the named secret and types it once. */
export interface TypeTotpCodeInput {
  executionId: string;
  /** The TOTP secret held by the worker, by name (never the secret itself). */
  secretName: string;
  /** The instruction to append; `{code}` is replaced by the code, inside the activity. */
  codeInstructionTemplate?: string;
  /** Type only a code of a later time step than this one (never the same code twice); -1 for none. */
  afterStep: number;
  awaitable?: boolean;
  delivery: Delivery;
  /** The task's other codes, masked in a failure's text. */
  codes?: string[];
  /**
   * Set by workflows from patch `totp-wait-in-workflow` on: an attempt never waits for a time
   * step; when no code is due it sends nothing and answers {@link TotpNotDue}, and the workflow
   * waits with a timer. Without it (workflows started before), the attempt waits itself.
   */
  waitInWorkflow?: boolean;
}

/** The append's answer and the time step whose code was typed (the code itself never leaves the activity). */
export interface TotpCodeAnswer extends TaskExecutionAnswer {
  totpStep: number;
}

/** No code is due yet (too little left of this step, or this step was typed): nothing was sent. Ask again after this long. */
export interface TotpNotDue {
  notDueForMs: number;
}
