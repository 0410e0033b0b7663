// The client side of a batch (docs/fleet.md, "Batches"): start it, feed it its items in pages as it
// has room, watch its counts, cancel it, read every item's outcome in order, run its failed items
// again. Everything here can be killed and run again: the pages are idempotent by position, and
// each item's child has a deterministic workflow ID.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type WorkflowHandle,
} from '@temporalio/client';
import {
  ApplicationFailure,
  CancelledFailure,
  WorkflowIdReusePolicy,
  fromPayloadsAtIndex,
  type LoadedDataConverter,
  type Payload,
} from '@temporalio/common';
import type { browserAIBatch } from '../workflows';
import {
  batchItemWorkflowId,
  batchItemsProblems,
  batchNameProblems,
  concurrencyProblems,
  maxHistoryBytesProblems,
} from '../workflows/batch/items';
import {
  addBatchItemsUpdate,
  batchStateQuery,
  type BatchItem,
  type BatchPage,
  type BatchRecord,
  type BatchState,
} from '../contract/batch-messages';
import type { BrowserTaskInput, BrowserTaskResult } from '../contract/input';
import { InvalidInputError } from '../contract/input-problems';
import { batchFingerprint } from './batch-fingerprint';
import { startSearchAttributes, withSearchAttributeFallback } from './search-attributes-fallback';

/** Options of `BrowserTasks.startBatch`. */
export interface BatchStartOptions {
  /** The batch's name: its workflow ID, and the first part of each item's (`<name>/<item id>`). Run again with the same name to resume. */
  name: string;
  /** Tasks of this batch running at once, at most (1-1000; default 10). The fleet limit may hold them to fewer. */
  concurrency?: number;
  /** Items the batch keeps waiting to start (default 1,000); the rest are sent as it has room. */
  maxQueued?: number;
  /** The bytes one run of the batch's history may reach (4 MB to 40 MB, the default): see `BatchOptions.maxHistoryBytes`. */
  maxHistoryBytes?: number;
  /** Called after each page the batch took, with how many items of the list it holds. */
  onAdded?: (added: number) => void;
  /** How long to wait before offering a page again when the batch took none (default 1 s). */
  retryPageMs?: number;
}

/** A page's limits: well under Temporal's 2 MB per payload, so history grows in bounded steps. */
const PAGE_ITEMS = 500;
const PAGE_BYTES = 256 * 1024;

/**
 * A batch that has ended cannot be resumed: its results are ready. `status` says how it ended when
 * Temporal ended it (terminated, failed, timed out, cancelled), rather than its own completion.
 */
export class BatchFinishedError extends Error {
  override readonly name = 'BatchFinishedError';
  constructor(
    readonly batchName: string,
    readonly status: BatchState['status'] = 'completed',
  ) {
    super(
      status === 'completed'
        ? `batch ${batchName} has finished: read its outcomes with \`batch results ${batchName}\` (or retry its failed items)`
        : `Batch ${batchName} was ${status.replace('_', ' ')} in Temporal: it cannot be resumed. ` +
            `Its items' outcomes: \`batch results ${batchName}\` (or retry its failed items).`,
    );
  }
}

/** A started (or resumed) batch. */
export interface BatchHandle {
  name: string;
  /** The batch workflow: `result()` waits for its final counts. */
  workflow: WorkflowHandle<typeof browserAIBatch>;
  /** Resolves with the number of items added once every item is in the batch; the caller must keep running until then (or run `startBatch` again later to resume). */
  added: Promise<number>;
}

/** One item's outcome, as `batch results` writes it (one JSON line each, in the list's order). */
export interface BatchItemOutcome {
  id: string;
  workflowId: string;
  status: 'completed' | 'failed' | 'cancelled' | 'terminated' | 'timed_out' | 'running' | 'not_started';
  result?: BrowserTaskResult;
  failure?: { type?: string; message: string };
}

