// What the session asks of one poll activity (src/activities/poll-task.ts): how long it may poll,
// what the workflow already knows (so the activity returns only with news), and the timeouts that
// keep its retries within the task's deadline (docs/design/polling.md).
import type { ActivityOptions } from '@temporalio/workflow';
import type { PollTaskInput, TotpMask } from '../../contract/activity-types';
import type { SessionRecord } from './record';
import type { SessionSettings } from './settings';

/**
 * The first poll after a create that answered `queued` (CreatedTask.lookInPoll) returns within this
 * long, the task running or not: the look the create made itself before, without holding back
 * what is signalled meanwhile (the activity's LOOK_AFTER_CREATE_MS).
 */
export const LOOK_AFTER_CREATE_MS = 1_000;

export interface PollAsk {
  /** One look, no waiting: before the awaiting timeout gives up. */
  lookOnce: boolean;
  /** The look a second after a `queued` create (LOOK_AFTER_CREATE_MS). */
  lookAfterCreate: boolean;
  /** Read the results with the end, cut to this many bytes (the session's result budget). */
  resultsMaxBytes: number;
  untilDeadlineMs: number;
  notFoundRetryUntilMs: number;
  toMask: { codes?: string[]; totp?: TotpMask };
}

/** The activity's options and input for the next poll of the task the record holds. */
export function pollRequest(
  record: SessionRecord,
  { polling }: SessionSettings,
  ask: PollAsk,
): [ActivityOptions & { summary: string }, PollTaskInput] {
  const executionId = record.executionId!;
  // The look after a `queued` create returns when its second is up, news or not: until it does,
  // the UI shows nothing of the task (the search attributes wait for the look), and a long queue
  // would otherwise never be shown as `queued`.
  const spanMs = ask.lookOnce
    ? 1
    : Math.max(1, Math.min(ask.lookAfterCreate ? LOOK_AFTER_CREATE_MS : polling.maxSpanMs, ask.untilDeadlineMs));
  const options = {
    summary: ask.lookOnce
      ? `Look at ${executionId} once`
      : ask.lookAfterCreate
        ? `Look at ${executionId} a second after its create`
        : `Poll ${executionId} until it is no longer "${record.status}"`,
    heartbeatTimeout: polling.heartbeatTimeoutMs,
    startToCloseTimeout: spanMs + 2 * polling.maxIntervalMs + 60_000,
    // Retries of a failing poll (BrowserAI down) must not outlive the task's deadline.
    scheduleToCloseTimeout: Math.max(ask.untilDeadlineMs, 0) + 2 * polling.maxIntervalMs + 60_000,
  };
  const input: PollTaskInput = {
    executionId,
    knownStatus: record.status,
    estimatedCompletion: record.estimatedCompletion,
    initialIntervalMs: polling.initialIntervalMs,
    maxIntervalMs: polling.maxIntervalMs,
    targetDetectionMs: polling.targetDetectionMs,
    ...(record.kind ? { kind: record.kind } : {}),
    ...(record.phaseStartedAtMs !== null ? { phaseStartedAtMs: record.phaseStartedAtMs } : {}),
    ...ask.toMask,
    maxSpanMs: spanMs,
    sleepFirst: !ask.lookOnce,
    notFoundRetryUntilMs: ask.notFoundRetryUntilMs,
    awaitingTrustedFromMs: record.unconfirmedInput?.trustedFromMs,
    resultsMaxBytes: ask.resultsMaxBytes,
  };
  return [options, input];
}
