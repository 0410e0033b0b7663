// Drives the planned workflows through the public client API, as a service would: start each at
// its moment, type the one-time code once BrowserAI shows the code form, cancel the ones meant
// to be cancelled, and wait for every workflow to close (or the deadline).
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, TerminatedFailure, TimeoutFailure } from '@temporalio/common';
import { InvalidInputError, type BrowserTasks } from '../../src/starters/tasks';
import { isCreate, workflowIdOfCreate, type RequestWatcher, type TaskView } from './emulator-watch';
import type { PlannedWorkflow } from './plan';
import { errorText, sleep, sleepUnless } from '../../dev/async';

/** How a workflow closed, as its caller sees it. */
export interface Outcome {
  status: 'completed' | 'failed' | 'cancelled' | 'terminated' | 'timed-out';
  /** Failed workflows: `WorkflowFailedError.cause.type` (e.g. AmbiguousRequest). */
  failureType?: string;
  message?: string;
  /** Completed workflows: the result's executionId. */
  executionId?: string;
}

export interface WorkflowRecord {
  plan: PlannedWorkflow;
  startedAt?: number;
  startError?: string;
  /** Starts that failed before one went through (Temporal restarting or paused). */
  startRetries?: number;
  /** When the code was signalled (only set if the signal call succeeded). */
  codeSubmittedAt?: number;
  codeError?: string;
  /** submitCode calls made: more than one when a call failed (Temporal restarting or paused). */
  codeSignals?: number;
  cancel?: {
    at: number;
    /** When the cancel call returned (it may have been tried again while Temporal was down). */
    doneAt?: number;
    trigger: 'create request' | 'task running' | 'no create seen in 60 s' | 'no running task seen in 30 s';
  };
  cancelError?: string;
  closedAt?: number;
  outcome?: Outcome;
  /** The last time waiting for the result failed for a reason other than the workflow's own ending (retried). */
  resultError?: string;
}

export interface RunOptions {
  tasks: BrowserTasks;
  watcher: RequestWatcher;
  view: TaskView;
  firstStartAt: number;
  deadlineAt: number;
}

/**
 * Fills in one record per planned workflow as things happen (so progress can be read meanwhile).
 * Resolves when every workflow has closed or failed to start, or at the deadline, whichever is first.
 */
export async function runWorkflows(records: WorkflowRecord[], options: RunOptions): Promise<void> {
  const pastDeadline = () => Date.now() >= options.deadlineAt;
  const drivers = records.map((record) => driveWorkflow(record, options, pastDeadline));
  await Promise.race([Promise.all(drivers), sleep(options.deadlineAt - Date.now())]);
}

async function driveWorkflow(record: WorkflowRecord, options: RunOptions, pastDeadline: () => boolean): Promise<void> {
  const { plan } = record;
  const { tasks } = options;
  await sleep(options.firstStartAt + plan.startAtMs - Date.now());
  const createSeen =
    plan.cancelAt === 'create'
      ? options.watcher.next((r) => isCreate(r) && workflowIdOfCreate(r) === plan.workflowId, 60_000)
      : undefined;
  record.startedAt = Date.now();
  if (!(await startOnce(record, tasks, pastDeadline))) return;
  const over = () => record.outcome !== undefined || pastDeadline();
  const closed = waitForClose(record, options.tasks, pastDeadline);
  if (plan.kind === 'otp') await submitCodeWhenAsked(record, options, over);
  if (plan.kind === 'cancel') await cancelAsPlanned(record, options, createSeen!, over);
  await closed;
}

/**
 * Starts the workflow, trying again while Temporal restarts or is paused (as a service would). A
 * later try that finds the workflow started means an earlier one went through: that is the start.
 */
async function startOnce(record: WorkflowRecord, tasks: BrowserTasks, pastDeadline: () => boolean): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await tasks.start(record.plan.input, { workflowId: record.plan.workflowId });
      return true;
    } catch (err) {
      if (attempt > 1 && err instanceof WorkflowExecutionAlreadyStartedError) return true;
      if (err instanceof WorkflowExecutionAlreadyStartedError || err instanceof InvalidInputError || pastDeadline()) {
        record.startError = errorText(err);
        return false;
      }
      record.startRetries = attempt;
      await sleep(1_000);
    }
  }
}

