import { ApplicationFailure, Context } from '@temporalio/activity';
import { isBrowserAIError } from '../browserai';
import { FailureType } from '../errors';
import { toActivityFailure } from './failures';

/**
 * What an attempt of a non-idempotent activity leaves behind in its heartbeat for the next one.
 * `not-sent` names its attempt: Temporal hands the last heartbeat to every later attempt, and
 * a record from two attempts ago says nothing about the attempt in between.
 */
type DeliveryRecord<T> = { phase: 'delivered'; answer: T } | { phase: 'not-sent'; attempt: number };

export type Delivery = 'at-most-once' | 'at-least-once';

/**
 * Sends a request BrowserAI must not receive twice (create a task, type a one-time code).
 * BrowserAI has no idempotency keys, so the guarantee comes from the activity's heartbeats:
 * - the answer is heartbeated the moment it arrives, so an attempt that dies before reporting
 *   completion (worker crash) hands the answer to the next attempt instead of sending again;
 * - an attempt that fails knowing the request never got through records that, so the next attempt
 *   (and only that one) may send;
 * Each attempt heartbeats at most once, and the first heartbeat of an attempt is sent at once,
 * so no record waits behind the SDK's heartbeat throttling.
 * - any other retry cannot know whether the last attempt's request got through, and neither can
 *   a request whose answer was lost (timeout, reset, 5xx): those fail with `AmbiguousRequest`
 *   unless the caller chose at-least-once delivery.
 */
export async function deliverOnce<T>(what: string, delivery: Delivery, send: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const previous = ctx.info.heartbeatDetails as DeliveryRecord<T> | undefined;
  if (previous?.phase === 'delivered') return previous.answer;
  const previousNotSent = previous?.phase === 'not-sent' && previous.attempt === ctx.info.attempt - 1;
  if (ctx.info.attempt > 1 && !previousNotSent && delivery === 'at-most-once') {
    throw ambiguous(`${what}: attempt ${ctx.info.attempt - 1} ended without recording whether its request reached BrowserAI (the worker may have crashed mid-request).`);
  }
  try {
    const answer = await send(ctx.cancellationSignal);
    ctx.heartbeat({ phase: 'delivered', answer } satisfies DeliveryRecord<T>);
    return answer;
  } catch (err) {
    if (isBrowserAIError(err) && !err.mayHaveReachedServer) {
      ctx.heartbeat({ phase: 'not-sent', attempt: ctx.info.attempt } satisfies DeliveryRecord<T>);
    } else if (isBrowserAIError(err) && err.kind !== 'Aborted' && delivery === 'at-most-once') {
      throw ambiguous(`${what}: ${err.message}`);
    }
    throw toActivityFailure(err);
  }
}

function ambiguous(reason: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `${reason} BrowserAI may or may not have acted on it, and repeating it could start a second task or type an instruction twice. ` +
      'Check the BrowserAI dashboard for the project: if nothing was created, start the workflow again; ' +
      "to accept duplicates instead, start it with delivery: 'at-least-once'.",
    FailureType.AmbiguousRequest,
  );
}
