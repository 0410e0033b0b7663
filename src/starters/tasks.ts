// The programmatic API for backend services: start a BrowserAI task workflow, talk to it
// while it runs, and get its result. Every input is checked here first, so bad input throws
// InvalidInputError before anything reaches Temporal or BrowserAI.
import { randomUUID } from 'node:crypto';
import {
  Client,
  Connection,
  type ClientPlugin,
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import type { Instruction } from '../browserai';
import { encryptedDataConverterFromEnv } from '../codec/encryption-codec';
import { connectionOptions, loadTemporalConfig } from '../config/temporal';
import type { TaskExecutionAnswer } from '../contract/activity-types';
import type { BrowserTaskInput, BrowserTaskResult } from '../contract/input';
import { instructionProblems, InvalidInputError, taskInputProblems } from '../contract/input-problems';
import { nextInputRequestProblems } from '../contract/input-waits';
import { codeProblems } from '../contract/one-time-codes';
import {
  addInstructionsUpdate,
  appendInstructionsSignal,
  completeSignal,
  executionIdUpdate,
  replaceInstructionsSignal,
  stateQuery,
  submitCodeSignal,
  type BrowserTaskState,
} from '../contract/messages';
import type { browserTask } from '../workflows';
import { browserTaskStartOptions } from '../workflows/start-options';
import { startSearchAttributes, withSearchAttributeFallback } from './search-attributes-fallback';
import {
  batchOutcomes,
  batchState,
  cancelBatch,
  retryFailedItems,
  startBatch,
  type BatchHandle,
  type BatchItemOutcome,
  type BatchStartOptions,
} from './batch';
import type { BatchItem, BatchState } from '../contract/batch-messages';
import {
  listAwaitingInput,
  waitForInputRequest,
  type AwaitingTask,
  type ListAwaitingOptions,
  type NextInputRequest,
} from './awaiting-input';

export { InvalidInputError, WorkflowNotFoundError, browserTaskStartOptions };
export type {
  AwaitingTask,
  ListAwaitingOptions,
  NextInputRequest,
  BatchHandle,
  BatchItemOutcome,
  BatchStartOptions,
  BatchItem,
  BatchState,
};
export { BatchEndedError, BatchFinishedError } from './batch';

/** Options of `BrowserTasks.start` and `run`. */
export interface StartOptions {
  /** Default `browserai-<uuid>`. Starting twice with one ID is refused by Temporal, so a retried start never runs a task twice. */
  workflowId?: string;
  /**
   * Resolve only once BrowserAI has created the task, with its `executionId` beside the handle:
   * one call (update-with-start), for callers that store the executionId. Costs one update (a
   * billed action). Rejects with a `WorkflowUpdateFailedError` whose cause has type
   * `TaskNotCreated` when the create failed; the workflow then fails with the reason.
   */
  waitForExecutionId?: boolean;
}

/** What `start` returns with `waitForExecutionId: true`. */
export type StartedTask = WorkflowHandle<typeof browserTask> & { executionId: string };

/** The `state` query's answer plus the workflow's status and the polling activity's last heartbeat. */
export interface LiveState extends BrowserTaskState {
  /** From the polling activity's last heartbeat: fresher than `state`, at no history cost. */
  lastPoll?: { polls?: number; status?: string; progress?: unknown; nextPollAt?: string; attempt?: number };
  workflowStatus: string;
}

/** Options of `BrowserTasks.fromEnv`. */
export interface FromEnvOptions {
  /**
   * Client plugins, e.g. Temporal's OpenTelemetryPlugin, so a start call opens the trace the
   * workflow, its activities and its BrowserAI requests join. Default: none.
   */
  plugins?: ClientPlugin[];
}

/**
 * The client API of `browserTask`: start a task, send it codes and instructions, be told when it needs input, read its
 * state and result, cancel it. Every method checks its input before anything reaches Temporal or BrowserAI
 * (`InvalidInputError`).
 */
export class BrowserTasks {
  constructor(
    readonly client: Client,
    readonly taskQueue: string,
  ) {}

  /**
   * Connects as the worker does: Temporal's standard environment configuration (TEMPORAL_ADDRESS,
   * TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE / temporal.toml, ...) and TEMPORAL_TASK_QUEUE.
   * Throws a ConfigError listing every problem before connecting.
   */
  static async fromEnv(env: NodeJS.ProcessEnv = process.env, options: FromEnvOptions = {}): Promise<BrowserTasks> {
    const config = loadTemporalConfig(env);
    const connection = await Connection.connect(connectionOptions(config));
    const client = new Client({
      connection,
      namespace: config.namespace,
      dataConverter: encryptedDataConverterFromEnv(env),
      plugins: options.plugins,
    });
    return new BrowserTasks(client, config.taskQueue);
  }

  /**
   * Starts a task and resolves once BrowserAI has created it, with its `executionId` beside the handle (update-with-
   * start).
   */
  async start(input: BrowserTaskInput, options: StartOptions & { waitForExecutionId: true }): Promise<StartedTask>;
  /** Starts a task and returns its workflow handle; nothing waits for BrowserAI. */
  async start(
    input: BrowserTaskInput,
    options?: StartOptions,
  ): Promise<WorkflowHandleWithFirstExecutionRunId<typeof browserTask>>;
  async start(input: BrowserTaskInput, options: StartOptions = {}): Promise<WorkflowHandle<typeof browserTask>> {
    const problems = taskInputProblems(input);
    if (problems.length > 0) throw new InvalidInputError(problems);
    const common = {
      ...browserTaskStartOptions(input),
      taskQueue: this.taskQueue,
      workflowId: options.workflowId ?? `browserai-${randomUUID()}`,
    };
    if (options.waitForExecutionId) {
      return withSearchAttributeFallback(async (registered) => {
        const start = new WithStartWorkflowOperation<typeof browserTask>('browserTask', {
          ...common,
          typedSearchAttributes: registered(startSearchAttributes(input.project)),
          // A second start with this ID fails, as a plain start does: never a second task.
          workflowIdConflictPolicy: 'FAIL',
        });
        const executionId = await this.client.workflow.executeUpdateWithStart(executionIdUpdate, {
          startWorkflowOperation: start,
        });
        return Object.assign(await start.workflowHandle(), { executionId });
      });
    }
    return withSearchAttributeFallback((registered) =>
      this.client.workflow.start('browserTask', {
        ...common,
        typedSearchAttributes: registered(startSearchAttributes(input.project)),
      }),
    );
  }

  /** Starts the task and waits for its result. */
  async run(input: BrowserTaskInput, options?: StartOptions): Promise<BrowserTaskResult> {
    return (await this.start(input, options)).result();
  }

  /** The workflow handle of a task, for any call this class does not wrap. */
  handle(workflowId: string): WorkflowHandle<typeof browserTask> {
    return this.client.workflow.getHandle(workflowId);
  }

  /** Sends a one-time code, typed once: a code this task already typed or queued is ignored. */
  async submitCode(workflowId: string, code: string): Promise<void> {
    const problems = codeProblems(code);
    if (problems.length > 0) throw new InvalidInputError(problems);
    await this.handle(workflowId).signal(submitCodeSignal, { code });
  }

  /** Fire-and-forget append: queued and sent in order, even before the task exists. */
  async append(workflowId: string, instructions: Instruction[]): Promise<void> {
    checkInstructions(instructions);
    await this.handle(workflowId).signal(appendInstructionsSignal, { instructions });
  }

  /** Append and wait for BrowserAI's answer; rejected once the task has ended. */
  async addInstructions(workflowId: string, instructions: Instruction[]): Promise<TaskExecutionAnswer> {
    checkInstructions(instructions);
    return this.handle(workflowId).executeUpdate(addInstructionsUpdate, { args: [{ instructions }] });
  }

  /** Replaces the task's instructions, which restarts its run from the first one. */
  async replace(workflowId: string, instructions: Instruction[]): Promise<void> {
    checkInstructions(instructions);
    await this.handle(workflowId).signal(replaceInstructionsSignal, { instructions });
  }

  /** Ends an awaitable session once its instructions are done. */
  async complete(workflowId: string): Promise<void> {
    await this.handle(workflowId).signal(completeSignal);
  }

  /** What the task is doing now: the `state` query, the workflow's status and the poll's last heartbeat. */
  async state(workflowId: string): Promise<LiveState> {
    const handle = this.handle(workflowId);
    const [state, description] = await Promise.all([handle.query(stateQuery), handle.describe()]);
    const live: LiveState = { ...state, workflowStatus: description.status.name };
    const lastPoll = await this.#lastPollOf(description);
    if (lastPoll) live.lastPoll = lastPoll;
    return live;
  }

  /**
   * The polling activity's last heartbeat (BrowserAI's status and progress as last polled) in a `describe()` answer:
   * no query, no billed action, no worker needed. Undefined while no poll runs.
   */
  lastPollOf(description: WorkflowExecutionDescription): Promise<LiveState['lastPoll']> {
    return this.#lastPollOf(description);
  }

  async #lastPollOf(description: WorkflowExecutionDescription): Promise<LiveState['lastPoll']> {
    const poll = description.raw.pendingActivities?.find((a) => a.activityType?.name === 'browserAIPollTask');
    const details = await this.#decode<{
      polls?: number;
      lastSeen?: { status?: string; progress?: unknown };
      nextPollAt?: string;
    }>(poll?.heartbeatDetails?.payloads?.[0]);
    if (!details) return undefined;
    return {
      polls: details.polls,
      status: details.lastSeen?.status,
      progress: details.lastSeen?.progress,
      nextPollAt: details.nextPollAt,
      attempt: poll?.attempt ?? undefined,
    };
  }

  /** A raw payload from `describe()`, through the client's codecs (encryption) and converter; undefined if unreadable. */
  async #decode<T>(payload: Payload | undefined): Promise<T | undefined> {
    if (!payload) return undefined;
    const { payloadCodecs, payloadConverter } = this.client.options.loadedDataConverter;
    try {
      let payloads = [payload];
      for (const codec of [...payloadCodecs].reverse()) payloads = await codec.decode(payloads);
      return payloadConverter.fromPayload(payloads[0]!) as T;
    } catch {
      return undefined;
    }
  }

  /**
   * Waits until the task makes an input request with a sequence number above `after` (default 0:
   * its first), or finishes, and returns it: `{kind: 'input-requested', request, open}` or
   * `{kind: 'finished', finished}`. Answer a code request with `submitCode`, then call again with
   * `after: request.sequence` to hear whether BrowserAI asks again (a refused code) or the task ends.
   * One update (one billed Temporal action) per answer: the workflow answers when the request
   * happens, or after `waitMs` (default and at most 5 minutes) with nothing, and this asks again;
   * the SDK waits on the server meanwhile. Calls with the same `after` within five minutes join one
   * update, so a retry holds nothing more; a task keeps at most 5 waiting and refuses more
   * `TooManyWaiters`.
   */
  async nextInputRequest(
    workflowId: string,
    options: { after?: number; waitMs?: number } = {},
  ): Promise<NextInputRequest> {
    const after = options.after ?? 0;
    const problems = nextInputRequestProblems({ after, waitMs: options.waitMs });
    if (problems.length > 0) throw new InvalidInputError(problems);
    return waitForInputRequest(this.handle(workflowId), after, options.waitMs);
  }

  /**
   * The tasks waiting for input now, longest wait first, with how long each has waited: from
   * visibility (no worker, no action), or where the namespace lacks our search attributes by asking
   * each running task. `details: true` adds each open request (a query each).
   */
  async listAwaitingInput(options?: ListAwaitingOptions): Promise<AwaitingTask[]> {
    return listAwaitingInput(this.client, options);
  }

  /** Cancels the task's workflow, which stops the task (one stop) and ends with the results so far. */
  async cancel(workflowId: string): Promise<void> {
    await this.handle(workflowId).cancel();
  }

  /** Waits for the task's result; rejects with the workflow's typed failure. */
  async result(workflowId: string): Promise<BrowserTaskResult> {
    return this.handle(workflowId).result();
  }

  /**
   * Starts a batch of tasks (docs/fleet.md, "Batches"), or resumes the one of that name: its items
   * are sent in pages as it has room, so keep the process running until `added` resolves (or call
   * again, with the same items, to resume). Every item is checked first: InvalidInputError, with
   * nothing sent, for a bad item or a repeated ID.
   */
  async startBatch(items: BatchItem[], options: BatchStartOptions): Promise<BatchHandle> {
    return startBatch(this.client, this.taskQueue, items, options);
  }

  /** A batch's counts: queued, running, completed, failed, cancelled. */
  async batchState(name: string): Promise<BatchState> {
    return batchState(this.client, name);
  }

  /** Every item's outcome, in the list's order, each handed to `write` as it is read. Returns how many. */
  async batchResults(name: string, write: (outcome: BatchItemOutcome) => void | Promise<void>): Promise<number> {
    return batchOutcomes(this.client, name, write);
  }

  /** Cancels a batch: its queued items are dropped, each running task is stopped once. */
  async cancelBatch(name: string): Promise<void> {
    return cancelBatch(this.client, name);
  }

  /** Runs a batch's failed items again (under their own IDs); returns how many were sent again. */
  async retryFailed(name: string): Promise<number> {
    return retryFailedItems(this.client, this.taskQueue, name);
  }
}

function checkInstructions(instructions: Instruction[]): void {
  const problems = instructionProblems(instructions);
  if (problems.length > 0) throw new InvalidInputError(problems);
}

/**
 * The types of `BrowserTasks`' options and answers, by name: `BrowserTasks.StartOptions`,
 * `BrowserTasks.LiveState`, ... (the client's namespace, so the package's root stays short).
 */
export declare namespace BrowserTasks {
  export {
    type StartOptions as StartOptions,
    type StartedTask as StartedTask,
    type LiveState as LiveState,
    type FromEnvOptions as FromEnvOptions,
    type NextInputRequest as NextInputRequest,
    type AwaitingTask as AwaitingTask,
    type ListAwaitingOptions as ListAwaitingOptions,
    type BatchItem as BatchItem,
    type BatchStartOptions as BatchStartOptions,
    type BatchHandle as BatchHandle,
    type BatchState as BatchState,
    type BatchItemOutcome as BatchItemOutcome,
  };
}
