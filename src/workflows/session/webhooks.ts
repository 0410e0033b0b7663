// The task's webhook events, sent from the workflow. Each event is delivered by a child workflow
// of its own that the task abandons (webhook-delivery.ts): the task waits only for the child to
// start, never for the receiver. The event's webhook-id is derived here, deterministically (the
// first run's ID and the event's number), and passed to the child, so every retry carries it.
import {
  CancellationScope,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  isCancellation,
  log,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { TaskWebhookOptions } from '../input';
import type { WebhookBody } from '../messages';
import { browserAIWebhook } from '../webhook-delivery';
import { rootFailure } from './failures';

export class Webhooks {
  /** Child starts not acknowledged yet: the workflow may not close (or continue as new) before them. */
  readonly #starting = new Set<Promise<void>>();

  constructor(
    private readonly options: TaskWebhookOptions | undefined,
    /** Numbers the events (1, 2, ...); carried across continue-as-new so a number is never reused. */
    private readonly nextNumber: () => number,
  ) {}

  wants(type: WebhookBody['type']): boolean {
    return this.options !== undefined && (this.options.events ?? [type]).includes(type);
  }

  /** Starts the event's delivery, if the task wants this kind of event. Never throws, never waits for the receiver. */
  send(body: Omit<WebhookBody, 'timestamp'>): void {
    if (!this.wants(body.type)) return;
    const number = this.nextNumber();
    const { workflowId, firstExecutionRunId } = workflowInfo();
    const id = `msg_${firstExecutionRunId}_${number}`;
    const { reference } = this.options!;
    const event = {
      ...body,
      timestamp: new Date(Date.now()).toISOString(),
      data: { ...body.data, ...(reference !== undefined ? { reference } : {}) },
    } as WebhookBody;
    const started = CancellationScope.nonCancellable(() =>
      startChild(browserAIWebhook, {
        workflowId: `${workflowId}-webhook-${number}`,
        args: [{ id, body: event }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // A reset that replays this event meets the child that already delivered it.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: `Webhook ${event.type} (${id})`,
      }),
    ).then(
      () => undefined,
      (err: unknown) => {
        if (isCancellation(err)) return;
        log.warn('Could not start the delivery of a webhook event', {
          type: event.type,
          webhookId: id,
          failure: rootFailure(err).message,
        });
      },
    );
    this.#starting.add(started);
    void started.finally(() => this.#starting.delete(started));
  }

  /** Waits until every delivery started: a child whose start is still pending when the workflow closes is never started. */
  async started(): Promise<void> {
    while (this.#starting.size > 0) await Promise.all(this.#starting);
  }
}
