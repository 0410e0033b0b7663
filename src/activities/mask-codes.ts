import { BrowserAIError, isBrowserAIError, redactCodes, redactCodesDeep } from '../browserai';

/**
 * An answer with the task's one-time codes masked (a log line may echo a typed code), before
 * anything cuts it: where a code stands as a word, with or without its separators (redactCodes). The client has already masked credentials in every answer; a task sent no
 * code needs no second pass over an answer that may be megabytes, polled every few seconds.
 */
export function maskCodes<T>(answer: T, codes: readonly string[] | undefined): T {
  return codes && codes.length > 0 ? redactCodesDeep(answer, codes) : answer;
}

/**
 * A send's failure with the task's codes masked: BrowserAI's error text (a 400 "Invalid input: ...")
 * may quote the instructions it was sent, and the failure goes to history, the logs and the UI.
 */
export function maskCodesInFailure(err: unknown, codes: readonly string[] | undefined): unknown {
  if (!codes || codes.length === 0 || !isBrowserAIError(err)) return err;
  return new BrowserAIError({
    ...err,
    message: redactCodes(err.message, codes),
    apiMessage: err.apiMessage === undefined ? undefined : redactCodes(err.apiMessage, codes),
  });
}
