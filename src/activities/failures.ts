import { ApplicationFailure, Context } from '@temporalio/activity';
import { isBrowserAIError, type BrowserAIError } from '../browserai';
import { FailureType, type BrowserAIRequestDetails } from '../contract/errors';

/**
 * The failure an activity throws for an error: typed, retryable only where a retry can help,
 * and a 429 retried no sooner than its Retry-After. An aborted request during cancellation
 * becomes the activity's own cancellation, so Temporal records it as cancelled, not failed.
 * `alwaysRetryable`: for calls whose retries the workflow bounds by time instead (the stop).
 */
export function toActivityFailure(err: unknown, { alwaysRetryable = false } = {}): Error {
  if (!isBrowserAIError(err)) return err instanceof Error ? err : new Error(String(err));
  if (err.kind === 'Aborted') {
    const signal = Context.current().cancellationSignal;
    return signal.aborted && signal.reason instanceof Error
      ? signal.reason
      : ApplicationFailure.retryable(err.message, FailureType.Timeout);
  }
  return ApplicationFailure.create({
    type: err.kind,
    message: err.message,
    nonRetryable: !alwaysRetryable && !err.retryable,
    nextRetryDelay: err.kind === 'RateLimited' ? err.retryAfterMs : undefined,
    details: [errorDetails(err, err.kind)],
  });
}

/** What a caller may want to branch on; never the request itself (its headers hold the token). */
function errorDetails(err: BrowserAIError, kind: BrowserAIRequestDetails['kind']): BrowserAIRequestDetails {
  return {
    kind,
    status: err.status ?? null,
    apiMessage: err.apiMessage ?? null,
    method: err.method,
    path: err.path,
    executionId: err.executionId ?? null,
  };
}
