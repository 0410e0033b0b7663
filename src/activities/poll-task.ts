import { Context, log } from '@temporalio/activity';
import { isBrowserAIError, type BrowserAIClient } from '../browserai';
import { isFailedStatus, isUnknownStatus, normalizeStatus } from '../contract/status';
import { toActivityFailure } from './failures';
import { maskCodes, maskCodesInFailure } from './mask-codes';
import { nextPollDelay, parseTime, type EndKnowledge } from './poll-schedule';
import { readResults } from './results';
import { snapshotOf } from './snapshot';
import type { TaskDurations } from './task-durations';
import type { PollTaskInput, PollTaskOutput, TaskResultsSummary, TaskSnapshot } from '../contract/activity-types';

/** Checkpoint heartbeated now and then: a retry (on any worker) resumes from it, and the UI shows it. */
interface PollProgress {
  polls: number;
  intervalMs: number;
  spanStartedAt: number;
  lastSeen?: Pick<TaskSnapshot, 'status' | 'progress' | 'estimatedCompletion'>;
  /** When a poll last saw the task not ended (epoch ms): the lower bound of its end. */
  lastRunningAt?: number;
  nextPollAt?: string;
  /** A status other than `awaiting` was seen: BrowserAI took the input it was sent. */
  sawInputTaken?: boolean;
  /** When this checkpoint was heartbeated, so a reader knows its age. */
  heartbeatAt?: string;
}

/**
 * Heartbeats reach the server (a billed Temporal action each) only when the heartbeat timeout is
 * near: this long before it, and never more often than every 80 % of it (the SDK's own throttle).
 * At the default 55-s timeout that is every 52 s: a live poll is never timed out, a dead one is
 * retried within the timeout, and a poll shorter than 52 s costs no heartbeat at all.
 */
const HEARTBEAT_LEAD_MS = 3_000;
const MIN_HEARTBEAT_SHARE = 0.8;

/**
 * The most the results read may add to the moment between the poll seeing the end and the workflow
 * knowing it (when instructions could still be sent): a slower BrowserAI costs the workflow an
 * activity of its own instead (docs/design/polling.md, "When it returns").
 */
const RESULTS_WITH_END_TIMEOUT_MS = 5_000;

function heartbeatEveryMs(heartbeatTimeoutMs: number): number {
  return Math.max(MIN_HEARTBEAT_SHARE * heartbeatTimeoutMs, heartbeatTimeoutMs - HEARTBEAT_LEAD_MS);
}

export interface PollDependencies {
  client: BrowserAIClient;
  durations: TaskDurations;
  /** The codes to mask in each answer, worked out afresh for every read (a TOTP code changes every step); default `input.codes`. */
  secretCodes?: (input: PollTaskInput) => string[] | undefined;
}

/**
 * Polls `GET /tasks/{id}` inside one long activity until BrowserAI reports a status other than the
 * one the workflow knows (queued -> running -> awaiting -> ended), or `maxSpanMs` passes. Many
 * polls cost no history and no Temporal actions; the workflow hears of every status change within
 * one poll of it. The end comes back at once, with the results when the workflow asks for them
 * (one more request here, rather than an activity of its own: docs/design/polling.md, "When it returns").
 */
export async function pollUntilStatusChanges(deps: PollDependencies, input: PollTaskInput): Promise<PollTaskOutput> {
  const { client, durations } = deps;
  const codesNow = () => (deps.secretCodes ? deps.secretCodes(input) : input.codes);
  const ctx = Context.current();
  const resumed = ctx.info.heartbeatDetails as PollProgress | undefined;
  const progress: PollProgress = resumed ?? {
    polls: 0,
    intervalMs: input.initialIntervalMs,
    spanStartedAt: Date.now(),
    lastRunningAt: Date.now(),
  };
  const heartbeatIntervalMs = heartbeatEveryMs(ctx.info.heartbeatTimeoutMs ?? 600_000);
  let lastHeartbeatAt = Date.now();
  const heartbeatIfDue = () => {
    if (Date.now() - lastHeartbeatAt < heartbeatIntervalMs) return;
    lastHeartbeatAt = Date.now();
    progress.heartbeatAt = new Date(lastHeartbeatAt).toISOString();
    ctx.heartbeat(progress);
  };
  const knowledge: EndKnowledge = { estimatedCompletionMs: parseTime(input.estimatedCompletion) };
  if (input.phaseStartedAtMs !== undefined) {
    knowledge.window = { ...durations.expectedEnd(input.kind), startedAtMs: input.phaseStartedAtMs };
  }
  const unknownStatuses: string[] = [];

  const sleep = async (wantedMs: number) => {
    // Never past the end of the span: the workflow expects us back by then (its deadline, too).
    const delayMs = Math.min(wantedMs, Math.max(0, progress.spanStartedAt + input.maxSpanMs - Date.now()));
    progress.nextPollAt = new Date(Date.now() + delayMs).toISOString();
    const wakeAt = Date.now() + delayMs;
    for (let left = delayMs; left > 0; left = wakeAt - Date.now()) {
      // Rejects with the cancellation at once, whether it is a cancel request or a shutdown.
      await ctx.sleep(Math.min(left, Math.max(1, lastHeartbeatAt + heartbeatIntervalMs - Date.now())));
      heartbeatIfDue();
    }
  };
  const planNext = () => {
    const { delayMs, nextIntervalMs } = nextPollDelay(input, progress.intervalMs, knowledge, Date.now());
    progress.intervalMs = nextIntervalMs;
    return delayMs;
  };
  // A retry resumes by looking at once: the attempt before it may have died long ago.
  if (input.sleepFirst && !resumed) await sleep(planNext());

  for (;;) {
    let snapshot: TaskSnapshot;
    try {
      snapshot = snapshotOf(
        maskCodes(await client.getTask(input.executionId, { signal: ctx.cancellationSignal }), codesNow()),
      );
    } catch (err) {
      // Right after a create, BrowserAI may not know the task yet: keep polling, don't fail.
      if (!(isBrowserAIError(err) && err.kind === 'TaskNotFound' && Date.now() < (input.notFoundRetryUntilMs ?? 0)))
        throw toActivityFailure(maskCodesInFailure(err, codesNow()));
      await sleep(input.initialIntervalMs);
      continue;
    }
    progress.polls++;
    progress.lastSeen = {
      status: snapshot.status,
      progress: snapshot.progress,
      estimatedCompletion: snapshot.estimatedCompletion,
    };
    noteUnknownStatus(snapshot.status, input.executionId, unknownStatuses);
    if (snapshot.category !== 'awaiting') progress.sawInputTaken = true;
    const changed = isNews(input, snapshot, progress);
    if (changed || Date.now() - progress.spanStartedAt >= input.maxSpanMs) {
      const ended = snapshot.category === 'ended';
      const learnedEndMs = ended ? learnDuration(durations, input, snapshot.status, progress) : undefined;
      const results = ended ? await resultsAtTheEnd(client, input, codesNow()) : undefined;
      return {
        snapshot,
        changed,
        polls: progress.polls,
        unknownStatuses,
        ...(learnedEndMs !== undefined ? { learnedEndMs } : {}),
        ...(results ? { results } : {}),
      };
    }
    if (snapshot.category !== 'ended') progress.lastRunningAt = Date.now();
    knowledge.estimatedCompletionMs = parseTime(snapshot.estimatedCompletion) ?? knowledge.estimatedCompletionMs;
    const delayMs = planNext();
    // A stale `awaiting` becomes trustworthy at a known moment: look again then, not later.
    await sleep(
      isStaleAwaiting(input, snapshot, progress)
        ? Math.min(delayMs, Math.max(input.awaitingTrustedFromMs! - Date.now(), 0) + 50)
        : delayMs,
    );
  }
}