export function batchOptionProblems(name: string, concurrency: number, maxHistoryBytes?: number): string[] {
  return [...batchNameProblems(name), ...concurrencyProblems(concurrency), ...maxHistoryBytesProblems(maxHistoryBytes)];
}

/**
 * A list read from its start each time it is sent, for lists too large to hold (`batch run`
 * streams its file this way): the reader has checked every item, and counted and fingerprinted
 * them (`BatchFingerprint`).
 */
export interface BatchItemSource {
  total: number;
  fingerprint: string;
  /** The items in order, from the first. */
  items(): AsyncIterable<BatchItem>;
}

/**
 * Starts (or resumes) a batch and feeds it `items`. A list in memory is checked first:
 * InvalidInputError, before anything is sent, for any bad item or duplicate ID.
 */
export async function startBatch(
  client: Client,
  taskQueue: string,
  items: BatchItem[] | BatchItemSource,
  options: BatchStartOptions,
): Promise<BatchHandle> {
  const concurrency = options.concurrency ?? 10;
  const problems = [
    ...batchOptionProblems(options.name, concurrency, options.maxHistoryBytes),
    ...(Array.isArray(items) ? batchItemsProblems(items) : []),
  ];
  if (problems.length > 0) throw new InvalidInputError(problems);
  // A resume is refused unless it sends this very list (the batch keeps its fingerprint, not its items).
  const source = Array.isArray(items)
    ? { total: items.length, fingerprint: batchFingerprint(items), items: () => items }
    : items;
  const { total, fingerprint } = source;
  const first: BatchPage = { from: 0, items: [], total, fingerprint };
  let accepted: number;
  try {
    accepted = await withSearchAttributeFallback(async (registered) => {
      const start = new WithStartWorkflowOperation<typeof browserAIBatch>('browserAIBatch', {
        workflowId: options.name,
        taskQueue,
        args: [
          {
            concurrency,
            total,
            fingerprint,
            ...(options.maxQueued !== undefined ? { maxQueued: options.maxQueued } : {}),
            ...(options.maxHistoryBytes !== undefined ? { maxHistoryBytes: options.maxHistoryBytes } : {}),
          },
        ],
        // The same name while it runs is this batch resumed; after it ended, nothing starts again.
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: `BrowserAI batch · ${total} items · ${concurrency} at a time`,
        typedSearchAttributes: registered(startSearchAttributes()),
      });
      return (
        await client.workflow.executeUpdateWithStart(addBatchItemsUpdate, {
          args: [first],
          startWorkflowOperation: start,
        })
      ).accepted;
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    // Ended before this run looked (a resume after Temporal timed it out, say): say how.
    const { status } = await client.workflow.getHandle(options.name).describe();
    throw new BatchFinishedError(options.name, ENDED_BY_TEMPORAL[status.name] ?? 'completed');
  }
  const workflow = client.workflow.getHandle<typeof browserAIBatch>(options.name);
  options.onAdded?.(accepted);
  const added = feed(workflow, source.items(), accepted, { total, count: total, fingerprint, ...options });
  // Marked handled here; whoever awaits `added` still gets its rejection.
  added.catch(() => undefined);
  return { name: options.name, workflow, added };
}

/**
 * Sends the list's items from index `accepted` on, a page at a time, as the batch has room. The
 * list is read once, in order, and only a page of it is held: a page the batch took part of is
 * sent again from where it stopped. The list's first item is index `offset` of the batch's count
 * (retry-failed's list continues where its last one stopped); it has `count` items.
 */
async function feed(
  workflow: WorkflowHandle<typeof browserAIBatch>,
  items: AsyncIterable<BatchItem> | Iterable<BatchItem>,
  accepted: number,
  options: {
    total: number;
    count: number;
    fingerprint?: string;
    offset?: number;
    retry?: boolean;
    onAdded?: (added: number) => void;
    retryPageMs?: number;
  },
): Promise<number> {
  const offset = options.offset ?? 0;
  let page: BatchItem[] = [];
  let pageBytes = 0;
  let pageFrom = accepted;
  const send = async () => {
    const answer = await workflow.executeUpdate(addBatchItemsUpdate, {
      args: [
        {
          from: pageFrom,
          items: page,
          total: options.total,
          ...(options.fingerprint ? { fingerprint: options.fingerprint } : {}),
          ...(options.retry ? { retry: true, retryTarget: offset + options.count } : {}),
        },
      ],
    });
    // None taken: the batch is about to continue as new; offer the page again shortly.
    if (answer.accepted === pageFrom) await sleep(options.retryPageMs ?? 1_000);
    accepted = answer.accepted;
    options.onAdded?.(accepted);
    page = page.slice(Math.min(page.length, accepted - pageFrom));
    pageBytes = page.reduce((sum, item) => sum + jsonLength(item), 0);
    pageFrom = accepted;
  };
  let index = offset;
  for await (const item of items) {
    const at = index++;
    if (at < accepted) continue;
    const bytes = jsonLength(item);
    // A full page (PAGE_ITEMS, or PAGE_BYTES of JSON; always at least one item) goes first.
    while (page.length > 0 && (page.length >= PAGE_ITEMS || pageBytes + bytes > PAGE_BYTES)) await send();
    if (at < accepted) continue;
    if (page.length === 0) pageFrom = at;
    page.push(item);
    pageBytes += bytes;
  }
  while (page.length > 0) await send();
  return accepted - offset;
}

function jsonLength(item: BatchItem): number {
  return JSON.stringify(item).length;
}

/** A batch's closed workflow, other than completed: the status it shows (a cancelled batch's own is `cancelled`). */
const ENDED_BY_TEMPORAL: Partial<Record<string, BatchState['status']>> = {
  CANCELED: 'cancelled',
  TERMINATED: 'terminated',
  FAILED: 'failed',
  TIMED_OUT: 'timed_out',
};

/** A batch that has closed (terminated, failed, timed out, cancelled) whose counts no worker could tell. */
export class BatchEndedError extends Error {
  override readonly name = 'BatchEndedError';
  constructor(
    readonly batchName: string,
    readonly status: BatchState['status'],
    cause: unknown,
  ) {
    super(
      `batch ${batchName} was ${status.replace('_', ' ')}; its counts could not be read ` +
        `(${cause instanceof Error ? cause.message : String(cause)}). ` +
        `Its items' outcomes: \`batch results ${batchName}\`.`,
      { cause },
    );
  }
}

/**
 * The batch's counts: its result once completed, else the query (a worker answers it, from the
 * history if the batch has closed). A batch that Temporal terminated, failed or timed out has that
 * status, with the counts it had then; BatchEndedError when it has closed and no worker answers.
 */
export async function batchState(client: Client, name: string): Promise<BatchState> {
  const workflow = client.workflow.getHandle<typeof browserAIBatch>(name);
  const { status } = await workflow.describe();
  if (status.name === 'COMPLETED') return workflow.result();
  const ended = ENDED_BY_TEMPORAL[status.name];
  if (!ended) return workflow.query(batchStateQuery);
  try {
    return { ...(await workflow.query(batchStateQuery)), status: ended };
  } catch (err) {
    throw new BatchEndedError(name, ended, err);
  }
}

/** Cancels the batch: queued items are dropped, each running task gets its one stop. */
export async function cancelBatch(client: Client, name: string): Promise<void> {
  await client.workflow.getHandle(name).cancel();
}

/**
 * The list's item IDs in order, read from the batch's own history (the pages it took), every run
 * from the first: nothing of the list is kept in the batch's state.
 */
/**
 * The argument at `index` of payloads read from a history, decoded as the client would: through
 * its codecs, the last first, then its payload converter (the SDK's own helper for this is internal).
 */
async function decodedAt<T>(
  converter: LoadedDataConverter,
  index: number,
  payloads: Payload[] | null | undefined,
): Promise<T> {
  let decoded = payloads ?? [];
  for (const codec of [...converter.payloadCodecs].reverse()) decoded = await codec.decode(decoded);
  return fromPayloadsAtIndex<T>(converter.payloadConverter, index, decoded);
}

export async function batchItemIds(client: Client, name: string): Promise<string[]> {
  const converter = client.options.loadedDataConverter;
  const runs: HistoryEvent[][] = [];
  let runId: string | undefined = (await client.workflow.getHandle(name).describe()).runId;
  while (runId) {
    const events: HistoryEvent[] = await historyEvents(client, name, runId);
    runs.unshift(events);
    const started:
      { continuedExecutionRunId?: string | null; input?: { payloads?: Payload[] | null } | null } | null | undefined =
      events[0]?.workflowExecutionStartedEventAttributes;
    runId = started?.continuedExecutionRunId || undefined;
    if (!runId && started?.input?.payloads && started.input.payloads.length > 1)
      runId = (await decodedAt<BatchRecord | undefined>(converter, 1, started.input.payloads))?.previousRunId;
  }
  const ids: string[] = [];
  for (const events of runs) {
    const pages = new Map<string, BatchPage>();
    for (const event of events) {
      const acceptedUpdate = event.workflowExecutionUpdateAcceptedEventAttributes;
      if (acceptedUpdate?.acceptedRequest?.input?.name === addBatchItemsUpdate.name) {
        const page = await decodedAt<BatchPage>(converter, 0, acceptedUpdate.acceptedRequest.input.args?.payloads);
        pages.set(String(event.eventId), page);
      }
      const completed = event.workflowExecutionUpdateCompletedEventAttributes;
      const page = completed && pages.get(String(completed.acceptedEventId));
      if (page && !page.retry && completed.outcome?.success) {
        const { accepted } = await decodedAt<{ accepted: number }>(converter, 0, completed.outcome.success.payloads);
        for (let index = ids.length; index < accepted; index++) ids.push(page.items[index - page.from]!.id);
      }
    }
  }
  return ids;
}

type HistoryPage = Awaited<ReturnType<Client['workflowService']['getWorkflowExecutionHistory']>>;
type HistoryEvent = NonNullable<NonNullable<HistoryPage['history']>['events']>[number];
/** gRPC's status code for a message over the client's 4 MB receive limit. */
const RESOURCE_EXHAUSTED = 8;

/**
 * A run's events, read in pages that fit in a gRPC message: each child's completion carries its
 * result (up to `maxResultBytes`), so a page of many events can pass the client's 4 MB limit. A page
 * refused for its size is asked again, smaller.
 */
async function historyEvents(client: Client, workflowId: string, runId: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  // 100 events hold small results in well under 4 MB; 2 hold the largest (2 × 1.5 MiB). The client
  // retries a refused page with backoff before it gives up, so a run shrinks its pages only once.
  let maximumPageSize = 100;
  for (;;) {
    try {
      const page = await client.workflowService.getWorkflowExecutionHistory({
        namespace: client.options.namespace,
        execution: { workflowId, runId },
        maximumPageSize,
        nextPageToken,
      });
      events.push(...(page.history?.events ?? []));
      if (!page.nextPageToken?.length) return events;
      nextPageToken = page.nextPageToken;
    } catch (err) {
      if ((err as { code?: number }).code !== RESOURCE_EXHAUSTED || maximumPageSize === 2) throw err;
      maximumPageSize = 2;
    }
  }
}

/** One item's outcome, from its child workflow (a describe, and its result once closed). */
export async function batchItemOutcome(client: Client, name: string, id: string): Promise<BatchItemOutcome> {
  const workflowId = batchItemWorkflowId(name, id);
  const handle = client.workflow.getHandle(workflowId);
  let status: string;
  try {
    status = (await handle.describe()).status.name;
  } catch (err) {
    if (err instanceof Error && err.name === 'WorkflowNotFoundError') return { id, workflowId, status: 'not_started' };
    throw err;
  }
  if (status === 'RUNNING') return { id, workflowId, status: 'running' };
  try {
    return { id, workflowId, status: 'completed', result: (await handle.result()) as BrowserTaskResult };
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    const cause = err.cause;
    const outcome: BatchItemOutcome['status'] =
      cause instanceof CancelledFailure
        ? 'cancelled'
        : status === 'TERMINATED'
          ? 'terminated'
          : status === 'TIMED_OUT'
            ? 'timed_out'
            : 'failed';
    return {
      id,
      workflowId,
      status: outcome,
      failure: {
        ...(cause instanceof ApplicationFailure && cause.type ? { type: cause.type } : {}),
        message: cause?.message ?? err.message,
      },
    };
  }
}

/**
 * Every item's outcome in the list's order, `concurrency` children read at a time, handed to
 * `write` in order as they come: 100,000 items need no more memory than their IDs.
 */
export async function batchOutcomes(
  client: Client,
  name: string,
  write: (outcome: BatchItemOutcome) => void | Promise<void>,
  concurrency = 16,
): Promise<number> {
  const ids = await batchItemIds(client, name);
  let next = 0;
  const ready = new Map<number, BatchItemOutcome>();
  let written = 0;
  const flush = async () => {
    while (ready.has(written)) {
      const outcome = ready.get(written)!;
      ready.delete(written++);
      await write(outcome);
    }
  };
  // Readers take indexes in order; one finished far ahead waits in `ready` (at most `concurrency` apart... plus the writer's lag).
  const reader = async () => {
    while (next < ids.length) {
      const index = next++;
      ready.set(index, await batchItemOutcome(client, name, ids[index]!));
      await flush();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, ids.length) }, reader));
  await flush();
  return written;
}

