// A batch's messages and the shapes they carry: the pages of items a client adds, the counts the
// `state` query answers, and what a batch hands its next run (continue-as-new) or returns.
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { BrowserTaskInput } from './input';

/** One item of a batch: a `browserTask` input and the item's ID (its child workflow is `<batch>/<id>`). */
export interface BatchItem {
  /** 1-128 letters, digits or `._:@+=-`; unique in the batch. */
  id: string;
  input: BrowserTaskInput;
}

/** What a batch workflow starts with. */
export interface BatchOptions {
  /** How many of its tasks run at once, at most (the fleet limit may hold them to fewer). */
  concurrency: number;
  /** How many items the batch has: it ends once that many were added and all have ended. */
  total: number;
  /**
   * The list's fingerprint (`sha256:...`, over every item in order), as the client computed it:
   * a page of any other list is refused (`BatchMismatch`). A batch started without one compares
   * only `total`.
   */
  fingerprint?: string;
  /** Items the batch keeps waiting to start, at most: an add beyond it waits for room. Default 1,000. */
  maxQueued?: number;
  /**
   * The bytes one run's history may reach, counting the largest result each running item may still
   * return (`maxResultBytes` plus its output): the batch starts no item beyond it, and continues as new
   * past a quarter of it. Default 40 MB, under Temporal's 50 MB limit; lower it for quicker replays.
   */
  maxHistoryBytes?: number;
}

/** How many items are in each state. */
export interface BatchCounts {
  /** Added, not started yet. */
  queued: number;
  running: number;
  completed: number;
  /** Failed, timed out or terminated. */
  failed: number;
  /** Cancelled while running, or dropped from the queue by a cancel. */
  cancelled: number;
}

/** The `state` query's answer, and a finished batch's result. */
export interface BatchState extends BatchCounts {
  name: string;
  /**
   * The batch's own status; `terminated`, `failed` and `timed_out` are Temporal's ending of its
   * workflow, as the client reads it (the counts are then those it had when it ended).
   */
  status: 'running' | 'draining' | 'cancelling' | 'completed' | 'cancelled' | 'terminated' | 'failed' | 'timed_out';
  concurrency: number;
  total: number;
  /** Items of the list added so far (at most `total`): where its next page starts. */
  added: number;
  /** Items sent again by retry-failed so far: where its next page starts. */
  retried: number;
  /** Items retry-failed has said it sends, in all: the batch does not end before it has them. */
  retryTarget: number;
  /** The fingerprint of the list the batch was started with (BatchOptions.fingerprint), if given. */
  fingerprint?: string;
}

/** What one run of a batch hands the next: its counts and the items not started yet. */
export interface BatchRecord {
  state: BatchState;
  queue: BatchItem[];
  /** A retry-failed run of a finished batch: the run it follows (where `batch results` reads the list's order). */
  previousRunId?: string;
}

/**
 * A page of items from index `from` of its list (the batch's, or retry-failed's): idempotent, the
 * items the batch holds already are skipped.
 */
export interface BatchPage {
  from: number;
  items: BatchItem[];
  /** The batch's size as the sender knows it: a page for a batch of another size is refused (`BatchMismatch`). */
  total: number;
  /** The fingerprint of the sender's list: a page of another list than the batch's is refused (`BatchMismatch`). */
  fingerprint?: string;
  /** Items that failed, sent again (`batch retry-failed`): they count as failed no more. */
  retry?: boolean;
  /** With `retry`: how many retried items the batch has once this retry's list is all in (its end). */
  retryTarget?: number;
}

/** What an add answers: how many items of the page's list the batch holds now (the next page's `from`). */
export interface BatchPageAnswer {
  accepted: number;
}

/** Adds a page of items; waits while the batch's queue is full, then takes what fits. */
export const addBatchItemsUpdate = defineUpdate<BatchPageAnswer, [BatchPage]>('browserAIBatchAddItems');
/** The batch's counts (`temporal workflow query --type browserAIBatchState`). */
export const batchStateQuery = defineQuery<BatchState>('browserAIBatchState');
