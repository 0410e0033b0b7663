import { redactSecretsDeep } from '../browserai';

/**
 * An answer with the task's one-time codes masked (a log line may echo a typed code), before
 * anything cuts it. The client has already masked credentials in every answer; a task sent no
 * code needs no second pass over an answer that may be megabytes, polled every few seconds.
 */
export function maskCodes<T>(answer: T, codes: readonly string[] | undefined): T {
  return codes && codes.length > 0 ? redactSecretsDeep(answer, codes) : answer;
}
