// Delivering one webhook event. A task's own workflow schedules the delivery activity itself
// (session/webhooks.ts): the server hands it straight back to the worker that completed the
// workflow task (eager dispatch), so a receiver hears of an input request as fast as a waiting
// client does. A delivery that outlives the task's run (task.finished, or one still retrying when
// the run closes or continues as new) goes to `browserAIWebhook`, a child workflow the task
// abandons (ParentClosePolicy.ABANDON), so a receiver that never answers holds nothing up.
import { proxyActivities } from '@temporalio/workflow';
import type { BrowserAIActivities } from '../activities';
import type { WebhookDeliveryInput, WebhookDeliveryOutput } from '../contract/webhooks';

/**
 * The delivery is retried with backoff from 1 s up to 10 min between attempts, with no attempt
 * limit: the activity itself gives up once the worker's retry window (BROWSERAI_WEBHOOK_RETRY_WINDOW_MS,
 * default 24 h) has passed since the event. Three days bound it whatever the worker says. An attempt
 * is one request (at most 15 s), so a worker that dies mid-request is retried after 20 s. It runs on
 * the workflow's own task queue (the worker that holds the webhook destination, and eager dispatch).
 */
export const { browserAIDeliverWebhook: deliverWebhookEvent } = proxyActivities<BrowserAIActivities>({
  startToCloseTimeout: '20 seconds',
  scheduleToCloseTimeout: '3 days',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

/** Delivers one webhook event that outlives the run that raised it (its ID and body come from there). */
export async function browserAIWebhook(input: WebhookDeliveryInput): Promise<WebhookDeliveryOutput> {
  return deliverWebhookEvent(input);
}
