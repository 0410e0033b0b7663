// One code recipient (a phone number or an email address, named by its hash): which tasks wait
// for codes there, and which task each message that arrives there is for (docs/design/inbox.md).
// - a task joins with signal-with-start from its create activity, before its create is sent, and
//   leaves on every ending; so a message finds every task that could have set it off;
// - the inbox records each message with signal-with-start (durable before the provider is
//   answered, even while no worker runs); one member that counts the sender gets its code,
//   several get nothing (never a guess), and the decision is remembered, so a provider's retry of
//   the message changes nothing, whoever joined meanwhile;
// - members that stopped without leaving (terminated) are found by the fleet's holder check,
//   before a message is refused for them, and hourly;
// - it closes once no task waits and it remembers no message; history stays bounded by
//   continue-as-new.
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { BrowserAIActivities } from '../../activities';
import { maskedAddress, senderCounts } from '../../contract/code-recipient';
import {
  inboxMessageSignal,
  joinRecipientSignal,
  leaveRecipientSignal,
  messageArrivedSignal,
  recipientStateQuery,
  type InboxMessage,
  type MessageArrival,
  type RecipientMember,
  type RecipientMemberRecord,
  type RecipientState,
  type Routed,
} from '../../contract/inbox-messages';

/** What one run hands the next. */
export interface RecipientRecord {
  members: RecipientMemberRecord[];
  decisions: RememberedDecision[];
  repeats: number;
}

/** A decision kept for retries. */
export interface RememberedDecision {
  messageId: string;
  atMs: number;
  routed: Routed;
}

/**
 * How long a decision is remembered: providers retry a message they think undelivered for up to
 * 3 days (Mailgun 8 hours, SendGrid 3 days, Standard Webhooks senders about as long).
 */
export const REMEMBER_MS = 3 * 24 * 3_600_000;
/** The most decisions remembered; a recipient gets codes at a person's pace, not thousands a day. */
const MAX_REMEMBERED = 1_000;
const SHOWN_DECISIONS = 10;
/** How often members are checked while no message comes: a terminated task leaves the recipient within about this long. */
const CHECK_MS = 3_600_000;
/** Continue as new while a run is still quick to replay (as the fleet limiter, fleet/limiter.ts). */
const MAX_HISTORY_EVENTS = 1_000;
const MAX_ID_CHARS = 512;
/** The most patterns one message is read with (the default rule and the projects' own). */
const MAX_CODES = 100;

// The check describes each member: a few seconds, retried.
const { browserAIFleetCheckHolders } = proxyActivities<BrowserAIActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
});

/** The recipient of one address; started by the first task that joins (or message that arrives), it closes when idle. */
export async function browserAICodeRecipient(carried?: RecipientRecord): Promise<void> {
  if (carried && !workflowInfo().continuedFromExecutionRunId)
    throw ApplicationFailure.nonRetryable('The code recipient takes its record from continue-as-new only.');
  const recipient = new Recipient(carried ?? { members: [], decisions: [], repeats: 0 });
  setHandler(joinRecipientSignal, (member) => recipient.join(member));
  setHandler(leaveRecipientSignal, ({ holderId }) => recipient.leave(holderId));
  setHandler(messageArrivedSignal, (message) => recipient.arrived(message));
  setHandler(recipientStateQuery, () => recipient.state());

  let checkedAtMs = Date.now();
  const mustContinue = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > MAX_HISTORY_EVENTS;
  for (;;) {
    const wake = Math.min(recipient.forgetsNextAtMs, recipient.hasMembers ? checkedAtMs + CHECK_MS : Infinity);
    await condition(
      () => mustContinue() || recipient.idle,
      Number.isFinite(wake) ? Math.max(1, wake - Date.now()) : undefined,
    );
    recipient.forget(Date.now());
    if (recipient.hasMembers && Date.now() >= checkedAtMs + CHECK_MS) {
      await recipient.checkMembers(recipient.members);
      checkedAtMs = Date.now();
    }
    if (mustContinue() || recipient.idle) {
      // Messages being routed and told finish first; a join or a message that came meanwhile keeps it open.
      await condition(allHandlersFinished);
      if (recipient.idle) return;
      if (mustContinue()) await continueAsNew<typeof browserAICodeRecipient>(recipient.record);
    }
  }
}

class Recipient {
  /** Messages being decided on (a member check runs): a repeat that arrives meanwhile is dropped too. */
  readonly #deciding = new Set<string>();

  constructor(readonly record: RecipientRecord) {}

  get members(): RecipientMemberRecord[] {
    return this.record.members;
  }

  get hasMembers(): boolean {
    return this.record.members.length > 0;
  }

  get idle(): boolean {
    return !this.hasMembers && this.record.decisions.length === 0 && this.#deciding.size === 0;
  }

