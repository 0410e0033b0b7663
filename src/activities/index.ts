import { Context } from '@temporalio/activity';
import type { BrowserAIClient, CreateSavedTaskRequest, CreateSavedTaskResponse, SavedTask, StopResponse, TaskExecution } from '../browserai';
import { deliverOnce } from './at-most-once';
import { toActivityFailure } from './failures';
import { pollTask } from './poll-task';
import { snapshotOf } from './snapshot';
import { fitResults } from './trim';
import type {
  CreateTaskInput,
  GetResultsInput,
  PollTaskInput,
  SendInstructionsInput,
  TaskExecutionAnswer,
  TaskResultsSummary,
  TaskSnapshot,
} from './types';

export type * from './types';

/**
 * The BrowserAI activities, bound to a client. Workers pass a real client; tests pass one
 * pointed at the emulator. Each activity is one API call (polling aside), so retry policies
 * can be chosen per call in the workflow.
 */
export function createActivities(client: BrowserAIClient) {
  const signal = () => Context.current().cancellationSignal;
  const call = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw toActivityFailure(err);
    }
  };

  return {
    async createTask(input: CreateTaskInput): Promise<TaskExecutionAnswer> {
      const { delivery, ...body } = input;
      const answer = await deliverOnce('Creating the BrowserAI task', delivery, (s) => client.createTask(body, { signal: s }));
      return executionAnswer(answer);
    },

    async appendInstructions(input: SendInstructionsInput): Promise<TaskExecutionAnswer> {
      const { executionId, instructions, awaitable, delivery } = input;
      const answer = await deliverOnce(`Appending instructions to ${executionId}`, delivery, (s) =>
        client.appendInstructions(executionId, { instructions, awaitable }, { signal: s }),
      );
      return executionAnswer(answer);
    },

    // A replace overwrites the whole list, so repeating it is harmless: plain retries.
    async replaceInstructions(input: SendInstructionsInput): Promise<TaskExecutionAnswer> {
      const { executionId, instructions, awaitable } = input;
      return executionAnswer(await call(() => client.replaceInstructions(executionId, { instructions, awaitable }, { signal: signal() })));
    },

    async stopTask(executionId: string): Promise<StopResponse> {
      return call(() => client.stopTask(executionId, { signal: signal() }));
    },

    async getTask(executionId: string): Promise<TaskSnapshot> {
      return snapshotOf(await call(() => client.getTask(executionId, { signal: signal() })));
    },

    async getResults(input: GetResultsInput): Promise<TaskResultsSummary> {
      const answer = await call(() => client.getResults(input.executionId, { signal: signal() }));
      const { results, trimmed } = fitResults(answer.results, input.maxBytes);
      return {
        executionId: answer.executionId ?? input.executionId,
        status: answer.status,
        started: answer.started ?? null,
        completed: answer.completed ?? null,
        results,
        ...(trimmed ? { trimmed } : {}),
      };
    },

    async pollTask(input: PollTaskInput) {
      return pollTask(client, input);
    },

    async createSavedTask(input: CreateSavedTaskRequest): Promise<CreateSavedTaskResponse> {
      return call(() => client.createSavedTask(input, { signal: signal() }));
    },

    async getSavedTask(name: string): Promise<SavedTask> {
      return call(() => client.getSavedTask(name, { signal: signal() }));
    },

    async listSavedTasks(): Promise<SavedTask[]> {
      return call(() => client.listSavedTasks({ signal: signal() }));
    },
  };
}

export type BrowserAIActivities = ReturnType<typeof createActivities>;

function executionAnswer(answer: TaskExecution): TaskExecutionAnswer {
  return {
    executionId: answer.executionId,
    status: answer.status,
    started: answer.started ?? null,
    estimatedCompletion: answer.estimatedCompletion ?? null,
    scriptType: answer.scriptType,
  };
}
