// The task's webhook events, sent from the workflow. The event's webhook-id is derived here,
// deterministically (the first run's ID and the event's number), and passed to every attempt, so
// receivers can deduplicate. While the run goes on, an event is delivered by an activity of this
// workflow (one trip through the task queue, none with eager dispatch). An event that must outlive the run
// (task.finished) or a delivery still retrying when the run closes or continues as new is handed to
// an abandoned child workflow with the same ID and body (webhook-delivery.ts): a receiver may then
// get it twice, under one webhook-id, as Standard Webhooks allows. The child's workflow ID is
// named from the run chain (the first run's ID), not from the workflow ID alone: a workflow ID
// reused after its first workflow closed gets children of its own, and a long workflow ID still
// leaves room for the child's (docs/design/waiters-and-children.md).
import {
  CancellationScope,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  isCancellation,
  log,
  patched,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { TaskWebhookOptions } from '../../contract/input';
import { utf8Prefix } from '../../contract/text';
import type { WebhookBody, WebhookDeliveryInput } from '../../contract/webhooks';
import { WEBHOOK_CHILD_ID_PER_RUN_CHAIN } from '../patches';
import { browserAIWebhook, deliverWebhookEvent } from '../webhook-delivery';
import { rootFailure } from './failures';

interface Delivery extends WebhookDeliveryInput {
  /** The event's number in the task (1, 2, ...), part of its ID. */
  number: number;
}

export class Webhooks {
  /** Deliveries by this run's activity not ended yet: handed to a child if the run closes first. */
  readonly #inFlight = new Map<number, Delivery>();
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

  /**
   * Starts the event's delivery, if the task wants this kind of event. Never throws, never waits
   * for the receiver. `outlivesRun`: the run is about to close (task.finished), so a child delivers it.
   */
  send(body: Omit<WebhookBody, 'timestamp'>, { outlivesRun = false } = {}): void {
    if (!this.wants(body.type)) return;
    const number = this.nextNumber();
    const { reference } = this.options!;
    const delivery: Delivery = {
      number,
      id: `msg_${workflowInfo().firstExecutionRunId}_${number}`,
      body: {
        ...body,
        timestamp: new Date(Date.now()).toISOString(),
        data: { ...body.data, ...(reference !== undefined ? { reference } : {}) },
      } as WebhookBody,
    };
    if (outlivesRun) return this.#handToChild(delivery);
    this.#inFlight.set(number, delivery);
    // Not cancellable: a cancelled task still tells its receiver what it asked before.
    void CancellationScope.nonCancellable(() =>
      deliverWebhookEvent.executeWithOptions({ summary: summaryOf(delivery) }, [
        { id: delivery.id, body: delivery.body },
      ]),
    ).then(
      () => this.#inFlight.delete(number),
      (err: unknown) => {
        this.#inFlight.delete(number);
        log.warn('Gave up delivering a webhook event', { ...describe(delivery), failure: rootFailure(err).message });
      },
    );
  }

  /**
   * Before the run closes or continues as new: deliveries still retrying go to children (a pending
   * activity dies with its run), and the workflow waits until every child started (a child start
   * still pending when the parent closes is never made).
   */
  async handOver(): Promise<void> {
    for (const delivery of this.#inFlight.values()) this.#handToChild(delivery);
    this.#inFlight.clear();
    while (this.#starting.size > 0) await Promise.all(this.#starting);
  }

  #handToChild(delivery: Delivery): void {
    const started = CancellationScope.nonCancellable(() =>
      startChild(browserAIWebhook, {
        workflowId: webhookChildId(delivery.number),
        args: [{ id: delivery.id, body: delivery.body }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // A reset that replays this event meets the child that already delivered it.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: summaryOf(delivery),
      }),
    ).then(
      () => undefined,
      (err: unknown) => {
        if (isCancellation(err)) return;
        log.warn('Could not start the delivery of a webhook event', {
          ...describe(delivery),
          failure: rootFailure(err).message,
        });
      },
    );
    this.#starting.add(started);
    void started.finally(() => this.#starting.delete(started));
  }
}

/**
 * The most UTF-8 bytes of the parent's workflow ID that a child's ID repeats (to read in lists):
 * with the rest (`-webhook-`, a run ID, the number) it stays under 255, the longest workflow ID
 * SQL visibility stores (the server's own default limit is 1,000).
 */
export const WEBHOOK_CHILD_PREFIX_BYTES = 100;

/**
 * The delivery child's workflow ID: the parent's workflow ID cut to a bounded prefix, then the
 * first run's ID (the same across continue-as-new and reset, new for a reused workflow ID) and
 * the event's number. Runs started before this naming keep `<workflowId>-webhook-<n>` on replay.
 */
function webhookChildId(number: number): string {
  const { workflowId, firstExecutionRunId } = workflowInfo();
  if (!patched(WEBHOOK_CHILD_ID_PER_RUN_CHAIN)) return `${workflowId}-webhook-${number}`;
  return `${utf8Prefix(workflowId, WEBHOOK_CHILD_PREFIX_BYTES)}-webhook-${firstExecutionRunId}-${number}`;
}

const summaryOf = (d: Delivery) => `Webhook ${d.body.type} (${d.id})`;
const describe = (d: Delivery) => ({ type: d.body.type, webhookId: d.id });
