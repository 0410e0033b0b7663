// What the worker POSTs to the webhook destination, and the activity that delivers it. Apart from
// the messages because a body carries the messages' objects (an input request, how a task ended).
import type { InputRequest, TaskFinished } from './messages';

/**
 * The JSON body of a webhook, as the Standard Webhooks specification shapes it: `type`, the moment
 * the event happened (`timestamp`, ISO 8601) and `data`. Sent with the headers `webhook-id` (the
 * same on every retry of one event: deduplicate on it), `webhook-timestamp` and `webhook-signature`.
 * `reference` is the task's `webhook.reference`, echoed as given. Never a code, token or credential.
 */
export type WebhookBody =
  | { type: 'input.requested'; timestamp: string; data: InputRequest & WebhookReference }
  | { type: 'task.finished'; timestamp: string; data: TaskFinished & WebhookReference }
  | {
      type: 'task.stop_not_confirmed';
      timestamp: string;
      /** The stop was retried for `stopRetryWindowMs` without success: the task may still run; stop it from the BrowserAI dashboard. */
      data: { workflowId: string; executionId: string } & WebhookReference;
    };

/** What every webhook event's `data` carries besides the event's own fields. */
export interface WebhookReference {
  /** The task's `webhook.reference`, echoed as given; absent when the task set none. */
  reference?: string;
}

/**
 * One webhook event to deliver. `id` is its `webhook-id`, derived in the workflow and the same on
 * every attempt, so a receiver can deduplicate retries.
 */
export interface WebhookDeliveryInput {
  id: string;
  body: WebhookBody;
}

/** What `browserAIDeliverWebhook` returns. */
export interface WebhookDeliveryOutput {
  /** false: no destination is configured on the worker, or the retry window passed (logged either way). */
  delivered: boolean;
}
