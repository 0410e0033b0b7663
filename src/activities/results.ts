import type { BrowserAIClient } from '../browserai';
import { maskCodes, maskCodesInFailure } from './mask-codes';
import { fitResults } from './trim';
import type { TaskResultsSummary } from '../contract/activity-types';

/**
 * `GET /results/{id}` with the task's one-time codes masked (before any cut, so no part of one
 * survives), cut to fit in workflow history. Shared by getResults and the poll that sees a task end.
 */
export async function readResults(
  client: BrowserAIClient,
  task: { executionId: string; codes?: string[] },
  maxBytes: number,
  signal?: AbortSignal,
  timeoutMs?: number,
): Promise<TaskResultsSummary> {
  const { executionId } = task;
  const answer = maskCodes(
    await client.getResults(executionId, { signal, ...(timeoutMs ? { timeoutMs } : {}) }).catch((err: unknown) => {
      throw maskCodesInFailure(err, task.codes);
    }),
    task.codes,
  );
  const { results, trimmed } = fitResults(answer.results, maxBytes);
  return {
    executionId: answer.executionId ?? executionId,
    status: answer.status,
    started: answer.started ?? null,
    completed: answer.completed ?? null,
    results,
    ...(trimmed ? { trimmed } : {}),
  };
}
