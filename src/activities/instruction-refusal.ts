import { ApplicationFailure } from '@temporalio/activity';
import { isBrowserAIError, type BrowserAIClient } from '../browserai';
import { FailureType } from '../contract/errors';
import { categorize, normalizeStatus } from '../contract/status';

/**
 * The refusals BrowserAI may answer an instruction or a stop for a task that has ended with: none
 * is documented (a 400, 404 or 409), so each is settled by reading the task's status.
 */
export const ENDED_TASK_REFUSALS: readonly string[] = ['Conflict', 'InvalidInput', 'InvalidCommand', 'TaskNotFound'];

/**
 * What a failed append or replace means for its caller. BrowserAI documents no answer for
 * instructions sent to a task that has ended (no version documents a 409; it may be a 400 or a
 * 404), so a refusal is settled by looking at the task: if it has ended, the send fails
 * `TaskEnded`, as the workflow refuses instructions once it knows of the end. Otherwise, or if
 * the look fails, BrowserAI's own refusal stands.
 */
export async function instructionRefusal(
  client: BrowserAIClient,
  executionId: string,
  err: unknown,
  signal?: AbortSignal,
): Promise<unknown> {
  if (!isBrowserAIError(err) || !ENDED_TASK_REFUSALS.includes(err.kind)) return err;
  let status: unknown;
  try {
    status = (await client.getTask(executionId, { signal })).status;
  } catch {
    return err;
  }
  if (categorize(status) !== 'ended') return err;
  return ApplicationFailure.nonRetryable(
    `BrowserAI task ${executionId} has ended (${normalizeStatus(status)}); it takes no more instructions.`,
    FailureType.TaskEnded,
  );
}
