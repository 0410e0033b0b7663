// How the tools tell where a task stands (McpTaskReport): running, waiting for input (with what to
// do next), or how it ended, read from the workflow itself. Never a code: the input request's prompt
// comes masked from the workflow, and results are what the workflow returns (codes masked there).
import type { CallToolResult } from '@modelcontextprotocol/server';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure, TerminatedFailure } from '@temporalio/common';
import type { BrowserTasks } from '../starters/tasks';
import type { BrowserTaskResult } from '../contract/input';
import type { InputRequest, TaskFinished } from '../contract/messages';
import { BrowserAIExecutionId } from '../contract/search-attributes';
import type { McpTaskReport } from './contract';

/** A report as a tool answers it: structured, and as text for clients that read only text. */
export function reportResult(report: object): CallToolResult {
  return {
    structuredContent: { ...report },
    content: [{ type: 'text', text: JSON.stringify(report, null, 2) }],
  };
}

export function runningReport(workflowId: string, executionId: string | null): McpTaskReport {
  return {
    workflowId,
    status: 'running',
    executionId,
    next: `The task is still running (durably: it goes on without this call). Call get_task with workflowId "${workflowId}" to wait for it again.`,
  };
}

export function waitingReport(request: InputRequest, why = ''): McpTaskReport {
  const { workflowId } = request;
  const next =
    request.kind === 'code'
      ? `${why}The task waits for a one-time code${request.refusedCodes > 0 ? ` (the last ${request.refusedCodes} were refused)` : ''}. ` +
        `Ask the user for it, then call submit_code with workflowId "${workflowId}" and the code; it is typed once. ` +
        `Or cancel_task. It gives up at ${request.timesOutAt}.`
      : `The session waits for instructions: call add_instructions with workflowId "${workflowId}", or end_session to finish it ` +
        `and get its results. It gives up at ${request.timesOutAt}.`;
  return {
    workflowId,
    status: request.kind === 'code' ? 'waiting_for_code' : 'waiting_for_instructions',
    executionId: request.executionId,
    next,
    inputRequest: request,
  };
}

/**
 * How a closed workflow ended (`finished`, as the workflow or finishedIfClosed told it), with its
 * result or failure read from the workflow (reading history is not a billed action).
 */
export async function endedReport(tasks: BrowserTasks, finished: TaskFinished): Promise<McpTaskReport> {
  const { workflowId, executionId } = finished;
  const stop = finished.stopConfirmed !== undefined ? { stopConfirmed: finished.stopConfirmed } : {};
  try {
    return completedReport(workflowId, await tasks.result(workflowId));
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    const { cause } = err;
    if (cause instanceof CancelledFailure || cause instanceof TerminatedFailure) {
      // The results so far are in the closed workflow's state (one query).
      const state = await tasks.state(workflowId).catch(() => undefined);
      return {
        workflowId,
        status: 'cancelled',
        executionId: state?.executionId ?? executionId,
        next: 'The task was cancelled; its results so far are in `result`.',
        ...(state?.outcome ? { result: state.outcome } : {}),
        ...(typeof state?.stopConfirmed === 'boolean' ? { stopConfirmed: state.stopConfirmed } : stop),
      };
    }
    return {
      workflowId,
      status: finished.outcome === 'timed_out' ? 'timed_out' : 'failed',
      executionId,
      next: 'The task ended without a result; `failure` says why. Start a new task to try again.',
      failure: { type: finished.failureType ?? null, message: cause?.message ?? err.message },
      ...stop,
    };
  }
}

function completedReport(workflowId: string, result: BrowserTaskResult): McpTaskReport {
  const stoppedElsewhere = result.status.toLowerCase() === 'stopped' && result.stopConfirmed === undefined;
  return {
    workflowId,
    status: stoppedElsewhere ? 'cancelled' : 'completed',
    executionId: result.executionId,
    next:
      result.stopConfirmed === false
        ? `The task's stop was not confirmed: it may still be running at BrowserAI (execution ${result.executionId}); stop it from the BrowserAI dashboard.`
        : result.trimmed
          ? `Done. ${result.trimmed.note}`
          : 'Done.',
    result,
    ...(result.stopConfirmed !== undefined ? { stopConfirmed: result.stopConfirmed } : {}),
  };
}

/** BrowserAI's ID of a running task, from visibility (no query, no action); null until known. */
export async function executionIdOf(tasks: BrowserTasks, workflowId: string): Promise<string | null> {
  try {
    const description = await tasks.handle(workflowId).describe();
    return description.typedSearchAttributes.get(BrowserAIExecutionId) || null;
  } catch {
    return null;
  }
}
