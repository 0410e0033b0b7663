// How a task session ends: the one place that decides it. Whatever ends the workflow — the task's
// own end, a cancel, a timeout, a failure BrowserAI answered, an answer nobody understands, a bug
// in this code — it passes here, and a task that may still be running gets its stop first.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  TimeoutFailure,
} from '@temporalio/workflow';
import { isFailedStatus } from '../../contract/status';
import { FailureType } from '../../contract/errors';
import type { BrowserTaskResult } from '../../contract/input';
import { failureType, rootFailure } from './failures';
import type { TaskSession } from './task-session';
import { outcomeOfFailure, outcomeOfStatus, recordTaskEnded } from './metrics';

/**
 * Runs the session's story and ends it. The result is the task's outcome; every failure carries
 * the outcome so far (with `stopConfirmed` when a stop was sent) as its first detail.
 */
export async function endSession(
  session: TaskSession,
  story: () => Promise<BrowserTaskResult>,
): Promise<BrowserTaskResult> {
  let outcome: BrowserTaskResult;
  try {
    outcome = await story();
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err; // not an ending: the next run carries the session
    throw await endEarly(session, err);
  }
  const ended = outcomeOfStatus(outcome.status);
  await CancellationScope.nonCancellable(() => session.fleetSlot.release());
  await CancellationScope.nonCancellable(() => session.inbox.leave());
  await CancellationScope.nonCancellable(() =>
    session.finish({
      // A stop of our own on this path is `complete`'s; a task stopped elsewhere was cancelled there.
      outcome:
        ended === 'failed'
          ? 'failed'
          : ended === 'completed' || (ended === 'stopped' && session.stopSent)
            ? 'completed'
            : 'cancelled',
      status: outcome.status,
      ...(ended === 'failed' ? { failureType: FailureType.BrowserAITaskFailed } : {}),
    }),
  );
  await settleHandlers(session);
  recordTaskEnded(ended, session.polls);
  if (isFailedStatus(outcome.status)) {
    throw ApplicationFailure.create({
      type: FailureType.BrowserAITaskFailed,
      nonRetryable: true,
      message: `BrowserAI task ${outcome.executionId} failed: ${outcome.error ?? 'BrowserAI gave no error message'}`,
      details: [outcome],
    });
  }
  return outcome;
}

/** Stops what may still run, keeps what the task produced, and returns the failure to end with. */
async function endEarly(session: TaskSession, err: unknown): Promise<unknown> {
  const cancelled = isCancellation(err);
  const reason = cancelled ? 'workflow cancelled' : describe(err);
  // Counted now, in the workflow task that learned of the ending (it schedules the stop), not in
  // the one that closes the workflow: a closing workflow task that the server refuses because an
  // event arrived meanwhile (a cancelled poll reporting back) runs again, live, and would count twice.
  const failure = cancelled ? undefined : asFailure(err);
  const type = failure?.type ?? undefined;
  recordTaskEnded(outcomeOfFailure(cancelled, type), session.polls, type);
  const soFar = await CancellationScope.nonCancellable(async () => {
    await session.stop(reason);
    // Stopped (or never created): the next task in line may start.
    await session.fleetSlot.release();
    await session.inbox.leave();
    const results = session.executionId ? await session.resultsSoFar() : null;
    const timedOut = outcomeOfFailure(cancelled, type) === 'timed_out';
    await session.finish({
      outcome: cancelled ? 'cancelled' : timedOut ? 'timed_out' : 'failed',
      status: results?.status ?? session.status,
      ...(type ? { failureType: type } : {}),
    });
    return results;
  });
  await settleHandlers(session);
  // A cancelled workflow ends cancelled; its outcome so far is in the `state` query.
  if (!failure) return err;
  return ApplicationFailure.create({
    type: failure.type ?? undefined,
    message: failure.message,
    nonRetryable: true,
    details: soFar ? [soFar] : (failure.details ?? undefined),
    cause: failure === err ? undefined : (err as Error),
  });
}

/** Updates waiting for sends that will never happen get a clear answer before the workflow closes. */
async function settleHandlers(session: TaskSession): Promise<void> {
  session.outbox.refuseRemaining(session.taskEnded());
  await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
}

/**
 * The typed failure the workflow ends with. An activity's typed failure (AmbiguousRequest,
 * Unauthorized, MalformedAnswer...) becomes the workflow's own, so callers read its stable `type`
 * at `WorkflowFailedError.cause.type`. Anything that is not a typed failure is a bug in this
 * code: it ends the workflow as `UnexpectedError` rather than retrying the workflow task forever
 * with the task left running.
 */
function asFailure(err: unknown): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) return err.cause;
  // An activity that ran out of time on every attempt (BrowserAI unreachable for minutes).
  if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure) {
    return ApplicationFailure.create({
      type: FailureType.Timeout,
      nonRetryable: true,
      message: `${err.activityType} did not finish in time (${err.cause.message}). Check that the worker reaches BrowserAI (BROWSERAI_BASE_URL, network).`,
    });
  }
  const root = rootFailure(err);
  log.error('browserTask hit an unexpected error; the task was stopped and the workflow fails', {
    error: root.message,
  });
  return ApplicationFailure.create({
    type: FailureType.UnexpectedError,
    nonRetryable: true,
    message: `browserTask hit an unexpected error (${root.name}: ${root.message}). The BrowserAI task was stopped. Please report this with the workflow's history.`,
  });
}

function describe(err: unknown): string {
  return failureType(err) ?? 'unexpected error';
}
