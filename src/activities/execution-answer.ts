import type { InstructionsAnswer, TaskExecution } from '../browserai';
import type { TaskExecutionAnswer } from '../contract/activity-types';

/**
 * What the workflow needs of a create or instructions answer, and all that an at-most-once send
 * heartbeats: an answer may carry any other field, of any size (a heartbeat over the limit loses
 * the attempt, and the task it created is left running). The client has already checked and cut
 * these fields: a usable executionId, a status that is non-empty or null, short texts.
 */
export function executionAnswer(answer: TaskExecution | InstructionsAnswer): TaskExecutionAnswer {
  return {
    executionId: answer.executionId,
    status: answer.status,
    started: answer.started ?? null,
    estimatedCompletion: answer.estimatedCompletion ?? null,
    scriptType: answer.scriptType,
  };
}
