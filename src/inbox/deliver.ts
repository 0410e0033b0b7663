// From a verified message to the task it is for (docs/design/inbox.md): the recipient's workflow
// decides which task (one, or none; never a guess, and the same answer for a retry), the code is
// read here with the task's project's pattern, and the task gets it by signal, once (it drops a
// message it has seen). The message's text never leaves this process; only the code goes on.
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { RECIPIENT_WORKFLOW_TYPE, leaveRecipient, recipientWorkflowId } from '../activities/code-recipient';
import { maskedAddress, normalAddress, normalSender } from '../contract/code-recipient';
import {
  inboxMessageSignal,
  routeMessageUpdate,
  type InboxMessage,
  type RecipientMember,
} from '../contract/inbox-messages';
import type { ArrivedMessage } from './arrived-message';
import { findCode } from './code-in-text';

/** What became of a message: its code goes to a task (`matched`), or nothing is typed (`refused`), and why. */
export interface Delivery {
  outcome: 'matched' | 'refused';
  reason: string;
  /** The task it was routed to (or, refused as ambiguous, the first of them). */
  workflowId?: string;
}

/** What delivering needs: a Temporal client, where a recipient's workflow starts, the projects' code patterns. */
export interface DeliveryOptions {
  client: Client;
  taskQueue: string;
  /** By project; `*` for every project not named. */
  codePatterns?: Record<string, RegExp>;
  /** How long the recipient may take to answer; default 20 s (then the provider is told to retry). */
  routeTimeoutMs?: number;
}

/** Routes a message to its task and hands the task its code; throws only when Temporal cannot be reached (retry later). */
export async function deliver(message: ArrivedMessage, options: DeliveryOptions): Promise<Delivery> {
  const to = normalAddress(message.to);
  if (to === null) return { outcome: 'refused', reason: 'its recipient is not a phone number or an email address' };
  const from = normalSender(message.from) ?? 'unknown';
  const { client } = options;
  const recipient = recipientWorkflowId(to);
  const decision = await client.connection.withDeadline(Date.now() + (options.routeTimeoutMs ?? 20_000), () =>
    client.workflow.executeUpdateWithStart(routeMessageUpdate, {
      args: [{ messageId: message.messageId, from }],
      startWorkflowOperation: new WithStartWorkflowOperation(RECIPIENT_WORKFLOW_TYPE, {
        workflowId: recipient,
        taskQueue: options.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [],
        staticSummary: 'BrowserAI code recipient: which tasks wait for one-time codes at one address',
      }),
    }),
  );
  const told = (member: RecipientMember, rest: Pick<InboxMessage, 'code' | 'refused'>) =>
    tell(client, recipient, member, {
      messageId: message.messageId,
      from: maskedAddress(from),
      receivedAt: new Date().toISOString(),
      ...rest,
    });
  if (decision.kind === 'no-task')
    return { outcome: 'refused', reason: `no task waits for codes at ${maskedAddress(to)} from this sender` };
  if (decision.kind === 'several-tasks') {
    await Promise.all(decision.members.map((member) => told(member, { refused: 'several-tasks' })));
    return {
      outcome: 'refused',
      reason: `${decision.members.length} tasks wait for codes at ${maskedAddress(to)}: none gets it`,
      workflowId: decision.members[0]!.workflowId,
    };
  }
  const { member } = decision;
  const pattern = options.codePatterns?.[member.project] ?? options.codePatterns?.['*'];
  const found = findCode(message.text, pattern);
  const running = await told(member, 'code' in found ? { code: found.code } : { refused: found.refused });
  const workflowId = member.workflowId;
  if (!running) return { outcome: 'refused', reason: 'the task it is for has ended', workflowId };
  if ('refused' in found)
    return {
      outcome: 'refused',
      reason: found.refused === 'no-code' ? 'no code in it' : 'several codes in it',
      workflowId,
    };
  return {
    outcome: 'matched',
    reason: decision.repeated ? 'a retry of a message already routed' : 'routed',
    workflowId,
  };
}

/** Signals the task; false when it no longer runs (then it leaves the recipient, which would only refuse for it again). */
async function tell(
  client: Client,
  recipient: string,
  member: RecipientMember,
  message: InboxMessage,
): Promise<boolean> {
  try {
    await client.workflow.getHandle(member.workflowId).signal(inboxMessageSignal, message);
    return true;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    await leaveRecipient(client, recipient, member.holderId);
    return false;
  }
}
