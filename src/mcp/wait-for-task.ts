// The wait inside a tool call: until the task ends, asks for input, or the call's time is up. It
// waits on the `nextInputRequest` update (the workflow answers when something happens: no polling
// loop, one action per wait), and reads the polling activity's heartbeat (describe: no action) for
// progress notifications. The task is a workflow: whatever happens to this wait (the call's time is
// up, the client cancels it, the server dies), the task goes on, and any later call resumes it by ID.
import { WorkflowUpdateFailedError, type WorkflowExecutionDescription } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { redactSecrets } from '../browserai/redact';
import { FailureType } from '../contract/errors';
import { BrowserAIStatus } from '../contract/search-attributes';
import { codeProblems } from '../contract/one-time-codes';
import type { InputRequest } from '../contract/messages';
import { finishedIfClosed } from '../starters/awaiting-input';
import type { BrowserTasks, NextInputRequest } from '../starters/tasks';
import type { McpTaskReport, McpWaitOptions } from './contract';
import { endedReport, executionIdOf, runningReport, waitingReport } from './task-report';

/** What the server gives a wait: the task client, and the tool call's means to reach the client. */
export interface WaitContext {
  tasks: BrowserTasks;
  /** Aborted when the client cancels the tool call. */
  signal: AbortSignal;
  /** Sends a progress notification; undefined when the call asked for none. */
  progress?: (message: string) => Promise<void>;
  /** How often the heartbeat is read for progress lines. */
  progressIntervalMs: number;
}

/** Where the wait ended: a report for the caller, or a code request only the user can answer. */
export type WaitOutcome = { report: McpTaskReport } | { codeWanted: InputRequest };

// Below the MCP SDK client's default request timeout (60 s), so a default call ends with a report, not a timeout.
const DEFAULT_WAIT_SECONDS = 50;
/** How long a wait refused for want of room (TooManyWaiters) pauses before it looks again. */
const BUSY_RETRY_MS = 2_000;

/**
 * The in-flight `nextInputRequest` waits of this process, by workflow ID and `after`: a second call
 * for the same task attaches to the update already waiting instead of leaving another one in flight.
 */
const inFlight = new Map<string, Promise<NextInputRequest | Busy>>();

/** The task already holds as many waits as it keeps (TooManyWaiters), and does not wait for input now. */
type Busy = { kind: 'busy' };

function nextInputRequest(tasks: BrowserTasks, workflowId: string, after: number): Promise<NextInputRequest | Busy> {
  const key = `${workflowId}\n${after}`;
  let waiting = inFlight.get(key);
  if (!waiting) {
    waiting = tasks
      .nextInputRequest(workflowId, { after })
      .catch((err: unknown): Promise<NextInputRequest | Busy> => {
        if (!(err instanceof WorkflowUpdateFailedError)) return Promise.reject(err);
        return isTooManyWaiters(err) ? lookInstead(tasks, workflowId, after) : closing(tasks, workflowId);
      })
      .finally(() => inFlight.delete(key));
    inFlight.set(key, waiting);
    // A wait whose call has gone (time up, cancelled) may fail later with no one listening.
    waiting.catch(() => undefined);
  }
  return waiting;
}

function isTooManyWaiters(err: WorkflowUpdateFailedError): boolean {
  return err.cause instanceof ApplicationFailure && err.cause.type === FailureType.TooManyWaiters;
}

/**
 * The task keeps no more waits (other callers hold them, or abandoned ones not yet answered), so
 * this call looks instead (one query): the request the task waits on now, or its end. A task that
 * runs without waiting is `busy`, which the caller waits out and asks again; nothing of this is
 * remembered, so the next call waits as usual.
 */
async function lookInstead(tasks: BrowserTasks, workflowId: string, after: number): Promise<NextInputRequest | Busy> {
  const finished = await finishedIfClosed(tasks.handle(workflowId));
  if (finished) return { kind: 'finished', finished };
  const { inputRequest } = await tasks.state(workflowId);
  if (inputRequest && inputRequest.sequence > after)
    return { kind: 'input-requested', request: inputRequest, open: true };
  return { kind: 'busy' };
}

