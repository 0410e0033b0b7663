import { Context, log } from '@temporalio/activity';
import { isBrowserAIError, type BrowserAIClient } from '../browserai';
import { isUnknownStatus } from '../browserai/status';
import { toActivityFailure } from './failures';
import { nextPollDelay, parseTime } from './poll-schedule';
import { snapshotOf } from './snapshot';
import type { PollTaskInput, PollTaskOutput, TaskSnapshot } from './types';

/** Checkpoint heartbeated on every poll: a retry (on any worker) resumes from it. */
interface PollProgress {
  polls: number;
  intervalMs: number;
  spanStartedAt: number;
  lastSeen?: Pick<TaskSnapshot, 'status' | 'progress' | 'estimatedCompletion'>;
  nextPollAt?: string;
  /** A status other than `awaiting` was seen: BrowserAI took the input it was sent. */
  sawInputTaken?: boolean;
}

// While sleeping towards the next poll, heartbeat at least this often so a dead worker is
// noticed within the heartbeat timeout and cancellation reaches us promptly.
const MIN_HEARTBEAT_GAP_MS = 1_000;

/**
 * Frequent polling inside one long-running activity: many `GET /tasks/{id}` calls cost no
 * history events; the activity returns only when the task changes category (running ->
 * awaiting -> ended) or after `maxSpanMs`, so a task of three hours needs a handful of events.
 */
export async function pollTask(client: BrowserAIClient, input: PollTaskInput): Promise<PollTaskOutput> {
  const ctx = Context.current();
  const resumed = ctx.info.heartbeatDetails as PollProgress | undefined;
  const progress: PollProgress = resumed ?? { polls: 0, intervalMs: input.initialIntervalMs, spanStartedAt: Date.now() };
  const heartbeatGapMs = Math.max(MIN_HEARTBEAT_GAP_MS, (ctx.info.heartbeatTimeoutMs ?? 60_000) / 3);
  let estimatedCompletionMs = parseTime(input.estimatedCompletion);
  const unknownStatuses: string[] = [];

  const sleep = async (wantedMs: number) => {
    // Never past the end of the span: the workflow expects us back by then (its deadline, too).
    const delayMs = Math.min(wantedMs, Math.max(0, progress.spanStartedAt + input.maxSpanMs - Date.now()));
    progress.nextPollAt = new Date(Date.now() + delayMs).toISOString();
    ctx.heartbeat(progress);
    for (let slept = 0; slept < delayMs; slept += heartbeatGapMs) {
      // Rejects with the cancellation at once, whether it is a cancel request or a shutdown.
      await ctx.sleep(Math.min(heartbeatGapMs, delayMs - slept));
      ctx.heartbeat(progress);
    }
  };
  // A retry resumes by looking at once: the attempt before it may have died long ago.
  if (input.sleepFirst && !resumed) {
    const { delayMs, nextIntervalMs } = nextPollDelay(input, progress.intervalMs, estimatedCompletionMs, Date.now());
    progress.intervalMs = nextIntervalMs;
    await sleep(delayMs);
  }

  for (;;) {
    let snapshot: TaskSnapshot;
    try {
      snapshot = snapshotOf(await client.getTask(input.executionId, { signal: ctx.cancellationSignal }));
    } catch (err) {
      ctx.heartbeat(progress);
      // Right after a create, BrowserAI may not know the task yet: keep polling, don't fail.
      if (!(isBrowserAIError(err) && err.kind === 'TaskNotFound' && Date.now() < (input.notFoundRetryUntilMs ?? 0))) throw toActivityFailure(err);
      await sleep(input.initialIntervalMs);
      continue;
    }
    progress.polls++;
    progress.lastSeen = { status: snapshot.status, progress: snapshot.progress, estimatedCompletion: snapshot.estimatedCompletion };
    if (isUnknownStatus(snapshot.status) && !unknownStatuses.includes(snapshot.status)) {
      unknownStatuses.push(snapshot.status);
      log.warn('BrowserAI reported a status this worker does not know; treating it as running', {
        executionId: input.executionId,
        status: snapshot.status,
      });
    }
    if (snapshot.category !== 'awaiting') progress.sawInputTaken = true;
    const staleAwaiting = isStaleAwaiting(input, snapshot, progress);
    const changed = snapshot.category !== input.knownCategory && !staleAwaiting;
    if (changed || Date.now() - progress.spanStartedAt >= input.maxSpanMs) {
      return { snapshot, changed, polls: progress.polls, unknownStatuses };
    }
    estimatedCompletionMs = parseTime(snapshot.estimatedCompletion) ?? estimatedCompletionMs;
    const { delayMs, nextIntervalMs } = nextPollDelay(input, progress.intervalMs, estimatedCompletionMs, Date.now());
    progress.intervalMs = nextIntervalMs;
    // A stale `awaiting` becomes trustworthy at a known moment: look again then, not later.
    await sleep(staleAwaiting ? Math.min(delayMs, Math.max(input.awaitingTrustedFromMs! - Date.now(), 0) + 50) : delayMs);
  }
}

/**
 * `awaiting` read just after instructions were sent may be the state from before BrowserAI took
 * them. It counts once BrowserAI showed another status since (it ran them), or once the settle
 * time passed. Progress lines are no evidence: BrowserAI may log the input's arrival while it
 * still reports the old `awaiting`.
 */
function isStaleAwaiting(input: PollTaskInput, snapshot: TaskSnapshot, progress: PollProgress): boolean {
  if (snapshot.category !== 'awaiting' || input.awaitingTrustedFromMs === undefined || progress.sawInputTaken) return false;
  return Date.now() < input.awaitingTrustedFromMs;
}
