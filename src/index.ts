/**
 * `browserai-temporal`: the client API, for services that start and steer BrowserAI tasks. It
 * needs a Temporal client only, never a BrowserAI token (the workers hold that). The two clients,
 * their errors, the failure types, and the types a service writes by name; every other type of a
 * client's methods is in that client's namespace (`BrowserTasks.StartOptions`). Workers import
 * `browserai-temporal/plugin`; workflow code, and raw signals, queries and updates, come from
 * `browserai-temporal/workflows` (docs/design/public-surface.md).
 *
 * @module browserai-temporal
 */
export { BrowserTasks, InvalidInputError, BatchEndedError, BatchFinishedError } from './starters/tasks';
export { SavedTasks, ScheduleAfterCreateError } from './starters/saved-tasks';
export { FailureType, type FailureTypeName } from './contract/errors';
export type { BrowserTaskInput, BrowserTaskResult } from './contract/input';
export type { BrowserTaskState, InputRequest } from './contract/messages';
export type { SavedTaskDefinition } from './contract/saved-task-input';
export type { WebhookBody } from './contract/webhooks';
