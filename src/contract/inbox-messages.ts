// The inbox's messages (docs/design/inbox.md): what a task joins and leaves the workflow of its
// code recipient with, how the inbox records a message there, and what that workflow tells the
// task the message is for. Defined once, for the workflows, the create activity and the inbox.
import { defineQuery, defineSignal } from '@temporalio/workflow';

/** A task waiting for codes at a recipient: named across continue-as-new and ID reuse by `holderId`. */
export interface RecipientMember {
  /** `workflowId/firstExecutionRunId`: the workflow, not one run of it. */
  holderId: string;
  workflowId: string;
  runId: string;
  /** The task's BrowserAI project: the inbox reads its code with the project's pattern. */
  project: string;
  /** The task's `codeRecipient.senders`, in normal form; absent: any sender. */
  senders?: string[];
}

/** A member as the recipient workflow keeps it: since when it waits there. */
export interface RecipientMemberRecord extends RecipientMember {
  sinceMs: number;
}

/** Sent (with start) by a task's create activity before it creates the task: from then on the task's codes come to it. */
export const joinRecipientSignal = defineSignal<[RecipientMember]>('browserAIJoinRecipient');
/** Sent by a task on every ending: it waits for no more codes there. */
export const leaveRecipientSignal = defineSignal<[{ holderId: string }]>('browserAILeaveRecipient');

/** What a message held, read by the inbox with one pattern: the one code, or why there is none to type. */
export type FoundCode = { code: string } | { refused: 'no-code' | 'several-codes' };

/**
 * A message that arrived at a recipient, as the inbox records it (signal-with-start: durable
 * before the provider is answered, whether or not a worker runs). No text: only what was read
 * from it.
 */
export interface MessageArrival {
  /** The provider's ID of the message (`twilio:SM…`, `mailgun:<Message-ID>`, `webhook:<webhook-id>`): a retry carries the same. */
  messageId: string;
  /** The sender, in normal form (`normalSender`), or `unknown`. */
  from: string;
  /** When the inbox received it (ISO 8601). */
  receivedAt: string;
  /** The code read with the default rule (`*`) and with each project's own pattern (by project). */
  codes: Record<string, FoundCode>;
}

/** Sent (with start) by the inbox for each message: the recipient decides which task it is for and tells that task. */
export const messageArrivedSignal = defineSignal<[MessageArrival]>('browserAIMessageArrived');

/**
 * Which task a message is for: the one task waiting at the recipient that counts its sender;
 * `several-tasks` when more than one does (never a guess); `no-task` when none does.
 */
export type Routed =
  { kind: 'task'; workflowId: string } | { kind: 'several-tasks'; workflowIds: string[] } | { kind: 'no-task' };

/** What the recipient workflow shows (`temporal workflow query --type browserAIRecipientState`). */
export interface RecipientState {
  members: RecipientMemberRecord[];
  /** Messages whose decision it remembers, for retries. */
  remembered: number;
  /** Messages it dropped as repeats of one it had decided on (a provider's retry, two inbox processes). */
  repeats: number;
  /** The latest decisions (at most 10), oldest first. */
  recent: Array<{ messageId: string; at: string; routed: Routed }>;
}

/** The recipient's members, its latest decisions and how many it remembers. */
export const recipientStateQuery = defineQuery<RecipientState>('browserAIRecipientState');

/** Why nothing is typed from a message routed to a task. */
export type InboxRefusal = 'no-code' | 'several-codes' | 'several-tasks';

/** What the recipient tells a task of a message for it: the code found, or why none is typed. */
export interface InboxMessage {
  /** As in {@link MessageArrival}: a task acts on each message once. */
  messageId: string;
  /** The sender, masked. */
  from: string;
  /** When the inbox received it (ISO 8601). */
  receivedAt: string;
  /** The one code found in the message. */
  code?: string;
  refused?: InboxRefusal;
}

/** Sent by the recipient to the task a message is for (and, when several tasks wait there, to each of them, refused). */
export const inboxMessageSignal = defineSignal<[InboxMessage]>('browserAIInboxMessage');

/** A message the inbox brought a task, as `state` and the UI show it: matched (its code is typed once) or refused, and why. */
export interface InboxEvent {
  at: string;
  /** The sender, masked. */
  from: string;
  outcome: 'matched' | 'refused';
  reason: string;
}

/** What `state` shows of a task with a `codeRecipient`: where its codes arrive (masked), and the latest messages (at most 5). */
export interface InboxView {
  recipient: string;
  events: InboxEvent[];
}