/** Waits for the result; a lost connection is retried, only the workflow's own ending counts. */
async function waitForClose(record: WorkflowRecord, tasks: BrowserTasks, pastDeadline: () => boolean): Promise<void> {
  while (!pastDeadline()) {
    try {
      const result = await tasks.result(record.plan.workflowId);
      record.outcome = { status: 'completed', executionId: result.executionId };
      record.resultError = undefined;
    } catch (err) {
      if (err instanceof WorkflowFailedError) {
        record.outcome = outcomeOfFailure(err);
        record.resultError = undefined;
      } else if (!pastDeadline()) record.resultError = errorText(err); // after the deadline: the connection closing
    }
    if (record.outcome) {
      record.closedAt = Date.now();
      return;
    }
    await sleep(1_000);
  }
}

/**
 * Submits the code when the emulator shows the task at the code form (`awaiting`), as a user
 * would, and again if the signal failed (Temporal restarting or paused), as a service would: a
 * failed signal may still have arrived, and the workflow must drop the repeat (the code is typed
 * once either way, which is what we measure).
 */
async function submitCodeWhenAsked(record: WorkflowRecord, options: RunOptions, over: () => boolean): Promise<void> {
  while (!over()) {
    if (options.view.tasksOf(record.plan.workflowId).some((task) => task.status === 'awaiting')) {
      for (;;) {
        record.codeSignals = (record.codeSignals ?? 0) + 1;
        try {
          await options.tasks.submitCode(record.plan.workflowId, record.plan.code!);
          record.codeSubmittedAt = Date.now();
          record.codeError = undefined;
          return;
        } catch (err) {
          record.codeError = errorText(err);
          if (err instanceof WorkflowNotFoundError || over()) return;
          await sleep(1_000);
        }
      }
    }
    await sleep(250);
  }
}

/** Cancels right as the create reaches BrowserAI, or a few seconds after the task is seen running. */
async function cancelAsPlanned(
  record: WorkflowRecord,
  options: RunOptions,
  createSeen: Promise<unknown>,
  over: () => boolean,
): Promise<void> {
  const { plan } = record;
  let trigger: NonNullable<WorkflowRecord['cancel']>['trigger'];
  if (plan.cancelAt === 'create') {
    trigger = (await createSeen) ? 'create request' : 'no create seen in 60 s';
  } else {
    const seenBy = Date.now() + 30_000;
    const running = () => options.view.tasksOf(plan.workflowId).some((task) => task.status === 'running');
    while (!over() && !running() && Date.now() < seenBy) await sleep(250);
    trigger = running() ? 'task running' : 'no running task seen in 30 s';
    if (running()) await sleepUnless(plan.cancelDelayMs ?? 0, over);
  }
  if (over()) return;
  record.cancel = { at: Date.now(), trigger };
  // Tried again while Temporal restarts or is paused; a closed workflow takes no cancel.
  for (let attempt = 1; ; attempt++) {
    try {
      await options.tasks.cancel(plan.workflowId);
      record.cancel.doneAt = Date.now();
      return;
    } catch (err) {
      // Closed by now: an earlier try may have gone through (the workflow's outcome tells).
      if (err instanceof WorkflowNotFoundError && attempt > 1) {
        record.cancel.doneAt = Date.now();
        return;
      }
      if (err instanceof WorkflowNotFoundError || over()) {
        record.cancelError = errorText(err);
        return;
      }
      await sleep(1_000);
    }
  }
}

function outcomeOfFailure(err: WorkflowFailedError): Outcome {
  const cause = err.cause;
  if (cause instanceof CancelledFailure) return { status: 'cancelled' };
  if (cause instanceof TerminatedFailure) return { status: 'terminated', message: cause.message };
  if (cause instanceof TimeoutFailure) return { status: 'timed-out', message: cause.message };
  if (cause instanceof ApplicationFailure)
    return { status: 'failed', failureType: cause.type ?? 'Error', message: cause.message };
  return { status: 'failed', failureType: cause?.name ?? 'unknown', message: cause?.message ?? err.message };
}

export function outcomeLabel(record: WorkflowRecord): string {
  if (record.startError) return 'not started';
  const outcome = record.outcome;
  if (!outcome) return 'not closed';
  return outcome.status === 'failed' ? `failed: ${outcome.failureType}` : outcome.status;
}
