/**
 * `browserai-temporal/activities`: the BrowserAI activities (createActivities, for a worker built
 * without the plugin), their input and output types, and what they are built from.
 *
 * @module browserai-temporal/activities
 */
export { createActivities, type BrowserAIActivities, type CodeLoopDependencies } from './create-activities';
export { FleetLimit, fleetLimiterActivities, type FleetLimitOptions } from './fleet';
export type * from '../contract/activity-types';
export type { WebhookDeliveryInput, WebhookDeliveryOutput } from '../contract/webhooks';
export { TaskDurations, type EndWindow, type EndSample } from './task-durations';
export { TotpKeys, type TotpSecret, type TotpSecrets } from './totp';
export { WebhookSender, type WebhookDestination } from './webhooks';
export {
  BrowserAIClient,
  BrowserAIError,
  type BrowserAIClientOptions,
  type BrowserAIErrorInit,
  type BrowserAIRequestEvent,
  type RequestOptions,
} from '../browserai';
export type { BrowserAIErrorKind } from '../contract/errors';
// BrowserAI's wire types, as the client sends and reads them.
export type * from '../contract/browserai-types';
// What the fleet limit and the code recipients exchange with the activities.
export type { SlotAnswer, SlotAsk, SlotRequest, SlotTicket } from '../contract/fleet-messages';
export type { RecipientMember } from '../contract/inbox-messages';
export type { StatusCategory } from '../contract/status';
/** Give it to a BrowserAIClient of your own as `onRequest` for the request metrics (the plugin does, for clients it builds). */
export { recordBrowserAIRequest } from '../telemetry/activity-metrics';
