// Who holds a fleet slot, who waits for one, and who gets the next free one. Pure (no Temporal
// calls): the limiter workflow (limiter.ts) owns one and carries it across continue-as-new.
//
// The order: the lower `priority` number first (Temporal's convention: 1 first, 5 last); within a
// priority, start-time fair queuing over the fairness keys; within a key, arrival order. Each
// waiter gets its turn when it arrives and keeps it: its key's next turn, or the priority's clock
// (the turn of its last grant) if that is later, and the key's next turn moves on by 1/weight. So a
// key with weight 2 gets two turns to another key's one, a key that starts waiting neither jumps
// ahead with credit from an idle spell nor queues behind turns others took before it came, and the
// line is an ordered set whose order never changes while a waiter waits: an acquire, a grant and a
// release cost O(log n), and a position is the waiter's rank (docs/design/fleet-limit.md).
//
// A project at its own limit is passed over, not waited behind: each project keeps its own queue,
// and only the heads of projects with room compete for a free slot.
import { OrderedSet } from '@js-sdsl/ordered-set';
import type { FleetLimits, SlotHolder, SlotRequest, SlotTicket } from '../../contract/fleet-messages';

/** A waiter in line: its request, since when, and its place (fixed while it waits). */
interface Waiter extends SlotRequest {
  sinceMs: number;
  arrival: number;
  turn: number;
}

/** The holders and the line, as continue-as-new carries them (JSON). */
export interface SlotsRecord {
  holders: SlotHolder[];
  /**
   * The head of the line, in order: `[workflowId, firstRunId, class, sinceMs, arrival, turn]`, with
   * its project, priority, fairness key and weight in `classes` (most waiters share a few).
   */
  waiters: [workflowId: string, firstRunId: string, cls: number, sinceMs: number, arrival: number, turn: number][];
  classes: [project: string, priority: number, fairnessKey: string, fairnessWeight: number][];
  /** Per fairness key (`priority:key`), the turn its next waiter gets, when later than the clock. */
  tails: Record<string, number>;
  /** Per priority, the turn of the last grant. */
  clocks: Record<string, number>;
  /** Arrivals so far in this lineage: orders waiters of one turn. */
  arrivals: number;
}

export function emptySlots(): SlotsRecord {
  return { holders: [], waiters: [], classes: [], tails: {}, clocks: {}, arrivals: 0 };
}

/** The answer to an acquire, before any grant is signalled. */
export type Admission = { held: true } | { held: false; position: number; waiter: Readonly<Waiter> };

const byTurn = (a: Waiter, b: Waiter): number =>
  a.priority - b.priority || a.turn - b.turn || a.arrival - b.arrival || compareText(a.holderId, b.holderId);

export class Slots {
  readonly #holders = new Map<string, SlotHolder>();
  readonly #heldPerProject = new Map<string, number>();
  readonly #waiters = new Map<string, Waiter>();
  /** Every waiter, in grant order (project limits aside), indexed: a position is a rank. */
  readonly #line = new OrderedSet<Waiter>([], byTurn, true);
  /** Each project's waiters, in grant order. */
  readonly #projects = new Map<string, OrderedSet<Waiter>>();
  /** The first waiter of each project that has room: the next grant is the first of these. */
  readonly #heads = new OrderedSet<Waiter>([], byTurn);
  readonly #tails: Map<string, number>;
  readonly #clocks: Map<number, number>;
  #arrivals: number;
  /** False while a new limiter takes its census: requests queue, nothing is granted. */
  granting = true;

