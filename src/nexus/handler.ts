// The handler of the `browserai` Nexus service (service.ts), run by the worker's Nexus poller when
// BrowserAIPlugin is given `nexusService: true`. `runTask` is backed by a `browserTask` workflow on
// the worker's own task queue (a workflow-run operation: durable, and cancelling the operation
// cancels the workflow, which stops its task once); `submitCode` and `state` are synchronous
// operations that signal and query that workflow. Input is checked here as the starters check it,
// so a bad request is refused as BAD_REQUEST before anything is started or signalled.
import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { getClient, startWorkflow, WorkflowRunOperationHandler } from '@temporalio/nexus';
import * as nexus from 'nexus-rpc';
import { browserTaskStartOptions } from '../starters/tasks';
import { startSearchAttributes, withSearchAttributeFallback } from '../starters/search-attributes-fallback';
import { codeProblems, taskInputProblems } from '../workflows/input';
import { stateQuery, submitCodeSignal } from '../workflows/messages';
import type { browserTask } from '../workflows/browser-task';
import { browserAIService, type BrowserAIService, type RunTaskInput } from './service';

/** Temporal's default limit on a workflow ID's length. */
const MAX_WORKFLOW_ID_LENGTH = 1000;

export function browserAIServiceHandler(): nexus.ServiceHandler<BrowserAIService['operations']> {
  return nexus.serviceHandler(browserAIService, {
    runTask: new WorkflowRunOperationHandler(async (ctx, input: RunTaskInput) => {
      refuse([
        ...workflowIdProblems(input),
        ...taskInputProblems(input?.task).map((p) => `task: ${p}`),
        ...(input?.task?.awaitable
          ? [
              'task.awaitable is not offered through Nexus: the service has no operation to add instructions or end a session (start it with the client API instead)',
            ]
          : []),
      ]);
      const { workflowId, task } = input;
      try {
        // With our search attributes when the namespace has them, as the starters do.
        return await withSearchAttributeFallback((registered) =>
          startWorkflow<typeof browserTask>(ctx, 'browserTask', {
            ...browserTaskStartOptions(task),
            workflowId,
            typedSearchAttributes: registered(startSearchAttributes(task.project)),
          }),
        );
      } catch (err) {
        // A retry of this very request is deduplicated by Temporal (the request ID); another request with the ID is refused.
        if (err instanceof WorkflowExecutionAlreadyStartedError)
          throw new nexus.HandlerError(
            'BAD_REQUEST',
            `A task with workflowId "${workflowId}" was already started: give each runTask a new workflowId. Nothing was started.`,
          );
        throw err;
      }
    }),

    submitCode: async (_ctx, input) => {
      refuse([...workflowIdProblems(input), ...codeProblems(input?.code)]);
      await onWorkflow(input.workflowId, (handle) =>
        handle.signal(submitCodeSignal, { code: input.code, ...(input.force === true ? { force: true } : {}) }),
      );
    },

    state: async (_ctx, input) => {
      refuse(workflowIdProblems(input));
      return onWorkflow(input.workflowId, (handle) => handle.query(stateQuery));
    },
  });
}

function workflowIdProblems(input: { workflowId?: unknown } | null | undefined): string[] {
  if (!input || typeof input !== 'object') return ['input must be an object with a workflowId'];
  const { workflowId } = input;
  return typeof workflowId === 'string' && workflowId.trim() !== '' && workflowId.length <= MAX_WORKFLOW_ID_LENGTH
    ? []
    : [`workflowId must be a non-empty string of at most ${MAX_WORKFLOW_ID_LENGTH} characters`];
}

/** A bad request: the caller's Nexus operation fails at once (not retried), with every problem named. */
function refuse(problems: string[]): void {
  if (problems.length === 0) return;
  throw new nexus.HandlerError('BAD_REQUEST', `Invalid input: ${problems.join('; ')}. Nothing was started or sent.`);
}

/** An unknown workflow is NOT_FOUND (not retried), not the INTERNAL error (retried until the operation times out) it would otherwise become. */
async function onWorkflow<T>(workflowId: string, call: (handle: WorkflowHandle) => Promise<T>): Promise<T> {
  try {
    return await call(getClient().workflow.getHandle(workflowId));
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw new nexus.HandlerError(
        'NOT_FOUND',
        `No task with workflowId "${workflowId}" is known here (or it has closed).`,
        {
          cause: err,
        },
      );
    throw err;
  }
}
