// One webhook event, delivered by its own workflow: a child of the task's workflow that the task
// abandons (ParentClosePolicy.ABANDON), so a receiver that never answers holds nothing up and a
// `task.finished` event is still retried after the task's workflow has closed. Its one activity
// signs and posts the event, retried with backoff; the worker gives up after its retry window.
import { proxyActivities } from '@temporalio/workflow';
import type { BrowserAIActivities } from '../activities';
import type { WebhookDeliveryInput, WebhookDeliveryOutput } from '../activities/types';

/**
 * The delivery is retried with backoff from 1 s up to 10 min between attempts, with no attempt
 * limit: the activity itself gives up once the worker's retry window (BROWSERAI_WEBHOOK_RETRY_WINDOW_MS,
 * default 24 h) has passed since the event. Three days bound it whatever the worker says. An attempt
 * is one request (at most 15 s), so a worker that dies mid-request is retried after 20 s.
 */
const { browserAIDeliverWebhook } = proxyActivities<BrowserAIActivities>({
  startToCloseTimeout: '20 seconds',
  scheduleToCloseTimeout: '3 days',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

/** Delivers one webhook event (started by `browserTask`; its ID and body come from there). */
export async function browserAIWebhook(input: WebhookDeliveryInput): Promise<WebhookDeliveryOutput> {
  return browserAIDeliverWebhook(input);
}
