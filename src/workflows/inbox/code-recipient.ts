// One code recipient (a phone number or an email address, named by its hash): which tasks wait
// for codes there, and which task each message that arrives there is for (docs/design/inbox.md).
// - a task joins with signal-with-start from its create activity, before its create is sent, and
//   leaves on every ending; so a message finds every task that could have set it off;
// - the inbox asks with the route update: one member that counts the sender gets the message;
//   several get nothing (never a guess); the answer is remembered, so a provider's retry of the
//   message gets the same answer from every inbox process, whoever joined meanwhile;
// - members that stopped without leaving (terminated) are found by the fleet's holder check,
//   before a message is refused for them and before the recipient closes;
// - it closes once no task waits and it remembers no message; history stays bounded by
//   continue-as-new.
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { BrowserAIActivities } from '../../activities';
import { senderCounts } from '../../contract/code-recipient';
import {
  joinRecipientSignal,
  leaveRecipientSignal,
  recipientStateQuery,
  routeMessageUpdate,
  type RecipientMember,
  type RecipientMemberRecord,
  type RecipientState,
  type RouteDecision,
  type Routed,
  type RouteRequest,
} from '../../contract/inbox-messages';

/** What one run hands the next. */
export interface RecipientRecord {
  members: RecipientMemberRecord[];
  decisions: RememberedDecision[];
}

/** A decision kept for retries. */
export interface RememberedDecision {
  messageId: string;
  atMs: number;
  decision: Routed;
}

/**
 * How long a decision is remembered: providers retry a message they think undelivered for up to
 * 3 days (Mailgun 8 hours, SendGrid 3 days, Standard Webhooks senders about as long).
 */
export const REMEMBER_MS = 3 * 24 * 3_600_000;
/** The most decisions remembered; a recipient gets codes at a person's pace, not thousands a day. */
const MAX_REMEMBERED = 1_000;
/** How often members are checked while no message comes: a terminated task leaves the recipient within about this long. */
const CHECK_MS = 3_600_000;
/** Continue as new while a run is still quick to replay (as the fleet limiter, fleet/limiter.ts). */
const MAX_HISTORY_EVENTS = 1_000;
const MAX_ID_CHARS = 512;

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
  const recipient = new Recipient(carried ?? { members: [], decisions: [] });
  setHandler(joinRecipientSignal, (member) => recipient.join(member));
  setHandler(leaveRecipientSignal, ({ holderId }) => recipient.leave(holderId));
  setHandler(routeMessageUpdate, (request) => recipient.route(request), { validator: checkRouteRequest });
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
      await condition(allHandlersFinished);
      // A join or a message that came meanwhile keeps it open.
      if (recipient.idle) return;
      if (mustContinue()) await continueAsNew<typeof browserAICodeRecipient>(recipient.record);
    }
  }
}

function checkRouteRequest(request: RouteRequest): void {
  const { messageId, from } = (request ?? {}) as Partial<RouteRequest>;
  const fine = (value: unknown) => typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_CHARS;
  if (!fine(messageId) || !fine(from))
    throw ApplicationFailure.nonRetryable(
      `A route request needs messageId and from, each 1-${MAX_ID_CHARS} characters.`,
    );
}

class Recipient {
  /** Decisions being made (a member check runs): a retry that arrives meanwhile waits for the same one. */
  readonly #deciding = new Map<string, Promise<Routed>>();

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

  async route({ messageId, from }: RouteRequest): Promise<RouteDecision> {
    const known = this.record.decisions.find((d) => d.messageId === messageId)?.decision;
    if (known) return { ...known, repeated: true };
    const deciding = this.#deciding.get(messageId);
    if (deciding) return { ...(await deciding), repeated: true };
    const decided = this.#decide(from);
    this.#deciding.set(messageId, decided);
    try {
      const decision = await decided;
      this.record.decisions.push({ messageId, atMs: Date.now(), decision });
      if (this.record.decisions.length > MAX_REMEMBERED) this.record.decisions.shift();
      return { ...decision, repeated: false };
    } finally {
      this.#deciding.delete(messageId);
    }
  }

  /** The members that count `from` now; when several do, those that stopped without leaving are dropped first. */
  async #decide(from: string): Promise<Routed> {
    const counting = () => this.record.members.filter((m) => senderCounts(m.senders, from));
    if (counting().length > 1) await this.checkMembers(counting());
    const members = counting().map(({ sinceMs: _, ...member }) => member);
    if (members.length === 1) return { kind: 'task', member: members[0]! };
    return members.length > 1 ? { kind: 'several-tasks', members } : { kind: 'no-task' };
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
    return { members: this.record.members, remembered: this.record.decisions.length };
  }
}
