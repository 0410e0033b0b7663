// The activities a task session calls, each with the timeouts and retries its kind of call needs.
// Workflows import activity types only; the implementations live in src/activities. The caller's
// `activityOptions` choose where they run (task queue, priority, fairness) and how fast retries
// come, never how many: the attempt limits are part of what the session guarantees.
import { proxyActivities, type ActivityOptions, type RetryPolicy } from '@temporalio/workflow';
import type { BrowserAIActivities } from '../../activities';
import { fairnessKeyOf, type BrowserTaskInput } from '../../contract/input';

/** A TOTP attempt that only computes and sends: a send's time (request timeout 30 s and the time to record the answer). */
export const TOTP_SEND_TIMEOUT_MS = 60_000;

export function sessionActivities(input: Pick<BrowserTaskInput, 'project' | 'activityOptions'>) {
  const { taskQueue, priorityKey, fairnessWeight, retry: pacing } = input.activityOptions ?? {};
  const priority = {
    fairnessKey: fairnessKeyOf(input),
    ...(priorityKey ? { priorityKey } : {}),
    ...(fairnessWeight ? { fairnessWeight } : {}),
  };
  const placed = (options: ActivityOptions): ActivityOptions => ({
    ...options,
    ...(taskQueue ? { taskQueue } : {}),
    priority,
    retry: paced(options.retry!),
  });
  const paced = (retry: RetryPolicy): RetryPolicy => ({
    ...retry,
    ...(pacing?.initialIntervalMs ? { initialInterval: pacing.initialIntervalMs } : {}),
    ...(pacing?.maximumIntervalMs ? { maximumInterval: pacing.maximumIntervalMs } : {}),
    ...(pacing?.backoffCoefficient ? { backoffCoefficient: pacing.backoffCoefficient } : {}),
  });

  /**
   * Create, append, replace. Each attempt is at-most-once (deliverOnce), so a retry only sends
   * again where the request provably never reached BrowserAI, or the caller chose at-least-once.
   * One minute covers the request timeout (30 s) and the time to record the answer.
   */
  const sends = proxyActivities<BrowserAIActivities>(
    placed({
      startToCloseTimeout: '1 minute',
      retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
    }),
  );

  /** Results are an idempotent read: retried for a few minutes; without them the outcome still stands. */
  const reads = proxyActivities<BrowserAIActivities>(
    placed({
      startToCloseTimeout: '2 minutes',
      retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
    }),
  );

  /**
   * Polls are idempotent: retried for as long as the task's deadline allows (each call sets its
   * schedule-to-close timeout and heartbeat timeout). The first retry comes after 1 s: a poll
   * timed out by its heartbeat (a dead worker, a result lost in a Temporal outage) has already
   * waited the heartbeat timeout, and recovery is promised within it.
   */
  const polls = proxyActivities<BrowserAIActivities>(
    placed({
      startToCloseTimeout: '2 hours',
      retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '2 minutes' },
    }),
  );

  /**
   * The stop is retried with backoff for the whole stop window (each call sets its schedule-to-close
   * timeout to `stopRetryWindowMs`): a task left running costs the user money, so no attempt limit.
   */
  const stops = proxyActivities<BrowserAIActivities>(
    placed({
      startToCloseTimeout: '1 minute',
      retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1 minute' },
    }),
  );

  /**
   * A TOTP code: like an append (at most once). Workflows started before patch
   * `totp-wait-in-workflow` call an activity that first waits up to one time step (30 s by default)
   * for a code that is not about to expire, so it gets two minutes per attempt; newer ones wait
   * with a timer and give each attempt TOTP_SEND_TIMEOUT_MS.
   */
  const totp = proxyActivities<BrowserAIActivities>(
    placed({
      startToCloseTimeout: '2 minutes',
      retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
    }),
  );

  return {
    createTask: sends.browserAICreateTask,
    typeTotpCode: totp.browserAITypeTotpCode,
    appendInstructions: sends.browserAIAppendInstructions,
    replaceInstructions: sends.browserAIReplaceInstructions,
    getResults: reads.browserAIGetResults,
    pollTask: polls.browserAIPollTask,
    stopTask: stops.browserAIStopTask,
  };
}

export type SessionActivities = ReturnType<typeof sessionActivities>;