  constructor(
    record: SlotsRecord,
    public limits: FleetLimits,
  ) {
    this.#tails = new Map(Object.entries(record.tails));
    this.#clocks = new Map(Object.entries(record.clocks).map(([priority, turn]) => [Number(priority), turn]));
    this.#arrivals = record.arrivals;
    for (const holder of record.holders) this.#hold(holder);
    for (const [workflowId, firstRunId, cls, sinceMs, arrival, turn] of record.waiters) {
      const [project, priority, fairnessKey, fairnessWeight] = record.classes[cls]!;
      const holderId = `${workflowId}/${firstRunId}`;
      this.#enqueue({
        holderId,
        workflowId,
        runId: firstRunId,
        project,
        priority,
        fairnessKey,
        fairnessWeight,
        sinceMs,
        arrival,
        turn,
      });
    }
  }

  get held(): number {
    return this.#holders.size;
  }

  get waiting(): number {
    return this.#waiters.size;
  }

  get holders(): SlotHolder[] {
    return [...this.#holders.values()];
  }

  holderOf(holderId: string): SlotHolder | undefined {
    return this.#holders.get(holderId);
  }

  waiterOf(holderId: string): Readonly<Waiter> | undefined {
    return this.#waiters.get(holderId);
  }

  /**
   * Queues the request (once: a repeat of a held or queued request changes nothing) and grants what
   * the limits allow. `granted` lists every waiter who got a slot now, the requester among them. A
   * waiter that asks again with the ticket this lineage gave it (it was not carried across a
   * continue-as-new, or it asks after a grant it never heard of) gets its old place back.
   */
  request(request: SlotRequest, nowMs: number, ticket?: SlotTicket): { admission: Admission; granted: SlotHolder[] } {
    // Counted by a census while its create was on its way: it asks now, so it had no slot. It gets in line.
    if (this.#holders.get(request.holderId)?.provisional) this.#free(request.holderId);
    if (!this.#holders.has(request.holderId) && !this.#waiters.has(request.holderId)) {
      const place = ticket ? { sinceMs: ticket.sinceMs, arrival: ticket.arrival, turn: ticket.turn } : undefined;
      this.#enqueue({ ...request, ...(place ?? this.#nextPlace(request, nowMs)) });
    }
    const granted = this.grant(nowMs);
    return { admission: this.admission(request.holderId), granted };
  }

  admission(holderId: string): Admission {
    if (this.#holders.has(holderId)) return { held: true };
    const waiter = this.#waiters.get(holderId)!;
    return { held: false, position: this.position(holderId), waiter };
  }

  /**
   * Counts a workflow as holding a slot without granting it one: a holder a new limiter found still
   * running (its census), which may put the count over the limit until holders end. A `provisional`
   * one (its create was on its way: a lost limiter may have granted it) gives the claim up when it
   * asks, and one this limiter has in line already is not claimed: it asked, so it was not granted.
   */
  claim(holder: SlotHolder): void {
    if (this.#holders.has(holder.holderId)) return;
    if (holder.provisional && this.#waiters.has(holder.holderId)) return;
    this.#unqueue(holder.holderId);
    this.#hold(holder);
  }

  /** Frees a held slot or drops a waiter; false when the holder was neither. */
  release(holderId: string): boolean {
    return this.#free(holderId) || this.#unqueue(holderId);
  }

  /** Frees a held slot (granting nothing yet); false when it was not held. */
  #free(holderId: string): boolean {
    const holder = this.#holders.get(holderId);
    if (!holder) return false;
    this.#holders.delete(holderId);
    const held = (this.#heldPerProject.get(holder.project) ?? 1) - 1;
    if (held > 0) this.#heldPerProject.set(holder.project, held);
    else this.#heldPerProject.delete(holder.project);
    this.#offerHead(holder.project);
    return true;
  }

  /** Grants free slots in order, as long as some waiter may take one. */
  grant(nowMs: number): SlotHolder[] {
    const granted: SlotHolder[] = [];
    while (this.granting && this.#holders.size < this.limits.maxRunning && this.#heads.length > 0) {
      const next = this.#heads.front()!;
      this.#unqueue(next.holderId);
      this.#clocks.set(next.priority, Math.max(this.#clocks.get(next.priority) ?? 0, next.turn));
      const holder: SlotHolder = {
        holderId: next.holderId,
        workflowId: next.workflowId,
        runId: next.runId,
        project: next.project,
        sinceMs: nowMs,
        waitedMs: nowMs - next.sinceMs,
      };
      this.#hold(holder);
      granted.push(holder);
    }
    return granted;
  }

  /** The new limits, in force at once: the projects' room is worked out again. */
  setLimits(limits: FleetLimits): void {
    this.limits = limits;
    this.#heads.clear();
    for (const project of this.#projects.keys()) this.#offerHead(project);
  }

  /** 1 for the waiter a free slot goes to next (project limits aside); 0 for one not in line. */
  position(holderId: string): number {
    const waiter = this.#waiters.get(holderId);
    return waiter ? this.#line.find(waiter).index + 1 : 0;
  }

  /**
   * The record continue-as-new carries: the holders, and the line from its head while it fits in
   * `maxWaiterBytes` (about 100 bytes a waiter). The waiters left out ask again with their tickets
   * (limiter.ts) and get their places back, so the record stays small however long the line.
   */
  toRecord(maxWaiterBytes: number): { record: SlotsRecord; left: number } {
    const classes: SlotsRecord['classes'] = [];
    const classIndex = new Map<string, number>();
    const waiters: SlotsRecord['waiters'] = [];
    let bytes = 0;
    for (const w of this.#line) {
      const key = JSON.stringify([w.project, w.priority, w.fairnessKey, w.fairnessWeight]);
      let cls = classIndex.get(key);
      if (cls === undefined) {
        cls = classes.push([w.project, w.priority, w.fairnessKey, w.fairnessWeight]) - 1;
        classIndex.set(key, cls);
        bytes += key.length;
      }
      const firstRunId = w.holderId.slice(w.workflowId.length + 1);
      const carried: SlotsRecord['waiters'][number] = [w.workflowId, firstRunId, cls, w.sinceMs, w.arrival, w.turn];
      bytes += JSON.stringify(carried).length + 1;
      if (bytes > maxWaiterBytes) break;
      waiters.push(carried);
    }
    const tails: Record<string, number> = {};
    for (const [key, tail] of this.#tails) {
      // A key whose next turn the clock has passed starts at the clock anyway.
      const priority = Number(key.slice(0, key.indexOf(':')));
      if (tail > (this.#clocks.get(priority) ?? 0)) tails[key] = tail;
    }
    const record: SlotsRecord = {
      holders: this.holders,
      waiters,
      classes,
      tails,
      clocks: Object.fromEntries(this.#clocks),
      arrivals: this.#arrivals,
    };
    return { record, left: this.#waiters.size - waiters.length };
  }

  #nextPlace(request: SlotRequest, nowMs: number): Pick<Waiter, 'sinceMs' | 'arrival' | 'turn'> {
    const key = tailKey(request);
    const turn = Math.max(this.#tails.get(key) ?? 0, this.#clocks.get(request.priority) ?? 0);
    this.#tails.set(key, turn + 1 / request.fairnessWeight);
    return { sinceMs: nowMs, arrival: this.#arrivals++, turn };
  }

  #hold(holder: SlotHolder): void {
    this.#holders.set(holder.holderId, holder);
    this.#heldPerProject.set(holder.project, (this.#heldPerProject.get(holder.project) ?? 0) + 1);
    if (!this.#hasRoom(holder.project)) {
      const head = this.#projects.get(holder.project)?.front();
      if (head) this.#heads.eraseElementByKey(head);
    }
  }

  #enqueue(waiter: Waiter): void {
    this.#waiters.set(waiter.holderId, waiter);
    this.#line.insert(waiter);
    let queue = this.#projects.get(waiter.project);
    if (!queue) this.#projects.set(waiter.project, (queue = new OrderedSet<Waiter>([], byTurn)));
    const oldHead = queue.front();
    queue.insert(waiter);
    if (queue.front() === waiter && this.#hasRoom(waiter.project)) {
      if (oldHead) this.#heads.eraseElementByKey(oldHead);
      this.#heads.insert(waiter);
    }
  }

  /** Takes a waiter out of line; false when it was not in it. */
  #unqueue(holderId: string): boolean {
    const waiter = this.#waiters.get(holderId);
    if (!waiter) return false;
    this.#waiters.delete(holderId);
    this.#line.eraseElementByKey(waiter);
    const queue = this.#projects.get(waiter.project)!;
    const wasHead = queue.front() === waiter;
    queue.eraseElementByKey(waiter);
    if (wasHead) {
      this.#heads.eraseElementByKey(waiter);
      if (queue.length === 0) this.#projects.delete(waiter.project);
      else this.#offerHead(waiter.project);
    }
    return true;
  }

  /** Puts the project's first waiter among the heads, if the project has room. */
  #offerHead(project: string): void {
    const head = this.#projects.get(project)?.front();
    if (head && this.#hasRoom(project)) this.#heads.insert(head);
  }

  #hasRoom(project: string): boolean {
    const limit = projectLimit(this.limits, project);
    return limit === undefined || (this.#heldPerProject.get(project) ?? 0) < limit;
  }
}

/** The project's own limit, if it has one (its name, else `*`). */
export function projectLimit(limits: FleetLimits, project: string): number | undefined {
  return limits.perProject?.[project] ?? limits.perProject?.['*'];
}

function tailKey(w: Pick<SlotRequest, 'priority' | 'fairnessKey'>): string {
  return `${w.priority}:${w.fairnessKey}`;
}

export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
