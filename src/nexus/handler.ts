// The handler of the `browserai` Nexus service (service.ts), run by the worker's Nexus poller when
// BrowserAIPlugin is given `nexusService`. `runTask` is backed by a `browserTask` workflow on the
// worker's own task queue (a workflow-run operation: durable, and cancelling the operation cancels
// the workflow, which stops its task once); `submitCode` and `state` are synchronous operations
// that signal and query that workflow.
// A Nexus caller is not trusted like a client in the namespace (docs/security.md): it may set only
// the task options the operator allowed (fence.ts), its tasks queue under its endpoint's fairness
// key (so its priority is not its own either), and it reaches only the tasks it started here,
// by the operation token `runTask` gave it (task-ids.ts). Input is checked as the starters check
// it, so a bad request is refused as BAD_REQUEST, with a typed cause, before anything is started
// or signalled.
import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { getClient, operationInfo, startWorkflow, WorkflowRunOperationHandler } from '@temporalio/nexus';
import * as nexus from 'nexus-rpc';
import { FailureType, type FailureTypeName, type InvalidInputDetails } from '../contract/errors';
import { browserTaskStartOptions } from '../starters/tasks';
import { startSearchAttributes, withSearchAttributeFallback } from '../starters/search-attributes-fallback';
import { callerProblems, inCallersLane } from '../contract/callers';
import type { BrowserTaskResult } from '../contract/input';
import { taskInputProblems } from '../contract/input-problems';
import { codeProblems } from '../contract/one-time-codes';
import { stateQuery, submitCodeSignal } from '../contract/messages';
import type { browserTask } from '../workflows/browser-task';
import { NEXUS_CALLERS, nexusCallerKey } from './fence';
import type { NexusServiceOptions } from './options';
import { browserAIService, type BrowserAIService, type RunTaskInput } from './service';
import { nexusTaskId, nexusTaskIdFromToken } from './task-ids';

export function browserAIServiceHandler(
  allowed: NexusServiceOptions = {},
): nexus.ServiceHandler<BrowserAIService['operations']> {
  return nexus.serviceHandler(browserAIService, {
    runTask: new OwnTaskRunHandler(async (ctx, input: RunTaskInput) => {
      refuse(FailureType.InvalidInput, [
        ...fieldProblems(input, ['task'], {
          workflowId:
            'workflowId is not taken: the service names the task itself; address it with the operationToken of this runTask operation',
        }),
        ...taskInputProblems(input?.task).map((p) => `task: ${p}`),
        ...(input?.task?.awaitable
          ? [
              'task.awaitable is not offered through Nexus: the service has no operation to add instructions or end a session (start it with the client API instead)',
            ]
          : []),
      ]);
      refuse(FailureType.NexusOptionNotAllowed, callerProblems(input.task, allowed, NEXUS_CALLERS));
      const task = inCallersLane(input.task, allowed, nexusCallerKey(operationInfo().endpoint));
      const workflowId = nexusTaskId(ctx.requestId);
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
        // A retry of this very request is deduplicated by Temporal (the request ID); only a request that reuses another's ID lands here.
        if (err instanceof WorkflowExecutionAlreadyStartedError)
          throw refusal('BAD_REQUEST', FailureType.InvalidInput, [
            'this request ID was already used for another runTask: start a new operation. Nothing was started',
          ]);
        throw err;
      }
    }),

    submitCode: async (_ctx, input) => {
      refuse(FailureType.InvalidInput, [
        ...fieldProblems(input, ['operationToken', 'code', 'force'], workflowIdMoved),
        ...codeProblems(input?.code),
      ]);
      await onOwnTask(input.operationToken, (handle) =>
        handle.signal(submitCodeSignal, { code: input.code, ...(input.force === true ? { force: true } : {}) }),
      );
    },

    state: async (_ctx, input) => {
      refuse(FailureType.InvalidInput, fieldProblems(input, ['operationToken'], workflowIdMoved));
      return onOwnTask(input.operationToken, (handle) => handle.query(stateQuery));
    },
  });
}

/** `runTask` as a workflow-run operation whose cancel, too, reaches only a task started here. */
class OwnTaskRunHandler extends WorkflowRunOperationHandler<RunTaskInput, BrowserTaskResult> {
  override async cancel(ctx: nexus.CancelOperationContext, token: string): Promise<void> {
    ownTaskId(token);
    await super.cancel(ctx, token);
  }
}

const workflowIdMoved = {
  workflowId:
    'workflowId is not taken: pass operationToken, the token of your runTask operation (TypeScript handle.token, Python handle.operation_token, Go NexusOperationExecution.OperationToken)',
};

/** The input is an object with these fields and no others; a field with a known replacement says what it is. */
function fieldProblems(input: unknown, fields: string[], replaced: Record<string, string> = {}): string[] {
  if (!input || typeof input !== 'object' || Array.isArray(input))
    return [`input must be an object with ${fields.map((f) => `"${f}"`).join(', ')}`];
  return Object.keys(input)
    .filter((key) => !fields.includes(key))
    .map((key) => replaced[key] ?? `unknown field "${key}" (the fields are ${fields.join(', ')})`);
}

/** The workflow ID behind the caller's `runTask` token, or a refusal: a caller reaches no task it did not start here. */
function ownTaskId(token: unknown): string {
  const workflowId = nexusTaskIdFromToken(token, operationInfo().namespace);
  if (workflowId !== undefined) return workflowId;
  throw refusal('BAD_REQUEST', FailureType.NexusTaskNotOwned, [
    'operationToken is not the token of a runTask operation of this service: a Nexus caller reaches only the tasks it started here; pass the token your runTask operation returned',
  ]);
}

/** An unknown workflow is NOT_FOUND (not retried), not the INTERNAL error (retried until the operation times out) it would otherwise become. */
async function onOwnTask<T>(token: unknown, call: (handle: WorkflowHandle) => Promise<T>): Promise<T> {
  const workflowId = ownTaskId(token);
  try {
    return await call(getClient().workflow.getHandle(workflowId));
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw refusal('NOT_FOUND', FailureType.NexusTaskNotOwned, [
        'no task of this operationToken is known here (it was never started, or is past the namespace retention)',
      ]);
    throw err;
  }
}

/** A bad request: the caller's Nexus operation fails at once (not retried), with every problem named. */
function refuse(type: FailureTypeName, problems: string[]): void {
  if (problems.length > 0) throw refusal('BAD_REQUEST', type, problems);
}

/**
 * A Nexus handler error whose cause is an application failure of a stable `type` (src/contract/errors.ts),
 * with the problems as its detail: callers match on `cause.cause.type`.
 */
function refusal(kind: 'BAD_REQUEST' | 'NOT_FOUND', type: FailureTypeName, problems: string[]): nexus.HandlerError {
  const message = `${type}: ${problems.join('; ')}. Nothing was started or sent.`;
  const details: InvalidInputDetails = { problems };
  return new nexus.HandlerError(kind, message, {
    cause: ApplicationFailure.create({ type, message, nonRetryable: true, details: [details] }),
  });
}
