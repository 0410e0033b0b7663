// A task's side of the inbox (docs/design/inbox.md): the messages the inbox brings it, each acted
// on once (a provider's retry, or two inbox processes, bring the same message again), the code of
// a matched one queued as submitCode queues it (typed once, masked, and a refused code is never
// typed again), and what `state` and the UI show of them. The recipient's workflow is left on
// every ending. Only tasks that name a codeRecipient do any of this.
import { getExternalWorkflowHandle, isCancellation, log, workflowInfo } from '@temporalio/workflow';
import { maskedAddress, normalAddress } from '../../contract/code-recipient';
import {
  leaveRecipientSignal,
  type InboxEvent,
  type InboxMessage,
  type InboxRefusal,
  type InboxView,
} from '../../contract/inbox-messages';
import type { BrowserTaskInput } from '../../contract/input';
import { rootFailure } from './failures';

/** What a later run needs, carried across continue-as-new in the session's record. */
export interface InboxRecord {
  /** The recipient's workflow, once the create joined it. */
  recipientWorkflowId: string | null;
  /** The messages acted on (at most the last {@link SEEN_MESSAGES}): a repeat is dropped. */
  seen: string[];
  /** The latest messages, as `state` shows them (at most {@link SHOWN_EVENTS}). */
  events: InboxEvent[];
}

const SEEN_MESSAGES = 50;
const SHOWN_EVENTS = 5;
const MAX_ID_CHARS = 512;

/** Why the inbox typed nothing, as a task's `state` says it. */
const REFUSALS: Record<InboxRefusal, string> = {
  'no-code':
    'no code found in the message (near "code", "OTP", "verification"...): set a code pattern for the project on the inbox',
  'several-codes':
    'the message holds several candidate codes: none is typed (set a code pattern for the project on the inbox)',
  'several-tasks':
    'several tasks wait for codes at this recipient: none is typed. Give each task its own recipient (a number, an email plus-address) or its own senders',
};

/** What the inbox needs of the session: queue a code as submitCode does, and show a change. */
export interface InboxTarget {
  /** Queues the code once; the reason it was not queued, or null. */
  acceptCode(code: unknown): string | null;
  publish(): void;
}

export class Inbox {
  readonly #recipient: string | null;

  constructor(
    input: Pick<BrowserTaskInput, 'codeRecipient'>,
    private readonly record: InboxRecord,
    private readonly target: InboxTarget,
  ) {
    const address = normalAddress(input.codeRecipient?.address);
    this.#recipient = address === null ? null : maskedAddress(address);
  }

  /** Where the task's codes arrive, masked; null for a task without a codeRecipient. */
  get recipient(): string | null {
    return this.#recipient;
  }

  /** The create joined the recipient's workflow. */
  joined(recipientWorkflowId: string): void {
    this.record.recipientWorkflowId = recipientWorkflowId;
  }

  /** The inbox signal: each message once; its code queued, or the reason it is not. */
  receive(message: InboxMessage | null | undefined): void {
    const { messageId, from, code, refused } = message ?? ({} as Partial<InboxMessage>);
    if (this.#recipient === null) return log.warn('Ignored an inbox message: this task names no codeRecipient');
    if (typeof messageId !== 'string' || messageId.length === 0 || messageId.length > MAX_ID_CHARS)
      return log.warn('Ignored an inbox message without a messageId');
    if (this.record.seen.includes(messageId))
      return log.info('Ignored an inbox message already acted on', { messageId });
    this.record.seen = [...this.record.seen, messageId].slice(-SEEN_MESSAGES);
    const sender = typeof from === 'string' ? from.slice(0, 64) : 'unknown';
    const refusal =
      refused === undefined
        ? this.target.acceptCode(code)
        : Object.hasOwn(REFUSALS, refused)
          ? REFUSALS[refused]
          : 'refused by the inbox';
    const event: InboxEvent = {
      at: new Date(Date.now()).toISOString(),
      from: sender,
      outcome: refusal === null ? 'matched' : 'refused',
      reason: refusal ?? 'its code is typed once',
    };
    this.record.events = [...this.record.events, event].slice(-SHOWN_EVENTS);
    // Never the code: the log line says what happened, and to which message.
    log.info(`Inbox message ${event.outcome}`, { messageId, reason: event.reason });
    this.target.publish();
  }

  /** What `state` shows: present only for a task with a codeRecipient. */
  view(): { inbox?: InboxView } {
    return this.#recipient === null ? {} : { inbox: { recipient: this.#recipient, events: this.record.events } };
  }

  /** Leaves the recipient on every ending (never on continue-as-new); one it never gets is found by its check. */
  async leave(): Promise<void> {
    const recipientWorkflowId = this.record.recipientWorkflowId;
    if (recipientWorkflowId === null) return;
    this.record.recipientWorkflowId = null;
    const info = workflowInfo();
    try {
      await getExternalWorkflowHandle(recipientWorkflowId).signal(leaveRecipientSignal, {
        holderId: `${info.workflowId}/${info.firstExecutionRunId}`,
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('Could not leave the code recipient; it drops this task once it has closed', {
        failure: rootFailure(err).message,
      });
    }
  }
}

export function newInboxRecord(): InboxRecord {
  return { recipientWorkflowId: null, seen: [], events: [] };
}
