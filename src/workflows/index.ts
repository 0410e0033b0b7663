/**
 * `browserai-temporal/workflows`: the workflows, and what workflow code needs to talk to them.
 *
 * Workflow-safe: this module and everything it imports run inside the worker's workflow sandbox,
 * so they use no Node built-ins, no network, no clock or randomness but the workflow's own, and
 * import activities as types only. A team's workflows file can `export * from` it: every function
 * exported here is a workflow (so helpers are never exported from this module), everything else
 * is a definition (signals, updates, queries, failure types) or a type.
 *
 * @module browserai-temporal/workflows
 */
export { browserTask } from './browser-task';
export { runSavedTask, savedTaskCreate, savedTaskGet, savedTaskList, type SavedTaskCallOptions } from './saved-tasks';
export { browserAIWebhook } from './webhook-delivery';
export { browserAIFleetLimiter } from './fleet/limiter';
export { browserAIBatch } from './batch/batch';
export { browserAICodeRecipient } from './inbox/code-recipient';
// A task's messages: what BrowserTasks sends, for workflow code and raw Temporal clients.
export * from '../contract/messages';
export type { WebhookBody, WebhookReference } from '../contract/webhooks';
export * from '../contract/search-attributes';
// What an operator reads and changes of a batch, the fleet limiter and a code recipient; the
// protocol between their workflows and the activities (slots asked and granted, pages of items,
// arrived messages) stays inside the package.
export {
  batchStateQuery,
  type BatchCounts,
  type BatchItem,
  type BatchOptions,
  type BatchState,
} from '../contract/batch-messages';
export {
  limiterStateQuery,
  setFleetLimitsUpdate,
  type Census,
  type FleetLimits,
  type LimiterState,
  type SlotHolder,
} from '../contract/fleet-messages';
export {
  recipientStateQuery,
  type RecipientState,
  type RecipientMemberRecord,
  type Routed,
  type InboxEvent,
  type InboxView,
} from '../contract/inbox-messages';
export { FailureType, type FailureTypeName } from '../contract/errors';
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
} from '../contract/input';
export type { CodeRecipient } from '../contract/code-recipient';
export type { SavedTaskDefinition, SavedTaskOverrides, RunSavedTaskInput } from '../contract/saved-task-input';
export type { BrowserAIActivities } from '../activities';
