// `browserai-temporal`: the client API, for services that start and steer BrowserAI tasks. It
// needs a Temporal client only, never a BrowserAI token (the workers hold that). Workers import
// `browserai-temporal/plugin`; workflow code imports `browserai-temporal/workflows`.
export {
  BrowserTasks,
  InvalidInputError,
  fetchFullResults,
  type FromEnvOptions,
  type LiveState,
  type StartOptions,
  type StartedTask,
  type AwaitingTask,
  type ListAwaitingOptions,
  type NextInputRequest,
  BatchFinishedError,
  type BatchHandle,
  type BatchItemOutcome,
  type BatchStartOptions,
} from './starters/tasks';
export { batchStateQuery, type BatchItem, type BatchState, type BatchCounts } from './workflows/batch/messages';
export {
  SavedTasks,
  ScheduleAfterCreateError,
  CATCHUP_WINDOW,
  type ScheduleSpecInput,
  type ScheduleSummary,
  type OverlapPolicy,
} from './starters/saved-tasks';
export type { SavedTaskDefinition, SavedTaskOverrides, RunSavedTaskInput } from './workflows/saved-task-input';
export { cronProblems, timezoneProblems, scheduleIdFor } from './schedules/cron';
export * from './workflows/messages';
export * from './workflows/search-attributes';
export { limiterStateQuery, type FleetLimits, type LimiterState, type SlotHolder } from './workflows/fleet/messages';
export {
  DEFAULTS,
  type BrowserTaskInput,
  type BrowserTaskResult,
  type PollingOptions,
  type TaskActivityOptions,
  type TaskWebhookOptions,
} from './workflows/input';
export { FailureType, type FailureTypeName, type BrowserAIErrorKind } from './errors';
export { BrowserAIError, type BrowserAIErrorInit } from './browserai/errors';
export type * from './browserai/types';