/**
 * A workflow being cancelled fails the updates waiting in it while it stops its task: then the
 * wait is for its end (reading its result waits on the server, not on a loop of ours).
 */
async function closing(tasks: BrowserTasks, workflowId: string): Promise<NextInputRequest> {
  await tasks.result(workflowId).catch(() => undefined);
  const finished = await finishedIfClosed(tasks.handle(workflowId));
  if (!finished) throw new Error(`The wait for ${workflowId} failed while it still runs: call get_task again.`);
  return { kind: 'finished', finished };
}

/**
 * Waits for the task for at most `waitSeconds` and reports where it stands, or hands back a code
 * request for the caller to put to the user. Requests numbered `after` or below are not news (the
 * caller has just answered them).
 */
export async function waitForTask(
  context: WaitContext,
  workflowId: string,
  options: McpWaitOptions,
  after = 0,
): Promise<WaitOutcome> {
  const deadline = Date.now() + (options.waitSeconds ?? DEFAULT_WAIT_SECONDS) * 1_000;
  const stopProgress = context.progress ? reportProgress(context, workflowId) : () => undefined;
  const running = async () => ({ report: runningReport(workflowId, await executionIdOf(context.tasks, workflowId)) });
  try {
    for (;;) {
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) return await running();
      const next = await within(nextInputRequest(context.tasks, workflowId, after), remainingMs, context.signal);
      if (next === 'time-up') return await running();
      if (next.kind === 'busy') {
        await within(pause(BUSY_RETRY_MS), deadline - Date.now(), context.signal);
        continue;
      }
      if (next.kind === 'finished') return { report: await endedReport(context.tasks, next.finished) };
      const { request, open } = next;
      // Closed already, or a TOTP code the worker types itself: not the caller's to answer.
      if (!open || request.answeredBy === 'worker') {
        after = request.sequence;
        continue;
      }
      if (request.kind === 'instructions') return { report: waitingReport(request) };
      return { codeWanted: request };
    }
  } finally {
    stopProgress();
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The promise's value, `time-up` after `ms`, or a rejection when the call is cancelled. */
async function within<T>(promise: Promise<T>, ms: number, signal: AbortSignal): Promise<T | 'time-up'> {
  signal.throwIfAborted();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<'time-up'>((resolve) => {
        timer = setTimeout(() => resolve('time-up'), Math.max(0, ms));
      }),
      new Promise<never>((_, reject) => {
        onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** Sends BrowserAI's latest progress line (masked) whenever it changes; returns the function that stops it. */
function reportProgress(context: WaitContext, workflowId: string): () => void {
  let last = '';
  let reading = false;
  const timer = setInterval(() => {
    if (reading) return;
    reading = true;
    context.tasks
      .handle(workflowId)
      .describe()
      .then((description) => progressLine(context.tasks, description))
      .then(async (line) => {
        if (line && line !== last) {
          last = line;
          await context.progress!(line);
        }
      })
      .catch(() => undefined)
      .finally(() => (reading = false));
  }, context.progressIntervalMs);
  return () => clearInterval(timer);
}

/**
 * BrowserAI's status and last progress line, masked, from a `describe` answer (no billed action):
 * the status the workflow publishes (BrowserAIStatus, upserted as it changes) and the polling
 * activity's last heartbeat (its log lines: the workflow keeps them only for the `state` query, a
 * billed one).
 */
export async function progressLine(
  tasks: BrowserTasks,
  description: WorkflowExecutionDescription,
): Promise<string | undefined> {
  const poll = await tasks.lastPollOf(description);
  const status = description.typedSearchAttributes.get(BrowserAIStatus) ?? poll?.status;
  const logs = (poll?.progress as { logs?: unknown } | undefined)?.logs;
  const lastLog = Array.isArray(logs) ? logs.filter((l): l is string => typeof l === 'string').at(-1) : undefined;
  if (!status && !lastLog) return undefined;
  return redactSecrets([status, lastLog].filter(Boolean).join(': ').slice(0, 500));
}

/** Problems of a code the user typed in the form (the same check as submit_code's). */
export function typedCodeProblems(code: unknown): string[] {
  return codeProblems(typeof code === 'string' ? code.trim() : code);
}
