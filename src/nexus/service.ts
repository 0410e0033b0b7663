// The `browserai` Nexus service: its name, its operations and their input and output types,
// defined once. The handler (handler.ts, registered by BrowserAIPlugin's `nexusService` option)
// implements it; a caller's workflow in another namespace imports it to call the service through a
// Nexus endpoint. Workflow-safe: nexus-rpc and types only, no Node built-ins.
import * as nexus from 'nexus-rpc';
import type { BrowserTaskInput, BrowserTaskResult } from '../contract/input';
import type { BrowserTaskState } from '../contract/messages';

/** Input of the `runTask` operation: the `browserTask` input, nothing else. */
export interface RunTaskInput {
  /**
   * What `browserTask` takes, within what the service's operator allows Nexus callers (no TOTP
   * secret, code template, webhook, workflow to notify or activity queue unless allowed; see
   * docs/nexus.md). Not `awaitable`: the service has no operation to add instructions or end a session.
   */
  task: BrowserTaskInput;
}

/**
 * The token of the caller's own `runTask` operation, as its SDK returns it once the operation has
 * started: `handle.token` in TypeScript, `handle.operation_token` in Python,
 * `NexusOperationExecution.OperationToken` in Go. It is how the service knows the caller started the
 * task: the service names each task itself and answers only for the tasks behind its tokens.
 */
type OperationToken = string;

/** Input of the `submitCode` operation: which task (by `runTask`'s operation token) and the one-time code. */
export interface SubmitCodeInput {
  /** The caller's `runTask` operation token. */
  operationToken: OperationToken;
  /** The one-time code, typed once (see `submitCodeSignal`). */
  code: string;
  /** Type it even if this task has already typed (or queued) this very code; default false. */
  force?: boolean;
}

/** Input of the `state` operation: which task, by `runTask`'s operation token. */
export interface TaskStateInput {
  /** The caller's `runTask` operation token. */
  operationToken: OperationToken;
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
   * that may still run). Fails as the workflow fails, with its failure type. The service names the
   * workflow; the operation's token addresses it in `submitCode` and `state`.
   */
  runTask: nexus.operation<RunTaskInput, BrowserTaskResult>(),
  /** Signals a code to the caller's running task (`submitCode`); returns once Temporal has taken the signal. */
  submitCode: nexus.operation<SubmitCodeInput, void>(),
  /** The caller's task's `state` query: whether it awaits input, its status, its outcome once ended. */
  state: nexus.operation<TaskStateInput, BrowserTaskState>(),
});

/** The type of the `browserai` Nexus service definition. */
export type BrowserAIService = typeof browserAIService;
