// Signals, updates and queries of `browserTask`, defined once: the workflow sets handlers
// for these objects and the starters send them, so a name can never drift between the two.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Instruction } from './browserai-types';
import type { TaskExecutionAnswer } from './activity-types';
import type { InboxView } from './inbox-messages';
import type { BrowserTaskResult } from './input';

/** The argument of `appendInstructions`, `replaceInstructions` and `addInstructions`. */
export interface InstructionsMessage {
  /** @minItems 1 */
  instructions: Instruction[];
}

/** The argument of `submitCode`. */
export interface CodeMessage {
  /**
   * The one-time code as the user received it: up to 64 letters, digits or dashes, at least 4 of
   * them letters or digits (a shorter code could not be masked without hiding ordinary numbers).
   * @maxLength 64
   * @pattern ^-*(?:[A-Za-z0-9]-*){4,}$
   */
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
export const executionIdUpdate = defineUpdate<ExecutionId, []>('executionId');

/** BrowserAI's ID of the task, as `executionIdUpdate` answers it. */
export type ExecutionId = string;

/** Like `appendInstructions`, but the caller gets BrowserAI's answer, or a rejection once the task has ended. */
export const addInstructionsUpdate = defineUpdate<TaskExecutionAnswer, [InstructionsMessage]>('addInstructions');

/**
 * The answer of the `state` query: what the task is doing now, its outcome once ended, and the input request it waits
 * on.
 */
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
  /** The input request the task is waiting on now, or null (see {@link InputRequest}). */
  inputRequest: InputRequest | null;
  /**
   * Present under a fleet limit (docs/fleet.md): the slot is held, or the task waits for one
   * (status `waiting_for_slot`) since `waitingSince`, `positionWhenQueued` in line when it asked.
   */
  fleetSlot?: { held: true } | { held: false; waitingSince: string; positionWhenQueued?: number };
  /** Present when the task names a `codeRecipient`: where its codes arrive (masked) and the latest inbox messages, matched or refused. */
  inbox?: InboxView;
}

/** What the task is doing now (`BrowserTaskState`); answered from the workflow's memory, no BrowserAI request. */
export const stateQuery = defineQuery<BrowserTaskState>('state');

/**
 * What a waiting task asks for. `code`: a one-time code (`submitCode`), typed by the worker itself
 * when the task names a TOTP secret. `instructions`: an idle awaitable session wants more
 * instructions (`appendInstructions`, `addInstructions`) or `complete`. The rule that tells them
 * apart (docs/one-time-codes.md, "Code or instructions"):
 * 1. a task that is not `awaitable` asks for a code: it awaits only when something blocks its run;
 * 2. an awaitable task asks for a code when BrowserAI's prompt mentions one (code, OTP, passcode,
 *    verification, 2FA...), or, for its first request, when it names a TOTP secret;
 * 3. otherwise an awaitable task asks for instructions.
 */
export type InputRequestKind = 'code' | 'instructions';

/**
 * One input request: the task started to await input. Every channel (the `nextInputRequest`
 * update and `BrowserTasks.nextInputRequest`, webhooks, the signal to a parent) tells the same
 * object. Carries no code, token or credential: the prompt is masked as everything BrowserAI shows.
 */
export interface InputRequest {
  /**
   * 1 for the task's first request, then one more for each (across continue-as-new). A code that
   * BrowserAI refused and asked again for is a new request with a new number.
   * @asType integer
   * @minimum 1
   */
  sequence: number;
  kind: InputRequestKind;
  /** `caller`: you answer it. `worker`: the worker types a TOTP code itself (the task named a TOTP secret). */
  answeredBy: 'caller' | 'worker';
  /**
   * What BrowserAI shows while it waits: its last progress lines (at most 3), masked (URL
   * credentials, token-like parameters, the task's codes) and cut to 1,000 characters. Empty when
   * BrowserAI shows nothing.
   */
  prompt: string;
  /**
   * Codes typed for this code form that BrowserAI refused, in a row, before this request; 0 on a first ask.
   * @asType integer
   * @minimum 0
   */
  refusedCodes: number;
  /**
   * Code requests only: codes that may still be tried before the task is stopped with `CodesRefused`.
   * @asType integer
   * @minimum 1
   */
  attemptsLeft?: number;
  /** When the task began to wait (ISO 8601), and when it gives up with `AwaitingInputTimeout`. */
  since: string;
  timesOutAt: string;
  /** The `browserTask` workflow to answer, and BrowserAI's ID of its task. */
  workflowId: string;
  executionId: string;
  /** The task's BrowserAI project. */
  project: string;
  /** Code requests of a task with a `codeRecipient`: where the inbox waits for the code, masked (`+44•••••••89`). */
  codeRecipient?: string;
}

