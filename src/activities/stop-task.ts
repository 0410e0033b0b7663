import { ApplicationFailure, Context } from '@temporalio/activity';
import { isBrowserAIError, type BrowserAIClient } from '../browserai';
import { categorize } from '../browserai/status';
import { FailureType } from '../errors';
import { toActivityFailure } from './failures';
import type { StopTaskInput, StopTaskOutput } from './types';

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
  const signal = ctx.cancellationSignal;
  // A retry may follow a stop that BrowserAI took but whose answer was lost: look before sending another.
  if (ctx.info.attempt > 1) {
    const seen = await client.getTask(input.executionId, { signal }).catch(() => null);
    if (seen && categorize(seen.status) === 'ended') return { outcome: 'already-ended', status: seen.status };
  }
  try {
    await client.stopTask(input.executionId, { signal });
    return { outcome: 'stopped' };
  } catch (err) {
    if (!isBrowserAIError(err) || !['Conflict', 'InvalidCommand', 'InvalidInput', 'TaskNotFound'].includes(err.kind))
      throw retryable(err);
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
      return { outcome: 'not-found' };
    }
    throw retryable(err);
  }
}

function retryable(err: unknown): Error {
  return err instanceof ApplicationFailure ? err : toActivityFailure(err, { alwaysRetryable: true });
}
