import type { BrowserAIClient } from '../browserai';
import { fitResults } from './trim';
import type { TaskResultsSummary } from './types';

/** `GET /results/{id}`, cut to fit in workflow history. Shared by getResults and the poll that sees a task end. */
export async function readResults(client: BrowserAIClient, executionId: string, maxBytes: number, signal?: AbortSignal): Promise<TaskResultsSummary> {
  const answer = await client.getResults(executionId, { signal });
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
