import { ApplicationFailure, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BrowserAIActivities } from '../activities';
import type { CreateSavedTaskResponse, SavedTask } from '../browserai/types';
import { FailureType } from '../errors';
import type { BrowserTaskResult } from './input';
import { stateQuery, type BrowserTaskState } from './messages';
import { runBrowserTask, surfaceActivityFailure } from './run-browser-task';
import {
  browserTaskInputFor,
  savedTaskNameProblems,
  savedTaskProblems,
  savedTaskRequest,
  type RunSavedTaskInput,
  type SavedTaskDefinition,
} from './saved-task-input';

// Saved-task calls run as workflows so the BrowserAI token stays on the workers: a service
// that manages saved tasks needs a Temporal client, never BrowserAI credentials.
const { createSavedTask, getSavedTask, listSavedTasks } = proxyActivities<BrowserAIActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 6 },
});

const NOT_STARTED: BrowserTaskState = {
  executionId: null,
  status: 'starting',
  awaitingInput: false,
  progress: { logs: [] },
  started: null,
  estimatedCompletion: null,
  pendingInstructions: 0,
  error: null,
  outcome: null,
};

function invalid(problems: string[]): never {
  throw ApplicationFailure.create({
    type: FailureType.InvalidInput,
    nonRetryable: true,
    message: `Invalid saved task: ${problems.join('; ')}. Nothing was sent to BrowserAI.`,
    details: [{ problems }],
  });
}

async function surfaced<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw surfaceActivityFailure(err);
  }
}

/** `POST /saved_tasks`. A duplicate name fails `Conflict` with BrowserAI's message. */
export async function savedTaskCreate(definition: SavedTaskDefinition): Promise<CreateSavedTaskResponse> {
  const problems = savedTaskProblems(definition);
  if (problems.length > 0) invalid(problems);
  // Creating twice is refused by name (409), so retrying cannot make a duplicate.
  return surfaced(createSavedTask.executeWithOptions({ summary: `Create saved task "${definition.name}"` }, [savedTaskRequest(definition)]));
}

/** `GET /saved_tasks/name/{name}`; an unknown name fails `SavedTaskNotFound`. */
export async function savedTaskGet(name: string): Promise<SavedTask> {
  const problems = savedTaskNameProblems(name);
  if (problems.length > 0) invalid(problems);
  return surfaced(getSavedTask.executeWithOptions({ summary: `Read saved task "${name}"` }, [name]));
}

export async function savedTaskList(): Promise<SavedTask[]> {
  return surfaced(listSavedTasks.executeWithOptions({ summary: 'List saved tasks' }, []));
}

/**
 * Reads a saved task by name, then runs it exactly as browserTask runs a task: same signals,
 * update, query, cancellation and result. Continue-as-new carries what was read, so a later
 * edit of the saved task never changes a run in progress.
 */
export async function runSavedTask(input: RunSavedTaskInput): Promise<BrowserTaskResult> {
  const problems = savedTaskNameProblems(input?.name);
  if (problems.length > 0) invalid(problems);
  // Answer `state` while the saved task is being read; runBrowserTask then takes the query over.
  // (Signals sent meanwhile wait in Temporal's buffer until their handlers are set.)
  setHandler(stateQuery, () => ({ ...NOT_STARTED, status: 'reading saved task' }));
  const taskInput = input.resolved ?? browserTaskInputFor(await savedTaskGet(input.name), input.overrides);
  return runBrowserTask(taskInput, (next) => continueAsNew<typeof runSavedTask>({ ...input, resolved: next }));
}
