// The `browserai` Nexus service: its name, its operations and their input and output types,
// defined once. The handler (handler.ts, registered by BrowserAIPlugin's `nexusService` option)
// implements it; a caller's workflow in another namespace imports it to call the service through a
// Nexus endpoint. Workflow-safe: nexus-rpc and types only, no Node built-ins.
import * as nexus from 'nexus-rpc';
import type { BrowserTaskInput, BrowserTaskResult } from '../workflows/input';
import type { BrowserTaskState } from '../workflows/messages';

/** Input of the `runTask` operation: the `browserTask` workflow's ID and its input. */
export interface RunTaskInput {
  /**
   * The `browserTask` workflow's ID in the service's namespace. The caller chooses it, because it
   * addresses `submitCode` and `state` later (deriving it from the caller's own workflow ID keeps it
   * unique). An ID already used there is refused: a task never runs twice.
   */
  workflowId: string;
  /** What `browserTask` takes. Not `awaitable`: the service has no operation to add instructions or end a session. */
  task: BrowserTaskInput;
}

/** Input of the `submitCode` operation: the task's workflow ID and the one-time code. */
export interface SubmitCodeInput {
  workflowId: string;
  /** The one-time code, typed once (see `submitCodeSignal`). */
  code: string;
  /** Type it even if this task has already typed (or queued) this very code; default false. */
  force?: boolean;
}

/** Input of the `state` operation: the task's workflow ID. */
export interface TaskStateInput {
  workflowId: string;
}

/** The service name callers address, with the endpoint that routes to the workers' task queue. */
export const BROWSERAI_NEXUS_SERVICE = 'browserai';

/**
 * The `browserai` Nexus service: `runTask`, `submitCode` and `state`. Callers import it to call the service through an
 * endpoint; the worker's plugin (`nexusService: true`) implements it.
 */
export const browserAIService = nexus.service(BROWSERAI_NEXUS_SERVICE, {
  /**
   * Runs a task and returns its result: a `browserTask` workflow behind the operation, so it is as
   * durable as the workflow, and cancelling the operation cancels the workflow (one stop for a task
   * that may still run). Fails as the workflow fails, with its failure type.
   */
  runTask: nexus.operation<RunTaskInput, BrowserTaskResult>(),
  /** Signals a code to a running task (`submitCode`); returns once Temporal has taken the signal. */
  submitCode: nexus.operation<SubmitCodeInput, void>(),
  /** The task's `state` query: whether it awaits input, its status, its outcome once ended. */
  state: nexus.operation<TaskStateInput, BrowserTaskState>(),
});

/** The type of the `browserai` Nexus service definition. */
export type BrowserAIService = typeof browserAIService;
