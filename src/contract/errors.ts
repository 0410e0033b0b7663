// The project's error vocabulary: stable `ApplicationFailure.type` names. Callers match on these
// strings (and may list them in retry policies), so they are part of the public API: never rename
// one. The kinds of BrowserAI error (src/browserai/errors.ts) are a subset of these names, so an
// activity's failure carries the kind as its type with no table in between.
// Pure and dependency-free: the workflow bundle imports it.
import type { BrowserTaskResult } from './input';

/**
 * The stable `ApplicationFailure.type` of every failure this package raises. Callers match on these names, so none is
 * ever renamed.
 */
export const FailureType = {
  // What BrowserAI answered (or failed to answer): the BrowserAIError kinds.
  InvalidInput: 'InvalidInput',
  InvalidCommand: 'InvalidCommand',
  Unauthorized: 'Unauthorized',
  TaskNotFound: 'TaskNotFound',
  SavedTaskNotFound: 'SavedTaskNotFound',
  Conflict: 'Conflict',
  RateLimited: 'RateLimited',
  ServerError: 'ServerError',
  NetworkError: 'NetworkError',
  Timeout: 'Timeout',
  /** A 2xx answer that is not what the API describes (no status, no executionId, not JSON). */
  MalformedAnswer: 'MalformedAnswer',
  // What the project decides.
  /** A non-idempotent request may or may not have reached BrowserAI; repeating it could double it. */
  AmbiguousRequest: 'AmbiguousRequest',
  BrowserAITaskFailed: 'BrowserAITaskFailed',
  AwaitingInputTimeout: 'AwaitingInputTimeout',
  TaskTimeout: 'TaskTimeout',
  TaskEnded: 'TaskEnded',
  /** The task was never created (the create failed, or the workflow was cancelled first): there is no executionId. */
  TaskNotCreated: 'TaskNotCreated',
  /** A bug in this package's workflow code: the task was stopped instead of leaving the workflow stuck. */
  UnexpectedError: 'UnexpectedError',
  /** BrowserAI refused `maxCodeAttempts` one-time codes in a row and asked again: the task was stopped. */
  CodesRefused: 'CodesRefused',
  /** The task names a TOTP secret (`totpSecretName`) that the worker does not hold: the task was stopped. */
  TotpSecretNotFound: 'TotpSecretNotFound',
  // What the Nexus service refuses a caller (the cause of a Nexus BAD_REQUEST; nothing was started or sent).
  /**
   * A Nexus caller set a task option the endpoint's operator did not allow it (a TOTP secret, a code
   * template, a webhook reference, a workflow to notify, an activity task queue or priority): see
   * `NexusServiceOptions`. `details[0]` is `{ problems }`, each naming the option and how to allow it.
   */
  NexusOptionNotAllowed: 'NexusOptionNotAllowed',
  /**
   * A Nexus operation named a task this caller did not start through the service: `state`,
   * `submitCode` and cancel take the `operationToken` of the caller's own `runTask`, nothing else.
   */
  NexusTaskNotOwned: 'NexusTaskNotOwned',
  /**
   * A `nextInputRequest` update refused: the task already has as many waiting as it keeps (5), so
   * that `addInstructions` always finds room. Join an open wait (the same update ID) or ask again
   * once one has answered (each answers within 5 minutes).
   */
  TooManyWaiters: 'TooManyWaiters',
  // What the webhook activity raises for its own retries.
  /**
   * The webhook receiver did not answer 2xx (or could not be reached): the `browserAIWebhook`
   * workflow's delivery activity retries with the same `webhook-id` until the retry window passes,
   * then gives up with `delivered: false`. Seen on that activity's attempts, never as a workflow's failure.
   */
  WebhookNotDelivered: 'WebhookNotDelivered',
  // What a batch (`startBatch`, `batch run`) refuses.
  /** A page of another list than the batch's (another size, or any item changed, moved or replaced), under the same name: not this one resumed. Pick another name. */
  BatchMismatch: 'BatchMismatch',
  /** A page of items that starts after the batch's last accepted item: send from `accepted` (the batch's `state`). */
  BatchPageGap: 'BatchPageGap',
  /** Items sent to a batch that was cancelled: nothing is added. Start a new batch under another name. */
  BatchCancelled: 'BatchCancelled',
} as const;

