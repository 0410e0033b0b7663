import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { isBrowserAIError, type BrowserAIClient } from '../browserai';
import { categorize } from '../contract/status';
import { FailureType } from '../contract/errors';
import { toActivityFailure } from './failures';
import { ENDED_TASK_REFUSALS } from './instruction-refusal';
import type { StopTaskInput, StopTaskOutput } from '../contract/activity-types';

/**
 * Sends `stop` and says whether the task is now known not to run. BrowserAI documents no answer
 * for a stop of a task that has already ended (no 409 in any version: it may be 400 or 404), so a
 * refused stop is settled by looking at the task's status, never by the status code alone.
 *
 * Every failure is retryable: the workflow bounds the retries by a long window
 * (`stopRetryWindowMs`), because a task left running costs the user money. A token that was
 * revoked meanwhile (401) may be fixed within that window.
 */
export async function stopTask(client: BrowserAIClient, input: StopTaskInput): Promise<StopTaskOutput> {
  const ctx = Context.current();
  return stopOnce(client, input, { attempt: ctx.info.attempt, signal: ctx.cancellationSignal });
}

/**
 * A retry may follow a stop that BrowserAI took but whose answer was lost, so it looks at the task
 * before it sends another. A look that fails is retried rather than taken as "still running" (a
 * second stop for one cancel), but only this many times in a row: a broken `GET` must not keep a
 * working stop from being sent.
 */
const LOOKS_BEFORE_STOPPING_BLIND = 3;

/** One try of {@link stopTask}: the outcome, or a retryable failure. */
async function stopOnce(
  client: BrowserAIClient,
  input: StopTaskInput,
  { attempt, signal }: { attempt: number; signal?: AbortSignal },
): Promise<StopTaskOutput> {
  if (attempt > 1) {
    let seen;
    try {
      seen = await client.getTask(input.executionId, { signal });
    } catch (err) {
      if (attempt <= LOOKS_BEFORE_STOPPING_BLIND) throw retryable(err);
    }
    if (seen && categorize(seen.status) === 'ended') return { outcome: 'already-ended', status: seen.status };
  }
  try {
    await client.stopTask(input.executionId, { signal });
    return { outcome: 'stopped' };
  } catch (err) {
    if (!isBrowserAIError(err) || !ENDED_TASK_REFUSALS.includes(err.kind)) throw retryable(err);
  }
  // Refused: either the task has ended (nothing to stop) or it is not visible yet.
  try {
    const task = await client.getTask(input.executionId, { signal });
    if (categorize(task.status) === 'ended') return { outcome: 'already-ended', status: task.status };
    throw ApplicationFailure.retryable(
      `BrowserAI refused to stop ${input.executionId} while it is "${task.status}"; retrying.`,
      FailureType.Conflict,
    );
  } catch (err) {
    if (isBrowserAIError(err) && err.kind === 'TaskNotFound') {
      // Right after a create the task may not be visible yet: a stop must not give up then.
      if (Date.now() < input.notFoundRetryUntilMs) {
        throw ApplicationFailure.retryable(
          `BrowserAI does not know ${input.executionId} yet (just created); retrying the stop.`,
          FailureType.TaskNotFound,
        );
      }
      // Neither stopped nor seen ended: the caller must not count it as stopped.
      return { outcome: 'not-found' };
    }
    throw retryable(err);
  }
}

/**
 * Stops a task whose create was answered after its attempt gave up: only this worker knows its ID,
 * so the worker retries the stop with backoff (1 s doubling to 1 min) for the workflow's stop
 * window, as Temporal retries every other stop. It runs in the background of the worker process:
 * a worker that exits within the window takes the retries with it (logged at each failure).
 */
export async function stopLateTask(client: BrowserAIClient, executionId: string, windowMs: number): Promise<void> {
  const startedAt = Date.now();
  const input = { executionId, notFoundRetryUntilMs: startedAt + LATE_NOT_FOUND_GRACE_MS };
  log.warn(`A create answered after its attempt gave up; stopping the task it started (retried for ${windowMs} ms)`, {
    executionId,
  });
  let delayMs = 1_000;
  for (let attempt = 1; ; attempt++) {
    let problem: string;
    try {
      const { outcome } = await stopOnce(client, input, { attempt });
      if (outcome !== 'not-found') {
        log.info('Stopped the task of a late create answer', { executionId, outcome, attempts: attempt });
        return;
      }
      problem = 'BrowserAI answers that it does not know the task';
    } catch (err) {
      problem = err instanceof Error ? err.message : String(err);
      if (Date.now() + delayMs < startedAt + windowMs) {
        log.warn(`Stopping the task of a late create answer failed (attempt ${attempt}); retrying`, {
          executionId,
          error: problem,
        });
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        delayMs = Math.min(delayMs * 2, 60_000);
        continue;
      }
    }
    log.error(
      `Could not stop BrowserAI task ${executionId}, created by a create answered after its attempt gave up (${problem}). ` +
        'It may still be running and costing money: stop it from the BrowserAI dashboard, ' +
        'and check BROWSERAI_API_TOKEN and the network between the worker and BrowserAI.',
      { executionId },
    );
    return;
  }
}

/** As the default of the workflow's `polling.notFoundGraceMs`: right after a create, "not found" means "not visible yet". */
const LATE_NOT_FOUND_GRACE_MS = 30_000;

function retryable(err: unknown): Error {
  return err instanceof ApplicationFailure ? err : toActivityFailure(err, { alwaysRetryable: true });
}
