import {
  ActivityFailure,
  ApplicationFailure,
  continueAsNew,
  proxyActivities,
  setHandler,
  setWorkflowOptions,
  workflowInfo,
} from '@temporalio/workflow';
import type { BrowserAIActivities } from '../activities';
import type { CreateSavedTaskResponse, SavedTask } from '../contract/browserai-types';
import { FailureType, type InvalidInputDetails } from '../contract/errors';
import type { BrowserTaskInput, BrowserTaskResult } from '../contract/input';
import { stateQuery, type BrowserTaskState } from '../contract/messages';
import { fleetSlotQuery } from '../contract/fleet-messages';
import { runBrowserTask, trusted } from './browser-task';
import type { CarriedState } from './session/task-session';
import {
  browserTaskInputFor,
  runSavedTaskInputProblems,
  savedTaskNameProblems,
  savedTaskProblems,
  savedTaskRequest,
  type RunSavedTaskInput,
  type SavedTaskDefinition,
} from '../contract/saved-task-input';
import { whenVersioned } from './versioning';

// Saved-task calls run as workflows so the BrowserAI token stays on the workers: a service
// that manages saved tasks needs a Temporal client, never BrowserAI credentials.
// `taskQueue` puts them on the fleet that makes the BrowserAI requests, as activityOptions does for tasks.
function savedTaskActivities(taskQueue?: string) {
  return proxyActivities<BrowserAIActivities>({
    ...(taskQueue ? { taskQueue } : {}),
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 6 },
  });
}

/** Where the saved-task workflows' activities run: default the workflow's own task queue. */
export interface SavedTaskCallOptions {
  activityTaskQueue?: string;
}

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
  stopConfirmed: null,
  inputRequest: null,
};

function invalid(problems: string[]): never {
  throw ApplicationFailure.create({
    type: FailureType.InvalidInput,
    nonRetryable: true,
    message: `Invalid saved task: ${problems.join('; ')}. Nothing was sent to BrowserAI.`,
    details: [{ problems } satisfies InvalidInputDetails],
  });
}

/** An activity's typed failure becomes the workflow's own, so callers read its `type` at `cause.type`. */
async function surfaced<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) {
      const { type, message, details } = err.cause;
      throw ApplicationFailure.create({
        type: type ?? undefined,
        message,
        details: details ?? undefined,
        nonRetryable: true,
        cause: err,
      });
    }
    throw err;
  }
}

/** `POST /saved_tasks`. A duplicate name fails `Conflict` with BrowserAI's message. */
export async function savedTaskCreate(
  definition: SavedTaskDefinition,
  options?: SavedTaskCallOptions,
): Promise<CreateSavedTaskResponse> {
  const problems = savedTaskProblems(definition);
  if (problems.length > 0) invalid(problems);
  // Creating twice is refused by name (409), so retrying cannot make a duplicate.
  return surfaced(
    savedTaskActivities(options?.activityTaskQueue).browserAICreateSavedTask.executeWithOptions(
      { summary: `Create saved task "${definition.name}"` },
      [savedTaskRequest(definition)],
    ),
  );
}

/** `GET /saved_tasks/name/{name}`; an unknown name fails `SavedTaskNotFound`. */
export async function savedTaskGet(name: string, options?: SavedTaskCallOptions): Promise<SavedTask> {
  const problems = savedTaskNameProblems(name);
  if (problems.length > 0) invalid(problems);
  return surfaced(
    savedTaskActivities(options?.activityTaskQueue).browserAIGetSavedTask.executeWithOptions(
      { summary: `Read saved task "${name}"` },
      [name],
    ),
  );
}

/** `GET /saved_tasks`: every saved task of the account. */
export async function savedTaskList(options?: SavedTaskCallOptions): Promise<SavedTask[]> {
  return surfaced(
    savedTaskActivities(options?.activityTaskQueue).browserAIListSavedTasks.executeWithOptions(
      { summary: 'List saved tasks' },
      [],
    ),
  );
}
// The saved-task calls end within minutes (one activity, at most 6 attempts): each finishes on
// the Worker Deployment Version it started on, so changing them never needs a patch.
setWorkflowOptions(whenVersioned('PINNED'), savedTaskCreate);
setWorkflowOptions(whenVersioned('PINNED'), savedTaskGet);
setWorkflowOptions(whenVersioned('PINNED'), savedTaskList);

/**
 * Reads a saved task by name, then runs it exactly as browserTask runs a task: same signals,
 * update, query, cancellation and result. Continue-as-new carries what was read, so a later
 * edit of the saved task never changes a run in progress.
 */
export async function runSavedTask(input: RunSavedTaskInput, carried?: SavedTaskCarried): Promise<BrowserTaskResult> {
  const problems = runSavedTaskInputProblems(input);
  if (problems.length > 0) invalid(problems);
  const resumed = trusted(carried);
  // Answer `state` while the saved task is being read; runBrowserTask then takes the query over.
  // (Signals sent meanwhile wait in Temporal's buffer until their handlers are set.)
  setHandler(stateQuery, () => ({ ...NOT_STARTED, status: 'reading saved task' }));
  setHandler(fleetSlotQuery, () => ({
    holderId: `${workflowInfo().workflowId}/${workflowInfo().firstExecutionRunId}`,
    project: '',
    limiterId: null,
    held: false,
    creating: false,
  }));
  const taskInput =
    resumed?.resolved ??
    browserTaskInputFor(
      await savedTaskGet(input.name, { activityTaskQueue: input.overrides?.activityOptions?.taskQueue }),
      input.overrides,
    );
  return runBrowserTask(taskInput, resumed?.session, (resolved, session) =>
    continueAsNew<typeof runSavedTask>(input, { resolved, session }),
  );
}
// A task session, as long-lived as browserTask: it upgrades as browserTask does.
setWorkflowOptions(whenVersioned('AUTO_UPGRADE'), runSavedTask);

/** What continue-as-new carries for a saved task: the task as the first run read it, and the session. */
export interface SavedTaskCarried {
  resolved: BrowserTaskInput;
  session: CarriedState;
}
