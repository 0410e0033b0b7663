// The inbox's messages (docs/design/inbox.md): what a task joins and leaves the workflow of its
// code recipient with, how the inbox asks that workflow which task a message is for, and what the
// inbox signals the task. Defined once, for the workflows, the create activity and the inbox.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

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

/** What the inbox asks of a recipient: which task a message is for. No body, no code. */
export interface RouteRequest {
  /** The provider's ID of the message (`twilio:SM…`, `mailgun:<Message-Id>`, `webhook:<webhook-id>`): a retry carries the same. */
  messageId: string;
  /** The sender, in normal form (`normalSender`). */
  from: string;
}

/**
 * Which task a message is for: the one task waiting at the recipient that counts its sender;
 * `several-tasks` when more than one does (never a guess); `no-task` when none does. `repeated`:
 * the recipient decided on this message before (a provider's retry), and answers as it did then.
 */
export type RouteDecision = Routed & { repeated: boolean };

/** A {@link RouteDecision} as the recipient remembers it. */
export type Routed =
  | { kind: 'task'; member: RecipientMember }
  | { kind: 'several-tasks'; members: RecipientMember[] }
  | { kind: 'no-task' };

/** Asks the recipient which task a message is for, and remembers the answer for retries. */
export const routeMessageUpdate = defineUpdate<RouteDecision, [RouteRequest]>('browserAIRouteMessage');

/** What the recipient workflow shows (`temporal workflow query --type browserAIRecipientState`). */
export interface RecipientState {
  members: RecipientMemberRecord[];
  /** Messages whose decision it remembers, for retries. */
  remembered: number;
}

/** The recipient's members and how many decisions it remembers. */
export const recipientStateQuery = defineQuery<RecipientState>('browserAIRecipientState');

/** Why the inbox types nothing from a message it routed to a task. */
export type InboxRefusal = 'no-code' | 'several-codes' | 'several-tasks';

/** What the inbox tells a task of a message for it: the code found, or why none is typed. */
export interface InboxMessage {
  /** As in {@link RouteRequest}: a task acts on each message once. */
  messageId: string;
  /** The sender, masked. */
  from: string;
  /** When the inbox received it (ISO 8601). */
  receivedAt: string;
  /** The one code found in the message. */
  code?: string;
  refused?: InboxRefusal;
}

/** Sent by the inbox to the task a message is for (and, when several tasks wait there, to each of them, refused). */
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