/**
 * The results of a task the poll just saw end, when the workflow asked for them: one request more
 * in this activity instead of an activity (a dispatch and a workflow task) of its own. A read that
 * fails, or takes longer than RESULTS_WITH_END_TIMEOUT_MS, returns none, and the workflow reads
 * them itself; a cancellation still cancels.
 */
async function resultsAtTheEnd(
  client: BrowserAIClient,
  input: PollTaskInput,
  codes: string[] | undefined,
): Promise<TaskResultsSummary | undefined> {
  if (input.resultsMaxBytes === undefined) return undefined;
  const ctx = Context.current();
  try {
    return await readResults(
      client,
      { executionId: input.executionId, codes },
      input.resultsMaxBytes,
      ctx.cancellationSignal,
      RESULTS_WITH_END_TIMEOUT_MS,
    );
  } catch (err) {
    if (ctx.cancellationSignal.aborted) throw err;
    log.warn('Could not read the results with the end; the workflow reads them itself', {
      executionId: input.executionId,
      failure: err instanceof Error ? err.message : String(err),
    });
    return undefined;
  }
}

/**
 * Something the workflow does not know yet: a status other than the one it knows, or an
 * `awaiting` that is trustworthy after input was sent (the workflow must wait for more input).
 */
function isNews(input: PollTaskInput, snapshot: TaskSnapshot, progress: PollProgress): boolean {
  if (isStaleAwaiting(input, snapshot, progress)) return false;
  if (normalizeStatus(snapshot.status) !== normalizeStatus(input.knownStatus)) return true;
  return snapshot.category === 'awaiting' && input.awaitingTrustedFromMs !== undefined;
}

/**
 * `awaiting` read just after instructions were sent may be the state from before BrowserAI took
 * them. It counts once BrowserAI showed another status since (it ran them), or once the settle
 * time passed. Progress lines are no evidence: BrowserAI may log the input's arrival while it
 * still reports the old `awaiting`.
 */
function isStaleAwaiting(input: PollTaskInput, snapshot: TaskSnapshot, progress: PollProgress): boolean {
  if (snapshot.category !== 'awaiting' || input.awaitingTrustedFromMs === undefined || progress.sawInputTaken)
    return false;
  return Date.now() < input.awaitingTrustedFromMs;
}

/**
 * A task of a known kind that ran to its end teaches the next ones where to look (a failure or a
 * stop says nothing). Returns where it ended, for the workflow to publish to other workers.
 */
function learnDuration(
  durations: TaskDurations,
  input: PollTaskInput,
  status: string,
  progress: PollProgress,
): number | undefined {
  if (
    input.kind === undefined ||
    input.phaseStartedAtMs === undefined ||
    isFailedStatus(status) ||
    normalizeStatus(status) === 'stopped'
  )
    return undefined;
  const lastRunningAt = Math.max(progress.lastRunningAt ?? progress.spanStartedAt, input.phaseStartedAtMs);
  const sample = { afterMs: lastRunningAt - input.phaseStartedAtMs, byMs: Date.now() - input.phaseStartedAtMs };
  durations.record(input.kind, sample, Context.current().info.workflowExecution?.runId);
  return Math.round((sample.afterMs + sample.byMs) / 2);
}

function noteUnknownStatus(status: string, executionId: string, seen: string[]): void {
  if (!isUnknownStatus(status) || seen.includes(status)) return;
  seen.push(status);
  log.warn('BrowserAI reported a status this worker does not know; treating it as running', { executionId, status });
}