  /** When the oldest remembered decision is forgotten. */
  get forgetsNextAtMs(): number {
    const oldest = this.record.decisions[0];
    return oldest ? oldest.atMs + REMEMBER_MS : Infinity;
  }

  join(member: RecipientMember): void {
    if (typeof member?.holderId !== 'string' || typeof member.workflowId !== 'string') {
      log.warn('Ignored a join without a holderId and workflowId');
      return;
    }
    // A workflow ID used again replaces its earlier task: messages go to the one that runs.
    this.record.members = this.record.members.filter((m) => m.workflowId !== member.workflowId);
    this.record.members.push({ ...member, sinceMs: Date.now() });
  }

  leave(holderId: string): void {
    this.record.members = this.record.members.filter((m) => m.holderId !== holderId);
  }

  /** A message arrived: decided on once, remembered, and told to the task it is for (or to each of several, refused). */
  async arrived(message: MessageArrival): Promise<void> {
    if (!isArrival(message)) return log.warn('Ignored a malformed message arrival');
    const { messageId } = message;
    if (this.#deciding.has(messageId) || this.record.decisions.some((d) => d.messageId === messageId)) {
      this.record.repeats++;
      return log.info('Dropped a repeat of a message already decided on', { messageId });
    }
    this.#deciding.add(messageId);
    try {
      const members = await this.#members(message.from);
      const routed: Routed =
        members.length === 1
          ? { kind: 'task', workflowId: members[0]!.workflowId }
          : members.length > 1
            ? { kind: 'several-tasks', workflowIds: members.map((m) => m.workflowId) }
            : { kind: 'no-task' };
      this.record.decisions.push({ messageId, atMs: Date.now(), routed });
      if (this.record.decisions.length > MAX_REMEMBERED) this.record.decisions.shift();
      log.info(`Inbox message routed: ${routed.kind}`, { messageId });
      const told = (member: RecipientMember, rest: Pick<InboxMessage, 'code' | 'refused'>) =>
        this.#tell(member, { messageId, from: maskedAddress(message.from), receivedAt: message.receivedAt, ...rest });
      if (members.length > 1) await Promise.all(members.map((member) => told(member, { refused: 'several-tasks' })));
      else if (members.length === 1) {
        const member = members[0]!;
        const { codes } = message;
        const found = (Object.hasOwn(codes, member.project) ? codes[member.project] : codes['*']) ?? {
          refused: 'no-code',
        };
        await told(member, 'code' in found ? { code: found.code } : { refused: found.refused });
      }
    } finally {
      this.#deciding.delete(messageId);
    }
  }

  /** The members that count `from` now; when several do, those that stopped without leaving are dropped first. */
  async #members(from: string): Promise<RecipientMember[]> {
    const counting = () => this.record.members.filter((m) => senderCounts(m.senders, from));
    if (counting().length > 1) await this.checkMembers(counting());
    return counting().map(({ sinceMs: _, ...member }) => member);
  }

  /** Tells a task; one that no longer runs leaves (the hourly check would find it too). */
  async #tell(member: RecipientMember, message: InboxMessage): Promise<void> {
    try {
      await getExternalWorkflowHandle(member.workflowId).signal(inboxMessageSignal, message);
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('The task a message was for no longer runs', { messageId: message.messageId });
      this.leave(member.holderId);
    }
  }

  /** Drops the members whose workflow no longer runs (terminated, or its ID reused). */
  async checkMembers(members: RecipientMemberRecord[]): Promise<void> {
    const gone = await browserAIFleetCheckHolders(
      members.map(({ holderId, workflowId, runId }) => ({ holderId, workflowId, runId })),
    );
    for (const holderId of gone) this.leave(holderId);
  }

  forget(nowMs: number): void {
    this.record.decisions = this.record.decisions.filter((d) => d.atMs + REMEMBER_MS > nowMs);
  }

  state(): RecipientState {
    return {
      members: this.record.members,
      remembered: this.record.decisions.length,
      repeats: this.record.repeats,
      recent: this.record.decisions
        .slice(-SHOWN_DECISIONS)
        .map(({ messageId, atMs, routed }) => ({ messageId, at: new Date(atMs).toISOString(), routed })),
    };
  }
}

/** A message arrival as the inbox sends it: IDs within bounds, the codes an object of found codes. */
function isArrival(message: MessageArrival | null | undefined): message is MessageArrival {
  const fine = (value: unknown) => typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_CHARS;
  if (!message || !fine(message.messageId) || !fine(message.from) || !fine(message.receivedAt)) return false;
  const { codes } = message;
  if (typeof codes !== 'object' || codes === null || Array.isArray(codes)) return false;
  const found = Object.values(codes);
  return (
    found.length <= MAX_CODES &&
    found.every(
      (f) => typeof f === 'object' && f !== null && (('code' in f && typeof f.code === 'string') || 'refused' in f),
    )
  );
}
