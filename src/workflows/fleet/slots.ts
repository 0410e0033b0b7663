// Who holds a fleet slot and who waits for one, and who gets the next free one. Pure (no
// Temporal calls): the limiter workflow (limiter.ts) owns one and carries it across
// continue-as-new as plain JSON.
//
// The order: the lower `priority` number first (Temporal's convention: 1 first, 5 last); within a
// priority, the fairness keys take turns in proportion to their weights (start-time fair queuing:
// each key has a pass that advances by 1/weight per grant, the key with the lowest pass goes
// next), and each key's waiters go in arrival order. A waiter whose project is at its own limit is passed
// over, not blocked behind: the next one in the order gets the slot.
import type { FleetLimits, SlotHolder, SlotRequest, SlotWaiter } from '../../contract/fleet-messages';

/** The limiter's holders and line, carried across its continue-as-new runs. */
export interface SlotsRecord {
  holders: SlotHolder[];
  waiting: SlotWaiter[];
  /** The pass of each fairness key, per priority ("3:tenant-a"): where its next turn lies. */
  passes: Record<string, number>;
  /**
   * Per priority, the pass of the last grant: a key that starts waiting starts there (or at its
   * own pass, if later), so it neither jumps ahead with credit from an idle spell nor queues
   * behind turns the others took before it came.
   */
  clocks?: Record<string, number>;
  /** Arrivals so far: orders waiters of one key, and ties between keys. */
  arrivals: number;
}

export function emptySlots(): SlotsRecord {
  return { holders: [], waiting: [], passes: {}, arrivals: 0 };
}

/** The answer to an acquire, before any grant is signalled. */
export type Admission = { held: true } | { held: false; position: number };

export class Slots {
  constructor(
    readonly record: SlotsRecord,
    public limits: FleetLimits,
  ) {}

  get held(): number {
    return this.record.holders.length;
  }

  holderOf(holderId: string): SlotHolder | undefined {
    return this.record.holders.find((h) => h.holderId === holderId);
  }

  /**
   * Queues the request (once: a repeat of a held or queued request changes nothing) and grants what
   * the limits allow. `granted` lists every waiter who got a slot now, the requester among them.
   */
  request(request: SlotRequest, nowMs: number): { admission: Admission; granted: SlotHolder[] } {
    if (!this.holderOf(request.holderId) && !this.#waiterOf(request.holderId)) {
      const key = passKey(request);
      const clock = this.#clock(request.priority);
      this.record.passes[key] = Math.max(this.record.passes[key] ?? clock, clock);
      this.record.waiting.push({ ...request, sinceMs: nowMs, arrival: this.record.arrivals++ });
    }
    const granted = this.grant(nowMs);
    return { admission: this.admission(request.holderId), granted };
  }

  admission(holderId: string): Admission {
    if (this.holderOf(holderId)) return { held: true };
    return { held: false, position: this.position(holderId) };
  }

  /** Frees a held slot or drops a waiter; false when the holder was neither. */
  release(holderId: string): boolean {
    const before = this.record.holders.length + this.record.waiting.length;
    this.record.holders = this.record.holders.filter((h) => h.holderId !== holderId);
    this.record.waiting = this.record.waiting.filter((w) => w.holderId !== holderId);
    return this.record.holders.length + this.record.waiting.length < before;
  }

  /** Grants free slots in order, as long as some waiter may take one. */
  grant(nowMs: number): SlotHolder[] {
    const granted: SlotHolder[] = [];
    for (;;) {
      if (this.record.holders.length >= this.limits.maxRunning) return granted;
      const next = this.#next();
      if (!next) return granted;
      this.record.waiting = this.record.waiting.filter((w) => w !== next);
      const key = passKey(next);
      const pass = this.record.passes[key] ?? this.#clock(next.priority);
      (this.record.clocks ??= {})[next.priority] = pass;
      this.record.passes[key] = pass + 1 / next.fairnessWeight;
      const holder: SlotHolder = {
        holderId: next.holderId,
        workflowId: next.workflowId,
        runId: next.runId,
        project: next.project,
        sinceMs: nowMs,
        waitedMs: nowMs - next.sinceMs,
      };
      this.record.holders.push(holder);
      granted.push(holder);
    }
  }

  /**
   * 1 for the waiter a free slot goes to next (project limits aside). Each waiter's turn is its
   * key's pass plus its rank among the key's waiters over the key's weight: one pass over the queue.
   */
  position(holderId: string): number {
    const me = this.#waiterOf(holderId);
    if (!me) return 0;
    const ranks = new Map<string, number>();
    const turn = new Map<SlotWaiter, number>();
    for (const w of [...this.record.waiting].sort((a, b) => a.arrival - b.arrival)) {
      const key = passKey(w);
      const rank = ranks.get(key) ?? 0;
      ranks.set(key, rank + 1);
      turn.set(w, (this.record.passes[key] ?? this.#clock(w.priority)) + rank / w.fairnessWeight);
    }
    const mine = turn.get(me)!;
    let ahead = 0;
    for (const [w, t] of turn) {
      if (w === me) continue;
      if (
        w.priority < me.priority ||
        (w.priority === me.priority && (t < mine || (t === mine && w.arrival < me.arrival)))
      )
        ahead++;
    }
    return ahead + 1;
  }

  #next(): SlotWaiter | undefined {
    const eligible = this.record.waiting.filter((w) => this.#projectHasRoom(w.project));
    if (eligible.length === 0) return undefined;
    return pick(eligible, this.record.passes, (p) => this.#clock(p));
  }

  #clock(priority: number): number {
    return this.record.clocks?.[priority] ?? 0;
  }

  #projectHasRoom(project: string): boolean {
    const limit = projectLimit(this.limits, project);
    if (limit === undefined) return true;
    return this.record.holders.filter((h) => h.project === project).length < limit;
  }

  #waiterOf(holderId: string): SlotWaiter | undefined {
    return this.record.waiting.find((w) => w.holderId === holderId);
  }

  /** Forgets the passes of keys nobody waits for: the record stays as small as the queue. */
  prune(): void {
    const live = new Set(this.record.waiting.map(passKey));
    for (const key of Object.keys(this.record.passes)) if (!live.has(key)) delete this.record.passes[key];
  }
}

/** The project's own limit, if it has one (its name, else `*`). */
export function projectLimit(limits: FleetLimits, project: string): number | undefined {
  return limits.perProject?.[project] ?? limits.perProject?.['*'];
}

function passKey(w: Pick<SlotWaiter, 'priority' | 'fairnessKey'>): string {
  return `${w.priority}:${w.fairnessKey}`;
}

/** The waiter to go next: lowest priority number, then lowest pass of its key, then earliest arrival. */
function pick(waiting: SlotWaiter[], passes: Record<string, number>, clock: (priority: number) => number): SlotWaiter {
  const top = Math.min(...waiting.map((w) => w.priority));
  const start = clock(top);
  let best: SlotWaiter | undefined;
  let bestPass = Infinity;
  for (const w of waiting) {
    if (w.priority !== top) continue;
    const pass = passes[passKey(w)] ?? start;
    if (pass < bestPass || (pass === bestPass && w.arrival < best!.arrival)) {
      best = w;
      bestPass = pass;
    }
  }
  return best!;
}
