// The worker's side of a code recipient (docs/design/inbox.md): the workflow that knows which
// tasks wait for codes at one address is named by a hash of the address (it is personal data,
// and workflow IDs show in every list), and a task joins it before its create is sent, so no
// code the task sets off can arrive before the recipient knows the task.
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { RecipientJoin } from '../contract/activity-types';
import { joinRecipientSignal, leaveRecipientSignal } from '../contract/inbox-messages';

/** The recipient workflow's type (workflows/inbox/code-recipient.ts), by name: activities load no workflow code. */
export const RECIPIENT_WORKFLOW_TYPE = 'browserAICodeRecipient';

/**
 * The workflow ID of the recipient `address` (in normal form): a SHA-256 of it, cut to 128 bits.
 * The inbox computes the same from a message's `To`.
 */
export function recipientWorkflowId(address: string): string {
  const hash = createHash('sha256').update(`browserai-code-recipient:${address}`).digest('hex');
  return `browserai-code-recipient-${hash.slice(0, 32)}`;
}

/** Joins (starting it if none runs) the workflow of the task's recipient; returns its ID. Joining again changes nothing. */
export async function joinRecipient(client: Client, join: RecipientJoin): Promise<string> {
  const workflowId = recipientWorkflowId(join.address);
  await client.workflow.signalWithStart(RECIPIENT_WORKFLOW_TYPE, {
    workflowId,
    taskQueue: join.taskQueue,
    args: [],
    signal: joinRecipientSignal,
    signalArgs: [join.member],
    staticSummary: 'BrowserAI code recipient: which tasks wait for one-time codes at one address',
  });
  return workflowId;
}

/** Leaves the recipient (a create refused for good): best effort, as the recipient checks its members anyway. */
export async function leaveRecipient(client: Client, workflowId: string, holderId: string): Promise<void> {
  await client.workflow
    .getHandle(workflowId)
    .signal(leaveRecipientSignal, { holderId })
    .catch(() => undefined);
}
