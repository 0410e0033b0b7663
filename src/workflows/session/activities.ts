// The activities a task session calls, each with the timeouts and retries its kind of call needs.
// Workflows import activity types only; the implementations live in src/activities.
import { proxyActivities } from '@temporalio/workflow';
import type { BrowserAIActivities } from '../../activities';

/**
 * Create, append, replace. Each attempt is at-most-once (deliverOnce), so a retry only sends
 * again where the request provably never reached BrowserAI, or the caller chose at-least-once.
 * One minute covers the request timeout (30 s) and the time to record the answer.
 */
export const { createTask, appendInstructions, replaceInstructions } = proxyActivities<BrowserAIActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

/** Results are an idempotent read: retried for a few minutes; without them the outcome still stands. */
export const { getResults } = proxyActivities<BrowserAIActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * Polls are idempotent: retried for as long as the task's deadline allows (each call sets its
 * schedule-to-close timeout and heartbeat timeout).
 */
export const { pollTask } = proxyActivities<BrowserAIActivities>({
  startToCloseTimeout: '2 hours',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '2 minutes' },
});

/**
 * The stop is retried with backoff for the whole stop window (each call sets its schedule-to-close
 * timeout to `stopRetryWindowMs`): a task left running costs the user money, so no attempt limit.
 */
export const { stopTask } = proxyActivities<BrowserAIActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