/** How a task ended, as every channel tells it (never with its results: read those with `result`). */
export interface TaskFinished {
  /**
   * `completed`: the task ended on its own or through `complete`. `failed`: BrowserAI reported a
   * failure, or the workflow failed (see `failureType`). `cancelled`: the workflow was cancelled or
   * the task was stopped elsewhere. `timed_out`: `TaskTimeout`, `AwaitingInputTimeout` or `Timeout`.
   */
  outcome: 'completed' | 'failed' | 'cancelled' | 'timed_out';
  workflowId: string;
  /** null when the task was never created. */
  executionId: string | null;
  /** BrowserAI's last status. */
  status: string;
  /** The workflow's failure type (a `FailureType` name) when it failed or timed out. */
  failureType?: string;
  /** Present when the workflow sent a stop (see `BrowserTaskResult.stopConfirmed`). */
  stopConfirmed?: boolean;
}

/** What `nextInputRequest` waits for: input requests after this sequence number (default 0: any). */
export interface NextInputRequestMessage {
  /**
   * @asType integer
   * @minimum 0
   */
  after?: number;
  /**
   * How long this update waits at most before it answers `continued` (ask again); default and
   * longest 5 minutes, so that a caller who went away holds no update for long.
   * @asType integer
   * @minimum 1000
   * @maximum 300000
   */
  waitMs?: number;
}

/**
 * The answer of `nextInputRequest`: the latest request after `after` (`open` while the task still
 * waited on it when the update answered), or how the task finished. `continued`: nothing yet (the
 * wait reached `waitMs`, or the workflow continued as new meanwhile); send it again to the same
 * workflow ID (`BrowserTasks.nextInputRequest` does).
 */
export type InputRequestWait =
  | { kind: 'input-requested'; request: InputRequest; open: boolean }
  | { kind: 'finished'; finished: TaskFinished }
  | { kind: 'continued' };

/**
 * Waits, in the workflow, until the task makes an input request with a sequence number above
 * `after`, or finishes, or `waitMs` (at most 5 minutes) passed, and answers it: one update (one
 * billed action) per answer. A task keeps at most 5 of these waiting: a sixth is refused
 * `TooManyWaiters`. Callers use `BrowserTasks.nextInputRequest` or the CLI's `wait-input`, which
 * ask again after `continued` and send one update ID per `after` for five minutes, so that a
 * retry joins the wait already open.
 */
export const nextInputRequestUpdate = defineUpdate<InputRequestWait, [NextInputRequestMessage]>('nextInputRequest');

/**
 * What `browserTask` signals (`browserTaskAwaitingInputSignal`) to its parent workflow, or to the
 * workflow named by `notifyWorkflowId`, for each input request. Answer with `submitCodeSignal`,
 * `appendInstructionsSignal` or `completeSignal` to workflow `workflowId`. It is the
 * {@link InputRequest} itself (`workflowId`, `executionId`, `since`, `timesOutAt` as before) plus
 * BrowserAI's status; no instruction or code.
 */
export interface AwaitingInputNotice extends InputRequest {
  /** BrowserAI's status (`awaiting`, or the spelling BrowserAI used). */
  status: string;
}

/**
 * Sent by `browserTask` to its parent (or `notifyWorkflowId`) for each input request; define a handler for it in the
 * parent.
 */
export const browserTaskAwaitingInputSignal = defineSignal<[AwaitingInputNotice]>('browserTaskAwaitingInput');
