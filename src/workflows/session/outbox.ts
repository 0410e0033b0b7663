// Instructions and codes on their way to BrowserAI: one queue in arrival order, one send at a
// time, and an outcome per item for the update handler that waits for it. The queue decides what
// goes next and when; an OutboxSender (sender.ts) does the sending.
import { CancellationScope, condition } from '@temporalio/workflow';
import type { TaskExecutionAnswer } from '../../contract/activity-types';
import type { OutgoingInstructions } from '../../contract/input';
import { jsonBytes } from '../../contract/text';
import { rootFailure } from './failures';

/** BrowserAI's answer, or the failure itself (the ApplicationFailure under an ActivityFailure), so an update's caller reads its `type`. */
export type SendOutcome = { answer: TaskExecutionAnswer } | { error: Error };
interface Queued extends OutgoingInstructions {
  id: number;
}

/** What sends the outbox's items, one at a time, and hears how each went. */
export interface OutboxSender {
  /** Why no item can be sent any more (the task ended), or null while they can. */
  refusal(): Error | null;
  send(item: OutgoingInstructions): Promise<TaskExecutionAnswer>;
  /** Called once per item, in order, when it is answered, failed or refused. */
  sent(item: OutgoingInstructions, outcome: SendOutcome): void;
}

export class Outbox {
  readonly #queue: Queued[];
  #nextId = 0;
  #inFlight: Queued | null = null;
  readonly #outcomes = new Map<number, SendOutcome>();
  /** Items someone waits for (an update): only their outcomes are kept. */
  readonly #awaited = new Set<number>();
  /** Sends finished (answered or failed) so far in this run: waits compare it to notice a send. */
  settled = 0;
  /**
   * Set before continue-as-new: no new send starts, so what is queued is handed to the next run.
   * Items an update waits for are still sent (with everything queued before them, to keep the order).
   */
  #handingOver = false;

  constructor(pending: OutgoingInstructions[] = []) {
    this.#queue = pending.map((item) => ({ ...item, id: this.#nextId++ }));
  }

  get size(): number {
    return this.#queue.length;
  }

  /** What the queue weighs as continue-as-new would carry it, in bytes of JSON. */
  get bytes(): number {
    return jsonBytes(this.pending());
  }

  get sending(): boolean {
    return this.#inFlight !== null;
  }

  /** Nothing queued and nothing on the wire. */
  get idle(): boolean {
    return this.#queue.length === 0 && this.#inFlight === null;
  }

  /** Whether a TOTP code is queued or on the wire (one per request is enough). */
  get holdsTotp(): boolean {
    return this.#inFlight?.totp === true || this.#queue.some((item) => item.totp);
  }

  /** Set once continue-as-new is under way (see #handingOver). */
  get handingOver(): boolean {
    return this.#handingOver;
  }

  /** Codes queued or on the wire. */
  get codesInHand(): string[] {
    return [...(this.#inFlight ? [this.#inFlight] : []), ...this.#queue].flatMap((item) =>
      item.code ? [item.code] : [],
    );
  }

  enqueue(item: OutgoingInstructions): number {
    const id = this.#nextId++;
    this.#queue.push({ ...item, id });
    return id;
  }

  /** Waits for the item's outcome: BrowserAI's answer, or the error that ended it. */
  async outcomeOf(id: number): Promise<TaskExecutionAnswer> {
    this.#awaited.add(id);
    await condition(() => this.#outcomes.has(id));
    const outcome = this.#outcomes.get(id)!;
    this.#outcomes.delete(id);
    this.#awaited.delete(id);
    if ('error' in outcome) throw outcome.error;
    return outcome.answer;
  }

  /** Sends queued items one at a time, in arrival order, for as long as the session runs. */
  async sendForever(sender: OutboxSender): Promise<never> {
    for (;;) {
      await condition(
        () => this.#queue.length > 0 && (!this.#handingOver || this.#queue.some((item) => this.#awaited.has(item.id))),
      );
      const item = this.#queue.shift()!;
      const refused = sender.refusal();
      if (refused) {
        this.#settle(item, { error: refused }, sender);
        continue;
      }
      this.#inFlight = item;
      let outcome: SendOutcome;
      try {
        // Once sent, an instruction is not taken back: let it finish so we know what BrowserAI got.
        outcome = { answer: await CancellationScope.nonCancellable(() => sender.send(item)) };
      } catch (err) {
        outcome = { error: rootFailure(err) };
      }
      this.#inFlight = null;
      this.#settle(item, outcome, sender);
    }
  }

  /** Answers every item still queued with `error`: nothing will send them any more. */
  refuseRemaining(error: Error): void {
    for (const item of this.#queue.splice(0)) if (this.#awaited.has(item.id)) this.#outcomes.set(item.id, { error });
  }

  /** Stops starting sends (see #handingOver); continue-as-new then waits for the one on the wire. */
  handOver(): void {
    this.#handingOver = true;
  }

  /** What continue-as-new carries: the items not sent yet, in order. */
  pending(): OutgoingInstructions[] {
    return this.#queue.map(({ id: _id, ...item }) => item);
  }

  #settle(item: Queued, outcome: SendOutcome, sender: OutboxSender): void {
    if (this.#awaited.has(item.id)) this.#outcomes.set(item.id, outcome);
    this.settled++;
    sender.sent(item, outcome);
  }
}