/** One of the `FailureType` names. */
export type FailureTypeName = (typeof FailureType)[keyof typeof FailureType];

/**
 * The first detail of a failure that refused bad input before anything was sent (the workflow's
 * own check; a BrowserAI 400 also has type `InvalidInput`, with {@link BrowserAIRequestDetails}).
 */
export interface InvalidInputDetails {
  /** Every problem, each saying what to write instead. */
  problems: string[];
}

/** The first detail of a failure BrowserAI answered (or failed to answer): never the request itself, whose headers hold the token. */
export interface BrowserAIRequestDetails {
  kind: Exclude<BrowserAIErrorKind, 'Aborted'>;
  /** The HTTP status, or null when no answer came (network error, timeout). */
  status: number | null;
  /** BrowserAI's own error message, if it gave one. */
  apiMessage: string | null;
  method: string;
  /** The route requested, e.g. `/tasks/{executionId}/instructions` with the ID filled in. */
  path: string;
  executionId: string | null;
}

/**
 * How `browserTask` and `runSavedTask` fail, as every SDK shows it: an application failure
 * (`ApplicationFailure` in TypeScript, `ApplicationError` in Python and Go) with a stable type
 * and at most one detail.
 */
export type WorkflowFailure = FailureWithOutcome | OtherFailure;

/** The failure types that only a task that exists can end in: their detail is always the outcome so far. */
export type OutcomeFailureTypeName = Extract<
  FailureTypeName,
  'BrowserAITaskFailed' | 'AwaitingInputTimeout' | 'CodesRefused' | 'TotpSecretNotFound'
>;

/** The failure types only the Nexus service's refusals carry (the cause of its BAD_REQUEST or NOT_FOUND): never a workflow's. */
export type NexusRefusalTypeName = Extract<FailureTypeName, 'NexusOptionNotAllowed' | 'NexusTaskNotOwned'>;

/** The failure types only an activity's retried attempts carry: never a workflow's. */
export type ActivityRetryTypeName = Extract<FailureTypeName, 'WebhookNotDelivered'>;

/** `BrowserAITaskFailed`, `AwaitingInputTimeout`, `CodesRefused`, `TotpSecretNotFound`: the task existed. */
export interface FailureWithOutcome {
  type: OutcomeFailureTypeName;
  message: string;
  /** `details[0]`: the outcome so far (its results, with `stopConfirmed` when a stop was sent). */
  details: [BrowserTaskResult];
}

export interface OtherFailure {
  type: Exclude<FailureTypeName, OutcomeFailureTypeName | NexusRefusalTypeName | ActivityRetryTypeName>;
  message: string;
  /**
   * `details[0]`: once the task existed, the outcome so far (with `stopConfirmed` when a stop was
   * sent); for input refused before anything was sent, its problems; for a task never created,
   * what BrowserAI answered. No detail when there is none of these (`Timeout` or
   * `UnexpectedError` before the create).
   */
  details?: [BrowserTaskResult | InvalidInputDetails | BrowserAIRequestDetails];
}

/** The failure types a BrowserAI request can end in; `Aborted` is a cancelled request, never a failure of its own. */
export type BrowserAIErrorKind =
  | Extract<
      FailureTypeName,
      | 'InvalidInput'
      | 'InvalidCommand'
      | 'Unauthorized'
      | 'TaskNotFound'
      | 'SavedTaskNotFound'
      | 'Conflict'
      | 'RateLimited'
      | 'ServerError'
      | 'NetworkError'
      | 'Timeout'
      | 'MalformedAnswer'
    >
  | 'Aborted';

/** Bad configuration (environment variables, options), found at start: `problems` lists every one, each saying what to write instead. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`Configuration problems:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}
