import { ApplicationFailure, continueAsNew, setHandler, setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { FailureType, type InvalidInputDetails } from '../contract/errors';
import type { BrowserTaskInput, BrowserTaskResult } from '../contract/input';
import { taskInputProblems } from '../contract/input-problems';
import {
  addInstructionsUpdate,
  appendInstructionsSignal,
  completeSignal,
  executionIdUpdate,
  nextInputRequestUpdate,
  replaceInstructionsSignal,
  stateQuery,
  submitCodeSignal,
} from '../contract/messages';
import { fleetSlotQuery, slotGrantedSignal } from '../contract/fleet-messages';
import { inboxMessageSignal } from '../contract/inbox-messages';
import { endSession } from './session/ending';
import { TaskSession, type CarriedState } from './session/task-session';
import { whenVersioned } from './versioning';

/**
 * One BrowserAI task, durably. Its messages are defined in messages.ts and handled below.
 * `carried` is set by continue-as-new only: a run that was not continued refuses it.
 */
export async function browserTask(input: BrowserTaskInput, carried?: CarriedState): Promise<BrowserTaskResult> {
  return runBrowserTask(input, trusted(carried), (next, state) => continueAsNew<typeof browserTask>(next, state));
}
// A session may await input for days: it moves to each new Worker Deployment Version at its next
// workflow task, so old versions drain and fixes reach running tasks; every change to the command
// sequence therefore goes behind patched() (docs/design/recorded-histories.md, "The rule").
setWorkflowOptions(whenVersioned('AUTO_UPGRADE'), browserTask);

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
  handleMessages(session);
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

/**
 * The whole message API of a task, in one place: signals never fail the caller (invalid ones are
 * logged and dropped), the update answers with BrowserAI's reply or a typed refusal, the query
 * shows the session.
 */
function handleMessages(session: TaskSession): void {
  const { intake } = session;
  setHandler(appendInstructionsSignal, (message) =>
    intake.acceptInstructions('appendInstructions', 'append', fieldsOf(message).instructions),
  );
  setHandler(replaceInstructionsSignal, (message) =>
    intake.acceptInstructions('replaceInstructions', 'replace', fieldsOf(message).instructions),
  );
  setHandler(submitCodeSignal, (message) => {
    const { code, force } = fieldsOf(message);
    intake.acceptCode(code, force === true);
  });
  setHandler(completeSignal, () => session.requestComplete());
  // The validator runs first: the handler only sees instructions it accepted.
  setHandler(addInstructionsUpdate, ({ instructions }) => intake.addInstructions(instructions), {
    validator: (message) => intake.checkAddInstructions(fieldsOf(message).instructions),
  });
  setHandler(executionIdUpdate, () => session.executionIdOnceCreated());
  setHandler(
    nextInputRequestUpdate,
    (message) => {
      const { after, waitMs } = fieldsOf(message);
      return session.nextInputRequest(after ?? 0, waitMs);
    },
    { validator: (message) => session.checkNextInputRequest(message) },
  );
  setHandler(stateQuery, () => session.view());
  setHandler(slotGrantedSignal, (grant) => session.fleetSlot.granted(fieldsOf(grant).holderId));
  setHandler(fleetSlotQuery, () => session.fleetSlot.report());
  setHandler(inboxMessageSignal, (message) => session.inbox.receive(message));
}

/**
 * A message's fields, or none. A caller in another language may send `null` (a nil pointer,
 * `None`) or a bare value; destructuring it would throw in the handler and fail the workflow task
 * over and over. With no fields, the session's own checks drop the signal or refuse the update.
 */
function fieldsOf<T extends object>(message: T | null | undefined): Partial<T> {
  return typeof message === 'object' && message !== null ? message : {};
}

function rejectInvalid(input: BrowserTaskInput): void {
  const problems = taskInputProblems(input);
  if (problems.length === 0) return;
  throw ApplicationFailure.create({
    type: FailureType.InvalidInput,
    nonRetryable: true,
    message: `Invalid browserTask input: ${problems.join('; ')}. Nothing was sent to BrowserAI.`,
    details: [{ problems } satisfies InvalidInputDetails],
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
