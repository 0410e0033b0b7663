// The checks of `nextInputRequest`'s message, beside the messages (messages.ts): the client checks
// before it sends, and the update's validator checks again, with the same bounds. A file of its own:
// the workflows entry re-exports messages.ts, and every function there would be a workflow.
import { isPlainObject } from './text';

/** The problems of `nextInputRequest`'s `after`: absent, or the sequence number of a request already seen. */
export function afterProblems(after: unknown): string[] {
  return after === undefined || (Number.isInteger(after) && (after as number) >= 0)
    ? []
    : [`after must be a sequence number (an integer >= 0, got ${JSON.stringify(after)})`];
}

/**
 * How long one `nextInputRequest` update waits at most before it answers `continued` (ask again),
 * and the shortest wait a caller may ask for: a caller that went away (a Ctrl-C, a restarted
 * service, a client timeout) holds one of the few updates a task may have in flight for at most
 * this long. Every answer is one update (one billed action): 12 an hour for a caller who waits on.
 */
export const INPUT_WAIT_MS = { max: 5 * 60_000, min: 1_000 } as const;

/**
 * The most `nextInputRequest` updates a task keeps waiting at once. Temporal admits 10 updates in
 * flight per workflow (`limit.workflowExecution.maxInFlightUpdates`, also Temporal Cloud's):
 * the other 5 stay free for `addInstructions` and `executionId`.
 */
export const MAX_INPUT_WAITERS = 5;

/** The problems of a `nextInputRequest` message, read as the update's validator reads it (no object: no fields). */
export function nextInputRequestProblems(message: unknown): string[] {
  const { after, waitMs } = isPlainObject(message) ? message : {};
  const problems = afterProblems(after);
  if (
    waitMs !== undefined &&
    !(Number.isInteger(waitMs) && (waitMs as number) >= INPUT_WAIT_MS.min && (waitMs as number) <= INPUT_WAIT_MS.max)
  ) {
    problems.push(
      `waitMs must be an integer from ${INPUT_WAIT_MS.min} to ${INPUT_WAIT_MS.max} (how long one update waits before it answers "continued"; got ${JSON.stringify(waitMs)})`,
    );
  }
  return problems;
}
