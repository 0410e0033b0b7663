// What a task session remembers, grouped by how long it lives. The record is what a later run
// needs and is carried whole across continue-as-new; what belongs to one run only (what BrowserAI
// showed last, the stop, the results) stays in TaskSession and is rebuilt by the next run's first
// poll.
import type { OutgoingInstructions } from '../../contract/input';
import { newInputRequestRecord, type InputRequestRecord } from './input-requests';
import type { InboxRecord } from './inbox';
import type { CodeRecord } from './one-time-codes';

/**
 * What a later run of the session needs, carried whole across continue-as-new. Never part of the
 * public input: the workflow trusts only itself (browser-task.ts `trusted`).
 */
export interface SessionRecord {
  /** BrowserAI's task: null until the create answers. */
  executionId: string | null;
  createdAtMs: number | null;
  /** BrowserAI's status as last seen; the category (running, awaiting, ended) is derived from it. */
  status: string;
  started: string | null;
  estimatedCompletion: string | null;
  /** When the first run started: the overall timeout counts from here across runs. */
  startedAtMs: number;
  /** Instructions and codes not sent yet, in arrival order (the outbox's queue at hand-over). */
  pending: OutgoingInstructions[];
  completeRequested: boolean;
  /** When the current wait for input began: the awaiting timeout counts from here across runs. */
  awaitingSinceMs: number | null;
  unconfirmedInput: UnconfirmedInput | null;
  /**
   * The last `result` BrowserAI showed (cut to the result budget): a task stopped by `complete` may
   * have nothing in its results, so its outcome reports this. Carried, since a continued run that
   * awaits input does not poll before `complete` stops the task.
   */
  result?: unknown;
  /**
   * The task's kind while its run says something about the kind: from the create until input is
   * sent or the task awaits (a wait for a person is no part of how long the kind runs).
   */
  kind: string | null;
  /** When the task was created or last got input: where the poll expects its end to lie on the clock. */
  phaseStartedAtMs: number | null;
  /** `GET /tasks/{id}` polls of the task, over all runs (the polls-per-task metric). */
  polls: number;
  codes: CodeRecord;
  /** The input requests so far, the codes BrowserAI refused in a row, the TOTP steps typed. */
  requests: InputRequestRecord;
  /** The task's fleet slot, under a fleet limit: waited for, then held until the ending releases it. */
  slot?: FleetSlot | null;
  /** The inbox's messages to a task with a codeRecipient, and the recipient's workflow it joined; absent in runs from before. */
  inbox?: InboxRecord;
}

/** A fleet slot: the limiter that keeps it, and the wait for it while it is not held yet. */
export interface FleetSlot {
  limiterId: string;
  held: boolean;
  /** While waiting: when the wait began, and the place in line the limiter gave then. */
  waitingSinceMs: number | null;
  position: number | null;
}

/** The record a continued run starts from: the task exists by then. */
export type CarriedState = SessionRecord & { executionId: string };

/** Input was sent; until BrowserAI shows it took it, an `awaiting` may be the state from before. */
export interface UnconfirmedInput {
  trustedFromMs: number;
}

/** A session's record before anything happened: the workflow's first run. */
export function newRecord(startedAtMs: number): SessionRecord {
  return {
    executionId: null,
    createdAtMs: null,
    status: 'starting',
    started: null,
    estimatedCompletion: null,
    startedAtMs,
    pending: [],
    completeRequested: false,
    awaitingSinceMs: null,
    unconfirmedInput: null,
    kind: null,
    phaseStartedAtMs: null,
    polls: 0,
    codes: { received: [], typed: [] },
    requests: newInputRequestRecord(),
  };
}