/**
 * Runs the batch's failed items again (failed, timed out or terminated; not cancelled), each under
 * its own workflow ID again. A finished batch is started again for them, with its counts.
 */
export async function retryFailedItems(
  client: Client,
  taskQueue: string,
  name: string,
  options: { retryPageMs?: number } = {},
): Promise<number> {
  const failed: BatchItem[] = [];
  const converter = client.options.loadedDataConverter;
  await batchOutcomes(client, name, async (outcome) => {
    if (!['failed', 'terminated', 'timed_out'].includes(outcome.status)) return;
    const history = await client.workflow.getHandle(outcome.workflowId).fetchHistory();
    const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
    failed.push({ id: outcome.id, input: await decodedAt<BrowserTaskInput>(converter, 0, payloads) });
  });
  if (failed.length === 0) return 0;
  const workflow = client.workflow.getHandle<typeof browserAIBatch>(name);
  let state: BatchState;
  for (;;) {
    const description = await workflow.describe();
    if (description.status.name === 'RUNNING') state = await workflow.query(batchStateQuery);
    else if (description.status.name === 'COMPLETED') {
      const ended = await workflow.result();
      state = { ...ended, retryTarget: ended.retried + failed.length };
      const carried: BatchRecord = { state, queue: [], previousRunId: description.runId };
      await withSearchAttributeFallback((registered) =>
        client.workflow.start('browserAIBatch', {
          workflowId: name,
          taskQueue,
          args: [{ concurrency: state.concurrency, total: state.total }, carried],
          workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
          staticSummary: `BrowserAI batch · ${state.total} items · retrying ${failed.length} failed`,
          typedSearchAttributes: registered(startSearchAttributes()),
        }),
      );
    } else throw new BatchFinishedError(name);
    try {
      return await feed(workflow, failed, state.retried, {
        total: state.total,
        count: failed.length,
        offset: state.retried,
        retry: true,
        ...options,
      });
    } catch (err) {
      // It ended between our look and our first page: start it again for them.
      if (!(err instanceof WorkflowNotFoundError) || description.status.name !== 'RUNNING') throw err;
    }
  }
}
