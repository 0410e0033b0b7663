import { ApplicationFailure, Context, log, type Info } from '@temporalio/activity';
import { BrowserAIError, isBrowserAIError } from '../browserai';
import type { Delivery } from '../contract/activity-types';
import { FailureType } from '../contract/errors';
import { toActivityFailure } from './failures';

/**
 * What an attempt of a non-idempotent activity leaves behind in its heartbeat for the next one.
 * `not-sent` names its attempt: Temporal hands the last heartbeat to every later attempt, and
 * a record from two attempts ago says nothing about the attempt in between.
 */
type DeliveryRecord<T> = { phase: 'delivered'; answer: T } | { phase: 'not-sent'; attempt: number };

/** An attempt stops waiting this long before Temporal would time it out, so its answer can still be recorded. */
const ATTEMPT_MARGIN_MS = 5_000;
/** How long a request that outlived its attempt is still listened to, so a late answer is not lost. */
export const LATE_ANSWER_WINDOW_MS = 10 * 60_000;

export interface DeliverOptions<T> {
  what: string;
  delivery: Delivery;
  /** The request; it gets a timeout long enough to hear a late answer. */
  send: (timeoutMs: number) => Promise<T>;
  /** What to do with an answer that arrived after this attempt gave up (a created task must be stopped). */
  onLateAnswer: (answer: T) => Promise<void>;
  /** How long this client waits for an answer before it counts as lost. */
  requestTimeoutMs: number;
  /**
   * When this attempt started running (this worker's clock); default: when deliverOnce is called.
   * An activity that waits before it sends (a TOTP code waits for its time step) passes its start.
   */
  attemptStartedAtMs?: number;
}

/**
 * Sends a request BrowserAI must not receive twice (create a task, type a one-time code).
 * BrowserAI has no idempotency keys, so the guarantee comes from the activity's heartbeats:
 * - the answer is heartbeated the moment it arrives, so an attempt that dies before reporting
 *   completion (worker crash) hands the answer to the next attempt instead of sending again;
 * - an attempt that fails knowing the request never got through records that, so the next attempt
 *   (and only that one) may send;
 * - any other retry cannot know whether the last attempt's request got through, and neither can
 *   a request whose answer was lost (timeout, reset, 5xx): those fail with `AmbiguousRequest`
 *   unless the caller chose at-least-once delivery.
 * Each attempt heartbeats at most once, and the first heartbeat of an attempt is sent at once,
 * so no record waits behind the SDK's heartbeat throttling.
 *
 * A request on the wire is never aborted by the activity's cancellation (a worker shutting down
 * lets it finish within its grace time: aborting would make it ambiguous). The attempt stops
 * waiting before Temporal's start-to-close timeout, so an answer is always recorded by a live
 * attempt; a request still unanswered then keeps listening in the background, and an answer that
 * arrives late goes to `onLateAnswer` (a late create is stopped) instead of being dropped.
 */
export async function deliverOnce<T>(options: DeliverOptions<T>): Promise<T> {
  const { what, delivery } = options;
  const attemptStartedAtMs = options.attemptStartedAtMs ?? Date.now();
  const ctx = Context.current();
  const earlier = earlierDelivery<T>(what, delivery);
  if (earlier) return earlier.answer;
  // Start-to-close counts from the attempt's start, not from when it was scheduled: an attempt that
  // waited in the task queue (a burst under a rate limit, slots held by polls) has its whole budget.
  const attemptLeftMs = ctx.info.startToCloseTimeoutMs - (Date.now() - attemptStartedAtMs) - ATTEMPT_MARGIN_MS;
  const waitMs = Math.max(1_000, Math.min(options.requestTimeoutMs, attemptLeftMs));
  try {
    const answer = await answerWithin(options, waitMs);
    ctx.heartbeat({ phase: 'delivered', answer } satisfies DeliveryRecord<T>);
    return answer;
  } catch (err) {
    if (isBrowserAIError(err) && !err.mayHaveReachedServer) {
      ctx.heartbeat(notSent());
    } else if (isBrowserAIError(err) && err.kind === 'MalformedAnswer' && err.executionId) {
      // Not ambiguous: BrowserAI named the task it made, so the workflow can stop it.
    } else if (isBrowserAIError(err) && delivery === 'at-most-once') {
      throw ambiguous(`${what}: ${err.message}`);
    }
    throw toActivityFailure(err);
  }
}

