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
  BatchEndedError,
  BatchFinishedError,
  type BatchHandle,
  type BatchItemOutcome,
  type BatchStartOptions,
} from './starters/tasks';
export { batchStateQuery, type BatchItem, type BatchState, type BatchCounts } from './contract/batch-messages';
export {
  SavedTasks,
  ScheduleAfterCreateError,
  CATCHUP_WINDOW,
  type ScheduleSpecInput,
  type ScheduleSummary,
  type OverlapPolicy,
} from './starters/saved-tasks';
export type { SavedTaskDefinition, SavedTaskOverrides, RunSavedTaskInput } from './contract/saved-task-input';
export { cronProblems, timezoneProblems, scheduleIdFor } from './schedules/cron';
export * from './contract/messages';
export type { WebhookBody, WebhookReference } from './contract/webhooks';
export * from './contract/search-attributes';
export { limiterStateQuery, type FleetLimits, type LimiterState, type SlotHolder } from './contract/fleet-messages';
export {
  DEFAULTS,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
  type BrowserTaskInput,
  type BrowserTaskResult,
  type PollingOptions,
  type TaskActivityOptions,
  type TaskWebhookOptions,
  type OverrideField,
} from './contract/input';
export { FailureType, type FailureTypeName, type BrowserAIErrorKind } from './contract/errors';
export { BrowserAIError, type BrowserAIErrorInit } from './browserai/errors';
export type { CodeRecipient } from './contract/code-recipient';
export type { InboxEvent, InboxView } from './contract/inbox-messages';
export {
  inboxHandler,
  startInbox,
  inboxOptionsFromEnv,
  type InboxOptions,
  type InboxServer,
  type InboxLogLine,
  type Delivery,
} from './inbox';
export type * from './contract/browserai-types';
