// `browserai-temporal/workflows`: the workflows, and what workflow code needs to talk to them.
//
// Workflow-safe: this module and everything it imports run inside the worker's workflow sandbox,
// so they use no Node built-ins, no network, no clock or randomness but the workflow's own, and
// import activities as types only. A team's workflows file can `export * from` it: every function
// exported here is a workflow (so helpers are never exported from this module), everything else
// is a definition (signals, updates, queries, failure types) or a type.
export { browserTask } from './browser-task';
export { runSavedTask, savedTaskCreate, savedTaskGet, savedTaskList, type SavedTaskCallOptions } from './saved-tasks';
export { browserAIWebhook } from './webhook-delivery';
export { browserAIFleetLimiter, type LimiterRecord } from './fleet/limiter';
export type { SlotsRecord } from './fleet/slots';
export { browserAIBatch } from './batch/batch';
export { browserAICodeRecipient, type RecipientRecord, type RememberedDecision } from './inbox/code-recipient';
export * from '../contract/inbox-messages';
export {
  addBatchItemsUpdate,
  batchStateQuery,
  type BatchCounts,
  type BatchItem,
  type BatchOptions,
  type BatchPage,
  type BatchPageAnswer,
  type BatchRecord,
  type BatchState,
} from '../contract/batch-messages';
export * from '../contract/messages';
export type { WebhookBody, WebhookReference } from '../contract/webhooks';
export * from '../contract/search-attributes';
export {
  acquireSlotsUpdate,
  fleetSlotQuery,
  limiterStateQuery,
  releaseSlotSignal,
  setFleetLimitsUpdate,
  slotGrantedSignal,
  type FleetLimits,
  type LimiterState,
  type SlotAnswer,
  type SlotAnswers,
  type SlotAsk,
  type SlotHolder,
  type SlotRequest,
  type SlotTicket,
  type TaskSlotReport,
} from '../contract/fleet-messages';
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