/**
 * What an earlier attempt of this activity delivered: its answer, so this one sends nothing; or
 * undefined when this attempt may send. Throws AmbiguousRequest (at-most-once) when the attempt
 * before ended without recording whether its request got through. A step that must come before
 * the request (a fleet slot's acquire) asks this first: a retry whose create was delivered must not
 * wait for a slot again.
 */
export function earlierDelivery<T>(what: string, delivery: Delivery): { answer: T } | undefined {
  const info = Context.current().info;
  const previous = info.heartbeatDetails as DeliveryRecord<T> | undefined;
  if (previous?.phase === 'delivered') return { answer: previous.answer };
  if (!maySend(info, previous) && delivery === 'at-most-once') {
    throw ambiguous(
      `${what}: attempt ${info.attempt - 1} ended without recording whether its request reached BrowserAI (the worker may have crashed mid-request).`,
    );
  }
  return undefined;
}

/** The answer if it arrives within `waitMs`; otherwise a Timeout, while the request goes on listening for a late answer. */
function answerWithin<T>(options: DeliverOptions<T>, waitMs: number): Promise<T> {
  const request = options.send(Math.max(waitMs, LATE_ANSWER_WINDOW_MS));
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      request.then(
        (late) =>
          options
            .onLateAnswer(late)
            .catch((err: unknown) =>
              log.error(`${options.what}: handling a late answer failed`, { error: String(err) }),
            ),
        () => undefined,
      );
      reject(
        new BrowserAIError({
          kind: 'Timeout',
          mayHaveReachedServer: true,
          method: 'POST',
          path: '',
          message: `BrowserAI did not answer within ${waitMs} ms. The request stays open for ${LATE_ANSWER_WINDOW_MS / 60_000} min: a late answer is handled by this worker (a task created late is stopped).`,
        }),
      );
    }, waitMs);
  });
  return Promise.race([request, gaveUp]).finally(() => clearTimeout(timer));
}

/**
 * The last moment (this worker's clock) an attempt that started at `attemptStartedAtMs` may still
 * send its request and hear the answer before Temporal times the attempt out: what comes before
 * the request (a fleet slot's acquire) must be done by then, or the attempt sends nothing.
 */
export function latestSendMs(attemptStartedAtMs: number, requestTimeoutMs: number): number {
  const usable = Context.current().info.startToCloseTimeoutMs - ATTEMPT_MARGIN_MS;
  return attemptStartedAtMs + Math.max(usable / 2, usable - requestTimeoutMs);
}

/**
 * Runs what must come before the request (a fleet slot's acquire). If it fails, this attempt sent
 * nothing, and that is recorded when the attempt could have sent: otherwise the retry would take
 * the failure for a lost request and end as AmbiguousRequest (a limiter refuses an acquire for a
 * moment while it continues as new). A failure after a delivery leaves the delivery's record.
 */
export async function beforeSending<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const ctx = Context.current();
    if (maySend(ctx.info, ctx.info.heartbeatDetails as DeliveryRecord<unknown> | undefined)) ctx.heartbeat(notSent());
    throw err;
  }
}

/** The first attempt may send; a later one only if the attempt just before it recorded that it sent nothing. */
function maySend(info: Info, previous: DeliveryRecord<unknown> | undefined): boolean {
  return info.attempt === 1 || (previous?.phase === 'not-sent' && previous.attempt === info.attempt - 1);
}

/** The record of an attempt that sent nothing, for the next attempt to read (see deliverOnce). */
export function notSent(): DeliveryRecord<never> {
  return { phase: 'not-sent', attempt: Context.current().info.attempt };
}

function ambiguous(reason: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `${reason} BrowserAI may or may not have acted on it, and repeating it could start a second task or type an instruction twice. ` +
      'Check the BrowserAI dashboard for the project: if nothing was created, start the workflow again; ' +
      "to accept duplicates instead, start it with delivery: 'at-least-once'.",
    FailureType.AmbiguousRequest,
  );
}
