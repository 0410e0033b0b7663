// A session's settings, resolved once from the input and its defaults: the rest of the session
// reads them here, never the raw input's optional fields.
import type { Delivery } from '../../contract/activity-types';
import { DEFAULTS, resolvePolling, type BrowserTaskInput } from '../../contract/input';

export interface SessionSettings {
  polling: ReturnType<typeof resolvePolling>;
  delivery: Delivery;
  /** The whole task, from the first run's start. */
  timeoutMs: number;
  awaitingInputTimeoutMs: number;
  stopRetryWindowMs: number;
  /** Budget for `results` in history. */
  resultBytes: number;
  /** Codes BrowserAI may refuse in a row for one code form before the task is stopped. */
  maxCodeAttempts: number;
}

export function sessionSettings(input: BrowserTaskInput): SessionSettings {
  return {
    polling: resolvePolling(input.polling),
    delivery: input.delivery ?? DEFAULTS.delivery,
    timeoutMs: input.timeoutMs ?? DEFAULTS.timeoutMs,
    awaitingInputTimeoutMs: input.awaitingInputTimeoutMs ?? DEFAULTS.awaitingInputTimeoutMs,
    stopRetryWindowMs: input.stopRetryWindowMs ?? DEFAULTS.stopRetryWindowMs,
    resultBytes: input.maxResultBytes ?? DEFAULTS.maxResultBytes,
    maxCodeAttempts: input.maxCodeAttempts ?? DEFAULTS.maxCodeAttempts,
  };
}
