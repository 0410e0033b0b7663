// When to poll next. BrowserAI's create answer may carry `estimatedCompletion`: before it,
// polling only wastes requests, so we sleep towards it (about the maximum interval at most,
// in case the estimate moves); just after it we poll promptly, then back off geometrically
// while the task overruns. Without an estimate it is plain backoff.

export interface PollSchedule {
  initialIntervalMs: number;
  maxIntervalMs: number;
}

/** Polls land this long after the estimate, so they see the task's end rather than its last moment. */
export const ETA_GRACE_MS = 250;
const BACKOFF = 1.5;

export function nextPollDelay(
  schedule: PollSchedule,
  currentIntervalMs: number,
  estimatedCompletionMs: number | undefined,
  now: number,
): { delayMs: number; nextIntervalMs: number } {
  const { initialIntervalMs, maxIntervalMs } = schedule;
  if (estimatedCompletionMs !== undefined) {
    const untilEta = estimatedCompletionMs + ETA_GRACE_MS - now;
    if (untilEta > initialIntervalMs) {
      // A sleep capped at the maximum must not leave a remainder shorter than the initial
      // interval: that remainder would be polled a whole interval late, after the task ended.
      const delayMs = untilEta - maxIntervalMs < 2 * initialIntervalMs ? untilEta : maxIntervalMs;
      return { delayMs, nextIntervalMs: initialIntervalMs };
    }
  }
  const delayMs = Math.min(maxIntervalMs, Math.max(initialIntervalMs, currentIntervalMs));
  return { delayMs, nextIntervalMs: Math.min(maxIntervalMs, delayMs * BACKOFF) };
}

export function parseTime(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
