// When to poll next. Three sources of knowledge, best first:
// - an estimate (`estimatedCompletion`, when BrowserAI gives one): sleep towards it, poll just
//   after it, then back off while the task overruns;
// - an expected end window (task-durations.ts: where tasks of this kind ended before, or the
//   prior for a new kind): a few early looks (a task can fail fast), dense looks across the
//   window and a little past it, backoff after that;
// - neither: plain geometric backoff.
import type { EndWindow } from './task-durations';

export interface PollSchedule {
  initialIntervalMs: number;
  maxIntervalMs: number;
  /** Wanted mean time from the task's end to a poll seeing it: looks in the window are twice this apart. */
  targetDetectionMs: number;
}

/** What is known of when the task ends, in epoch milliseconds. */
export interface EndKnowledge {
  estimatedCompletionMs?: number;
  /** The window, placed on the clock: `startedAtMs` is when the task (or its last input) started. */
  window?: EndWindow & { startedAtMs: number };
}

/** Polls land this long after the estimate, so they see the task's end rather than its last moment. */
export const ETA_GRACE_MS = 250;
const BACKOFF = 1.5;
/** However wide the window, at most about this many looks across it: a vague window is looked at more sparsely. */
const LOOKS_PER_WINDOW = 20;
/**
 * Before a window learned from the task's own kind, one early look halfway to it: tasks of the
 * kind never ended sooner, but one may fail fast. Before a window that is only a guess (the
 * prior, for a kind not seen yet), looks start at the initial interval and grow ×3 (1, 3, 9 s),
 * so a short task of a new kind is found within a few seconds and a long one costs few looks.
 */
const FIRST_EARLY_LOOK = 0.5;
const EARLY_GROWTH = 3;
/**
 * After a learned window, looks go on at the window's spacing for half its width before backing
 * off: the next run of a kind falls just outside its last 8 about one time in five, and backoff
 * there would find it seconds late.
 */
const TAIL_SHARE = 0.5;

export function nextPollDelay(
  schedule: PollSchedule,
  currentIntervalMs: number,
  knowledge: EndKnowledge,
  now: number,
): { delayMs: number; nextIntervalMs: number } {
  const { initialIntervalMs, maxIntervalMs } = schedule;
  const { estimatedCompletionMs, window } = knowledge;
  if (estimatedCompletionMs !== undefined) {
    const untilEta = estimatedCompletionMs + ETA_GRACE_MS - now;
    if (untilEta > initialIntervalMs) {
      // A sleep capped at the maximum must not leave a remainder shorter than the initial
      // interval: that remainder would be polled a whole interval late, after the task ended.
      const delayMs = untilEta - maxIntervalMs < 2 * initialIntervalMs ? untilEta : maxIntervalMs;
      return { delayMs, nextIntervalMs: initialIntervalMs };
    }
  } else if (window) {
    const planned = inWindow(schedule, window, now);
    if (planned) return planned;
  }
  const delayMs = Math.min(maxIntervalMs, Math.max(initialIntervalMs, currentIntervalMs));
  return { delayMs, nextIntervalMs: Math.min(maxIntervalMs, delayMs * BACKOFF) };
}

/** The next look before or inside the window; undefined once the task overran it (then: backoff from the window's spacing). */
function inWindow(schedule: PollSchedule, window: NonNullable<EndKnowledge['window']>, now: number) {
  const { initialIntervalMs, maxIntervalMs, targetDetectionMs } = schedule;
  const elapsed = now - window.startedAtMs;
  const spacing = Math.min(
    maxIntervalMs,
    Math.max(initialIntervalMs, 2 * targetDetectionMs, (window.toMs - window.fromMs) / LOOKS_PER_WINDOW),
  );
  if (elapsed < window.fromMs) {
    // Early looks grow their distance from the start, landing on the window's opening.
    const next = Math.max(
      elapsed + initialIntervalMs,
      EARLY_GROWTH * elapsed,
      window.basis === 'kind' ? window.fromMs * FIRST_EARLY_LOOK : 0,
    );
    const delayMs = Math.min(window.fromMs - elapsed, next - elapsed, maxIntervalMs);
    return { delayMs: Math.max(delayMs, 0), nextIntervalMs: spacing };
  }
  // The last look inside lands on the window's end: a window narrower than the spacing (a kind
  // that always runs 2 s) is looked at on both edges, not once at its opening and again 2 s on.
  if (elapsed < window.toMs) return { delayMs: Math.min(spacing, window.toMs - elapsed), nextIntervalMs: spacing };
  const tailMs = window.basis === 'kind' ? TAIL_SHARE * (window.toMs - window.fromMs) : 0;
  if (elapsed <= window.toMs + tailMs) return { delayMs: spacing, nextIntervalMs: spacing };
  return undefined;
}

export function parseTime(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
