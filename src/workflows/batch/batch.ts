// A batch: many `browserTask`s run as children, `concurrency` at a time (each child also takes its
// fleet slot, docs/fleet.md), with counts to watch. Its workflow ID is the batch's name.
// - Items arrive in pages through an update (`browserAIBatchAddItems`) that is idempotent by
//   position: a page names its first item's index, and what the batch already holds is skipped, so
//   a client killed mid-batch re-runs and resumes. Only the items not started yet are kept; an add
//   waits while `maxQueued` wait, so neither the state nor a continue-as-new input grows with the
//   batch's size.
// - Each item's child has the ID `<batch>/<item id>`: a batch never starts one twice, and its
//   outcomes are read from the children (`batch results`), not held here.
// - History stays bounded: each child's result lands in this history, so an item starts only if
//   the largest result of every running item still fits the run's byte budget; past a quarter of
//   it the batch stops starting, waits for its running children (their results are awaited by
//   this run only) and continues as new with the queue and counts.
// - Cancelling the batch drops the queue and cancels each running child once (its own ending path
//   stops its BrowserAI task once).
import {
  ApplicationFailure,
  ChildWorkflowFailure,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
} from '@temporalio/common';
import {
  CancellationScope,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { FailureType } from '../../contract/errors';
import { DEFAULTS } from '../../contract/input';
import type { browserTask } from '../browser-task';
import { BrowserAIStatus } from '../../contract/search-attributes';
import { startSearchAttributes } from '../start-search-attributes';
import { browserTaskStartOptions } from '../start-options';
import {
  MAX_BATCH_HISTORY_BYTES,
  batchItemWorkflowId,
  batchItemsProblems,
  concurrencyProblems,
  maxHistoryBytesProblems,
} from './items';
import {
  addBatchItemsUpdate,
  batchStateQuery,
  type BatchItem,
  type BatchOptions,
  type BatchRecord,
  type BatchState,
} from '../../contract/batch-messages';

/** Items waiting to start that a batch keeps by default: about 1,000 × 1 KB, well inside a continue-as-new input. */
export const DEFAULT_MAX_QUEUED = 1_000;
/** The queue's size in bytes, at most: the continue-as-new input must stay under Temporal's 2 MB. */
const MAX_QUEUED_BYTES = 1_000_000;
/** Drain and continue as new past these events: far under the 51,200-event limit (concurrency ≤ 1,000 × ~9 events). */
const MAX_HISTORY_EVENTS = 10_000;
/** What a child's completion may add beyond `maxResultBytes`: its output (cut to 64 KiB) and the rest of its result. */
const RESULT_OVERHEAD_BYTES = 64 * 1024 + 4 * 1024;

/** A batch of `browserTask`s (docs/fleet.md, "Batches"). Returns its final counts. */
export async function browserAIBatch(options: BatchOptions, carried?: BatchRecord): Promise<BatchState> {
  const problems = [
    ...concurrencyProblems(options.concurrency),
    ...(Number.isInteger(options.total) && options.total >= 0 ? [] : ['total must be a whole number of items']),
    ...maxHistoryBytesProblems(options.maxHistoryBytes),
  ];
  if (problems.length > 0)
    throw ApplicationFailure.create({
      type: FailureType.InvalidInput,
      message: problems.join('; '),
      nonRetryable: true,
      details: [{ problems }],
    });
  const { workflowId: name } = workflowInfo();
  const state: BatchState = carried
    ? { ...carried.state, retryTarget: carried.state.retryTarget ?? 0 }
    : {
        name,
        status: 'running',
        concurrency: options.concurrency,
        total: options.total,
        added: 0,
        retried: 0,
        retryTarget: 0,
        queued: 0,
        running: 0,
        completed: 0,
        failed: 0,
        cancelled: 0,
        ...(options.fingerprint !== undefined ? { fingerprint: options.fingerprint } : {}),
      };
  state.status = 'running';
  // A retry-failed run of a finished batch brings its counts; the queue is carried only by continue-as-new.
  const queue: BatchItem[] = [...(carried?.queue ?? [])];
  let queuedBytes = queue.reduce((sum, item) => sum + JSON.stringify(item).length, 0);
  const maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
  // The default leaves 10 MB of Temporal's 50 MB for the events that are not results.
  const maxHistoryBytes = options.maxHistoryBytes ?? MAX_BATCH_HISTORY_BYTES;
  /** Items whose child runs now (started by this run), by ID, with the bytes its ending may add to this history. */
  const running = new Map<string, number>();
  const bytesAhead = () => [...running.values()].reduce((sum, bytes) => sum + bytes, 0);
  let cancelled = false;
  const historyFull = () =>
    workflowInfo().continueAsNewSuggested ||
    workflowInfo().historyLength > MAX_HISTORY_EVENTS ||
    workflowInfo().historySize > maxHistoryBytes / 4;
  // A lone item always starts (no stall): at most 1.6 MB, it fits a budget of 4 MB or more past a quarter of it.
  const fits = (item: BatchItem) =>
    running.size === 0 || workflowInfo().historySize + bytesAhead() + historyBytesOf(item) <= maxHistoryBytes;
  /** How many items of the page's list (the original one, or retry-failed's) the batch holds. */
  const received = (page: { retry?: boolean }) => (page.retry ? state.retried : state.added);
  const room = () => Math.min(maxQueued - queue.length, queuedBytes < MAX_QUEUED_BYTES ? maxQueued : 0);

  setHandler(batchStateQuery, () => ({ ...state }));
  setHandler(
    addBatchItemsUpdate,
    async (page) => {
      // Wait for room for the page's new items (or half the queue): the sender's call waits on the
      // server meanwhile, at no action. Taking a few items as soon as one slot frees would record
      // the whole page in history again and again (a 256 KB page for each handful of items).
      const left = () => page.items.length - (received(page) - page.from);
      await condition(() => room() >= Math.min(left(), Math.ceil(maxQueued / 2)) || cancelled || historyFull());
      if (cancelled) throw batchCancelled();
      if (page.retry && page.retryTarget !== undefined)
        state.retryTarget = Math.max(state.retryTarget, page.retryTarget);
      let taken = 0;
      for (const item of page.items.slice(received(page) - page.from)) {
        if (room() <= 0) break;
        taken++;
        if (page.retry) {
          // Already queued again or running (retry-failed run twice): nothing to add.
          if (running.has(item.id) || queue.some((q) => q.id === item.id)) continue;
          state.failed--;
        }
        queue.push(item);
        queuedBytes += JSON.stringify(item).length;
        state.queued++;
      }
      if (page.retry) state.retried += taken;
      else state.added += taken;
      return { accepted: received(page) };
    },
    {
      validator: (page) => {
        if (cancelled) throw batchCancelled();
        if (page.total !== state.total)
          throw ApplicationFailure.create({
            type: FailureType.BatchMismatch,
            message: `batch ${name} has ${state.total} items, this list ${page.total}: it is another list, not this one resumed; give it another name`,
            nonRetryable: true,
          });
        // Retry-failed's pages are another list (the failed items), sent by the client from the batch's own.
        if (!page.retry && state.fingerprint !== undefined && page.fingerprint !== state.fingerprint)
          throw ApplicationFailure.create({
            type: FailureType.BatchMismatch,
            message:
              `batch ${name} was started with another list of ${state.total} items (an item changed, moved or replaced): ` +
              'a resume must send the same items in the same order; to run this list, give it another name',
            nonRetryable: true,
          });
        if (!Number.isInteger(page.from) || page.from < 0 || page.from > received(page))
          throw ApplicationFailure.create({
            type: FailureType.BatchPageGap,
            message: `batch ${name} holds ${received(page)} of these items; a page must start at or before index ${received(page)} (got ${page.from})`,
            nonRetryable: true,
          });
        const itemProblems = batchItemsProblems(page.items, (index) => `item ${page.from + index + 1}`);
        if (itemProblems.length > 0)
          throw ApplicationFailure.create({
            type: FailureType.InvalidInput,
            message: itemProblems.slice(0, 20).join('; '),
            nonRetryable: true,
            details: [{ problems: itemProblems }],
          });
        if (!page.retry && page.from + page.items.length > state.total)
          throw ApplicationFailure.create({
            type: FailureType.BatchMismatch,
            message: `batch ${name} has ${state.total} items; this page goes past its end`,
            nonRetryable: true,
          });
      },
    },
  );

  // The children get the search attributes this batch was started with (the namespace has those).
  const registered = startSearchAttributes()
    .getAll()
    .filter(({ key }) => workflowInfo().typedSearchAttributes.get(key) !== undefined);
  const publish = () =>
    setCurrentDetails(
      `**Batch** ${state.status}: ${state.completed} completed, ${state.failed} failed, ${state.cancelled} cancelled, ` +
        `${state.running} running, ${state.queued} queued of ${state.total}`,
    );
  const setStatus = (status: BatchState['status']) => {
    state.status = status;
    if (registered.some(({ key }) => key.name === BrowserAIStatus.name))
      upsertSearchAttributes([{ key: BrowserAIStatus, value: `batch_${status}` }]);
  };

  const run = async (item: BatchItem) => {
    const workflowId = batchItemWorkflowId(name, item.id);
    try {
      const child = await startChild<typeof browserTask>('browserTask', {
        ...browserTaskStartOptions(item.input),
        workflowId,
        // A failed item may run again (retry-failed); a completed one never.
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        // A terminated batch still stops its tasks (each once); a batch never continues as new with children running.
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        staticSummary: `BrowserAI task · batch ${name} · item ${item.id}`,
        ...(registered.length > 0
          ? {
              typedSearchAttributes: startSearchAttributes(item.input.project)
                .getAll()
                .filter(({ key }) => registered.some((r) => r.key.name === key.name)),
            }
          : {}),
      });
      await child.result();
      state.completed++;
    } catch (err) {
      if (err instanceof ChildWorkflowFailure && isCancellation(err.cause)) state.cancelled++;
      else if (isCancellation(err)) state.cancelled++;
      else {
        if (err instanceof WorkflowExecutionAlreadyStartedError)
          log.warn('A batch item was started before, and did not fail: not started again', { workflowId });
        state.failed++;
      }
    } finally {
      running.delete(item.id);
      state.running--;
    }
  };

  const done = () =>
    state.added >= state.total && state.retried >= state.retryTarget && queue.length === 0 && running.size === 0;
  try {
    setStatus('running');
    for (;;) {
      publish();
      if (done()) break;
      if (historyFull()) {
        setStatus('draining');
        publish();
        await condition(() => running.size === 0 && allHandlersFinished());
        await continueAsNew<typeof browserAIBatch>(options, { state, queue });
      }
      const startable = () => queue.length > 0 && running.size < state.concurrency && fits(queue[0]!);
      while (startable()) {
        const item = queue.shift()!;
        queuedBytes -= JSON.stringify(item).length;
        state.queued--;
        state.running++;
        running.set(item.id, historyBytesOf(item));
        void run(item);
      }
      await condition(() => done() || historyFull() || startable());
    }
    await condition(allHandlersFinished);
    setStatus('completed');
    publish();
    return { ...state };
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled: drop what waits, and let each running child end its own way (one stop each).
    cancelled = true;
    await CancellationScope.nonCancellable(async () => {
      setStatus('cancelling');
      state.cancelled += queue.length;
      state.queued = 0;
      queue.length = 0;
      publish();
      await condition(() => running.size === 0 && allHandlersFinished());
      setStatus('cancelled');
      publish();
    });
    throw err;
  }
}

/** The most an item's child adds to this history: its input when it starts, its largest result when it ends. */
function historyBytesOf(item: BatchItem): number {
  return (
    JSON.stringify(item.input).length + (item.input.maxResultBytes ?? DEFAULTS.maxResultBytes) + RESULT_OVERHEAD_BYTES
  );
}

function batchCancelled() {
  return ApplicationFailure.create({
    type: FailureType.BatchCancelled,
    message: 'this batch was cancelled: nothing more is added; start a new batch under another name',
    nonRetryable: true,
  });
}
