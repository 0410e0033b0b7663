import { ApplicationFailure, continueAsNew, workflowInfo } from '@temporalio/workflow';
import { FailureType } from '../errors';
import { taskInputProblems, type BrowserTaskInput, type BrowserTaskResult } from './input';
import { endSession } from './session/ending';
import { TaskSession, type CarriedState } from './session/task-session';

/**
 * One BrowserAI task, durably. Signals, the update and the query are in messages.ts.
 * `carried` is set by continue-as-new only: a run that was not continued refuses it.
 */
export async function browserTask(input: BrowserTaskInput, carried?: CarriedState): Promise<BrowserTaskResult> {
  return runBrowserTask(input, trusted(carried), (next, state) => continueAsNew<typeof browserTask>(next, state));
}

/**
 * The life of a task, shared by browserTask and runSavedTask: create it once, poll it cheaply,
 * pass instructions and codes to it as they arrive, wait while it awaits input, and return its
 * results. However it ends, endSession stops a task that may still be running.
 */
export async function runBrowserTask(
  input: BrowserTaskInput,
  carried: CarriedState | undefined,
  continueAsNewWith: (input: BrowserTaskInput, carried: CarriedState) => Promise<never>,
): Promise<BrowserTaskResult> {
  rejectInvalid(input);
  const session = new TaskSession(input, carried);
  session.installHandlers();
  session.publish();
  return endSession(session, async () => {
    await session.create();
    session.startSending();
    while (!session.ended) {
      if (workflowInfo().continueAsNewSuggested) await session.continueAsNew(continueAsNewWith);
      session.failIfItMustEnd();
      if (session.awaitsInput) await session.waitForInput();
      else await session.pollUntilStatusChanges();
    }
    return session.collectResults();
  });
}

function rejectInvalid(input: BrowserTaskInput): void {
  const problems = taskInputProblems(input);
  if (problems.length === 0) return;
  throw ApplicationFailure.create({
    type: FailureType.InvalidInput,
    nonRetryable: true,
    message: `Invalid browserTask input: ${problems.join('; ')}. Nothing was sent to BrowserAI.`,
    details: [{ problems }],
  });
}

/**
 * The workflow trusts only itself: carried state comes from continue-as-new, never from a caller
 * (who could otherwise attach the worker's token to any executionId and stop it).
 */
export function trusted<T>(carried: T | undefined): T | undefined {
  if (carried === undefined || carried === null) return undefined;
  if (workflowInfo().continuedFromExecutionRunId) return carried;
  throw ApplicationFailure.create({
    type: FailureType.InvalidInput,
    nonRetryable: true,
    message:
      'This workflow takes one argument: its input. Its second argument is set by continue-as-new only. Nothing was sent to BrowserAI.',
  });
}
