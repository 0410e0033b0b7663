// The create: one `POST /tasks`, at most once (the activity's deliverOnce), and under a fleet limit
// the wait for a slot before it. It is not cancellable: a workflow cancelled mid-create still
// learns the task's ID, and so can stop the task the create may have started.
import { ApplicationFailure, CancellationScope, workflowInfo } from '@temporalio/workflow';
import type { CreatedTask, RecipientJoin } from '../../contract/activity-types';
import { normalAddress, normalSender } from '../../contract/code-recipient';
import type { Instruction } from '../../contract/browserai-types';
import type { BrowserTaskInput } from '../../contract/input';
import type { SessionActivities } from './activities';
import { rootFailure } from './failures';
import type { FleetSlotHolder } from './fleet-slot';
import type { SessionSettings } from './settings';

/** Creates the task, after waiting for a fleet slot if the worker has a fleet limit and none is free. */
export async function createTask(
  activities: SessionActivities,
  input: BrowserTaskInput,
  settings: SessionSettings,
  slot: FleetSlotHolder,
): Promise<CreatedTask> {
  for (;;) {
    slot.creating = true;
    const answer = await CancellationScope.nonCancellable(() =>
      activities.createTask.executeWithOptions({ summary: `Create ${input.type} task in project ${input.project}` }, [
        {
          instructions: input.instructions as Instruction[],
          type: input.type,
          project: input.project,
          geoLocation: { ...input.geoLocation, country: input.geoLocation.country.toUpperCase() },
          inspect: input.inspect,
          awaitable: input.awaitable,
          delivery: settings.delivery,
          stopRetryWindowMs: settings.stopRetryWindowMs,
          place: slot.place(),
          // The first poll looks a second later, so nothing signalled meanwhile waits for the create.
          lookInPoll: true,
          ...recipientJoin(input),
        },
      ]),
    );
    slot.creating = false;
    // Under a fleet limit with no slot free, the create sent nothing: wait for the slot (or for the
    // time to ask again), then create (or ask again: the same activity).
    if (!('waitingForSlot' in answer)) return answer;
    await slot.waitFor(answer.waitingForSlot);
  }
}

/** What the create joins, for a task with a codeRecipient (docs/design/inbox.md): nothing otherwise. */
function recipientJoin(input: BrowserTaskInput): { codeRecipient?: RecipientJoin } {
  const address = normalAddress(input.codeRecipient?.address);
  if (address === null) return {};
  const { workflowId, firstExecutionRunId, runId, taskQueue } = workflowInfo();
  const senders = input.codeRecipient?.senders?.map((sender) => normalSender(sender)!);
  return {
    codeRecipient: {
      address,
      taskQueue,
      member: {
        holderId: `${workflowId}/${firstExecutionRunId}`,
        workflowId,
        runId,
        project: input.project,
        ...(senders && senders.length > 0 ? { senders } : {}),
      },
    },
  };
}

/** The executionId a failed create still named (a malformed answer that carried one). */
export function createdDespiteFailure(err: unknown): string | undefined {
  const root = rootFailure(err);
  const details =
    root instanceof ApplicationFailure ? (root.details?.[0] as { executionId?: unknown } | undefined) : undefined;
  return typeof details?.executionId === 'string' ? details.executionId : undefined;
}
