// Stable `ApplicationFailure.type` names. Callers match on these strings (and may list them
// in retry policies), so they are part of the public API: never rename one.
export const FailureType = {
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
  /** A non-idempotent request may or may not have reached BrowserAI; repeating it could double it. */
  AmbiguousRequest: 'AmbiguousRequest',
  BrowserAITaskFailed: 'BrowserAITaskFailed',
  AwaitingInputTimeout: 'AwaitingInputTimeout',
  TaskTimeout: 'TaskTimeout',
  TaskEnded: 'TaskEnded',
} as const;

export type FailureTypeName = (typeof FailureType)[keyof typeof FailureType];
