// The fleet limiter: one workflow per BrowserAI account holds the count of tasks running at once.
// Temporal has no limit on running work of a kind (temporalio/temporal#7666), so this is the
// semaphore-workflow pattern of Temporal's mutex samples, grown to N slots with an order
// (docs/design/fleet-limit.md):
// - a task's create activity acquires with update-with-start (the limiter starts on first use),
//   batched per worker; the update answers each "held" or "waiting, position P, ticket T";
// - a waiter gets a `browserAISlotGranted` signal naming it when its turn comes, and asks again
//   with its ticket if it hears nothing for a while (the limiter may have been lost meanwhile);
// - every ending of the task signals `browserAIReleaseSlot` (releasing a waiter drops it from line);
// - a holder that stopped running without a release (terminated, or its run timed out) is found
//   by a check every `checkIntervalMs` and its slot is freed;
// - a limiter started after another was lost (terminated, cancelled, failed) first finds the tasks
//   still holding slots (its census), and grants nothing until it knows them;
// - history stays bounded: the limiter continues as new, carrying its holders and the head of its line.
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
  setWorkflowOptions,
  workflowInfo,
} from '@temporalio/workflow';
import type { BrowserAIActivities } from '../../activities';
import {
  acquireSlotsUpdate,
  fleetLimitsProblems,
  limiterStateQuery,
  releaseSlotSignal,
  setFleetLimitsUpdate,
  slotGrantedSignal,
  type Census,
  type FleetLimits,
  type SlotAnswer,
  type SlotHolder,
} from '../../contract/fleet-messages';
import { whenVersioned } from '../versioning';
import { compareText, emptySlots, Slots, type SlotsRecord } from './slots';

/** What one run of the limiter hands the next. */
export interface LimiterRecord {
  limits: FleetLimits;
  slots: SlotsRecord;
  /** `rejoined` is absent from records carried before the census found waiters. */
  counts: { granted: number; released: number; reclaimed: number; claimed: number; rejoined?: number };
  recentGrants: string[];
  /** When the last grants were made (at most RATE_SAMPLE): how fast the line moves. */
  grantTimes: number[];
  /**
   * Waiters a continue-as-new left out of the record since the limiter last looked for them: when
   * the line it carries runs low, it does (`#refillLine`). Absent from records carried before.
   */
  leftOut?: number;
}

const RECENT_GRANTS = 20;
const RATE_SAMPLE = 200;

/**
 * Continue as new while a run is quick to replay: a worker that does not have the limiter cached
 * replays the whole run inside one workflow task (10 s). An acquire, a grant and a release cost
 * O(log n) at any line, so a replay costs what its activations cost: a run of 2,000 events took
 * 2.4 to 4.4 s to replay on this 2-core machine under load (the bench's line scenario), too near
 * the limit; 1,000 take half. Temporal's own suggestion (at 4 MB by default) comes first when
 * acquires carry long pages.
 */
const MAX_HISTORY_EVENTS = 1_000;
/**
 * The most of the line continue-as-new carries (about 75 bytes a waiter, so the head's 5,000 or
 * so): the input of a run, holders and all, stays under the SDK's 512 KiB payload warning and far
 * from Temporal's 2 MB limit however long the line. The waiters left out are looked for when the
 * line carried runs low (`#refillLine`); one that asks first gets its place back with its ticket.
 */
const MAX_CARRIED_WAITER_BYTES = 400 * 1024;
/**
 * A run that carries fewer waiters than this (or ten times the limit) looks for those its
 * continue-as-new left out: a look asks each waiting task (a query), a minute or two at thousands.
 */
const REFILL_BELOW_WAITERS = 1_000;
/** A waiter far back asks again once its expected wait is over, but at least this often (in check intervals). */
const MAX_ASK_AGAIN_CHECKS = 30;

// The check heartbeats per holder: one whose worker died is retried after 10 s, not after a minute.
// The census asks every running task (a query each), so it may take minutes at 10,000 tasks.
const { browserAIFleetCheckHolders, browserAIFleetCensus, browserAIFleetWaiters } =
  proxyActivities<BrowserAIActivities>({
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '10s',
    retry: { initialInterval: '1s', maximumInterval: '30s' },
  });

/**
 * The fleet limiter of one account (docs/fleet.md): started by the first acquire, it runs for good,
 * continuing as new with `carried`.
 */
export async function browserAIFleetLimiter(limits: FleetLimits, carried?: LimiterRecord): Promise<never> {
  if (carried && !workflowInfo().continuedFromExecutionRunId) {
    throw ApplicationFailure.nonRetryable('The limiter takes its record from continue-as-new only.');
  }
  // A fresh start may follow a lost limiter whose holders still run: it finds them before it grants
  // (acquires queue meanwhile, the first of them delivered as its handler is set).
  const limiter = new Limiter(carried ?? newRecord(limits), { takingCensus: !carried });
  limiter.handleMessages();
  if (!carried) await limiter.takeCensus();
  return limiter.run();
}
// It runs for good: every run moves to the newest Worker Deployment Version at its next workflow task.
setWorkflowOptions(whenVersioned('AUTO_UPGRADE'), browserAIFleetLimiter);

function newRecord(limits: FleetLimits): LimiterRecord {
  return {
    limits,
    slots: emptySlots(),
    counts: { granted: 0, released: 0, reclaimed: 0, claimed: 0, rejoined: 0 },
    recentGrants: [],
    grantTimes: [],
  };
}

class Limiter {
  readonly #record: LimiterRecord;
  readonly #slots: Slots;
  readonly #limiterId = workflowInfo().workflowId;
  readonly #lineage = workflowInfo().firstExecutionRunId;
  /** Grants made that the waiter has not been told of yet. */
  #toTell: SlotHolder[] = [];
  /** Grant signals on their way: the run does not continue as new before they are delivered. */
  readonly #telling = new Set<Promise<void>>();
  /** The limits of workers that asked with others than those in force, warned of once per run. */
  readonly #mismatchesWarned = new Set<string>();
  /** The look for waiters left out of the record, running beside the grants, if any. */
  #refilling: Promise<void> | null = null;
  /** The holders granted a slot while that look runs. */
  #grantedDuringLook: Set<string> | null = null;
  /** The holder check running beside the grants, if any. */
  #checking: Promise<void> | null = null;
  /** A check just ended: the loop wakes to time the next one. */
  #checkEnded = false;
  #nextCheckMs: number;

  constructor(record: LimiterRecord, { takingCensus }: { takingCensus: boolean }) {
    this.#record = record;
    this.#slots = new Slots(record.slots, record.limits);
    this.#slots.granting = !takingCensus;
    this.#nextCheckMs = Date.now() + record.limits.checkIntervalMs;
  }

  handleMessages(): void {
    setHandler(acquireSlotsUpdate, ({ asks, limits }) => {
      this.#warnOfMismatch(limits);
      const now = Date.now();
      for (const { request, ticket } of asks) {
        const { granted } = this.#slots.request(request, now, ticket?.lineage === this.#lineage ? ticket : undefined);
        this.#granted(granted, request.holderId);
      }
      // Answered once the whole batch is in line: a grant made for a later request of the batch
      // may have gone to an earlier one, and the positions count everyone.
      const answers = asks.map(({ request }) => this.#answer(request.holderId));
      return { answers, limits: this.#record.limits };
    });
    setHandler(
      setFleetLimitsUpdate,
      (changes) => {
        const before = this.#record.limits;
        const limits = { ...before, ...changes };
        log.warn('The fleet limits were changed', { before, after: limits });
        this.#record.limits = limits;
        this.#slots.setLimits(limits);
        this.#grant();
        return before;
      },
      {
        validator: (changes) => {
          const problems = fleetLimitsProblems({ ...this.#record.limits, ...changes });
          if (problems.length > 0) throw new Error(`Invalid fleet limits: ${problems.join('; ')}`);
        },
      },
    );
    setHandler(releaseSlotSignal, ({ holderId }) => this.#release(holderId, false));
    setHandler(limiterStateQuery, () => ({
      limits: this.#record.limits,
      held: this.#slots.held,
      waiting: this.#slots.waiting,
      holders: this.#slots.holders,
      ...this.#record.counts,
      recentGrants: this.#record.recentGrants,
      lineage: this.#lineage,
      takingCensus: !this.#slots.granting,
      grantsPerMinute: Math.round(this.#grantsPerMs() * 60_000 * 10) / 10,
    }));
  }

  /**
   * Finds the tasks that still hold slots of a limiter lost before this one started (terminated,
   * cancelled, failed): they count, even over the limit, until they end. Nothing is granted meanwhile.
   */
  async takeCensus(): Promise<void> {
    // A census recorded before it reported waiters has none.
    const { holders, waiters = [] } = await browserAIFleetCensus({
      limiterId: this.#limiterId,
      runId: workflowInfo().runId,
    });
    for (const holder of holders) this.#slots.claim(holder);
    if (holders.length > 0) {
      this.#record.counts.claimed += holders.length;
      log.warn('Found tasks still holding slots of a limiter that was lost; they count until they end', {
        holders: holders.length,
      });
    }
    this.#rejoin(waiters, 'Put the waiters of a limiter that was lost back in line');
    this.#slots.granting = true;
    this.#grant();
  }

  /**
   * Puts waiters found by a census back in line, in the order they waited in (those that asked
   * meanwhile are in it already): none has to ask again first.
   */
  #rejoin(waiters: Census['waiters'], why: string): void {
    const now = Date.now();
    const rejoining = waiters
      .filter(({ request: { holderId } }) => !this.#slots.holderOf(holderId) && !this.#slots.waiterOf(holderId))
      .sort((a, b) => a.sinceMs - b.sinceMs || compareText(a.request.holderId, b.request.holderId));
    for (const { request } of rejoining) this.#slots.request(request, now);
    if (rejoining.length === 0) return;
    this.#record.counts.rejoined = (this.#record.counts.rejoined ?? 0) + rejoining.length;
    log.info(why, { waiters: rejoining.length });
  }

  /**
   * The line this run carries runs low while waiters were left out of it: they are found and put
   * back now, rather than when each would ask again (at its expected wait, up to 30 check intervals:
   * the fleet's slots would stand empty meanwhile).
   */
  async #refillLine(): Promise<void> {
    // A task that said it waits may have asked again since, and been granted, and be done: the
    // look must not queue it again (its grant would hold a slot until a check frees it).
    this.#grantedDuringLook = new Set();
    const waiters = await browserAIFleetWaiters({ limiterId: this.#limiterId });
    const granted = this.#grantedDuringLook;
    this.#grantedDuringLook = null;
    this.#record.leftOut = 0;
    this.#rejoin(
      waiters.filter(({ request }) => !granted.has(request.holderId)),
      'Put the waiters a continue-as-new left out back in line',
    );
    this.#grant();
  }

  async run(): Promise<never> {
    for (;;) {
      // An acquire granted at once tells no one, so a limiter idle when it came (no holder, no check
      // timed) would otherwise sleep on, and a holder terminated then would keep its slot for good.
      const timed = this.#checking === null && this.#slots.held > 0;
      await condition(
        () => this.#toTell.length > 0 || this.#mustContinue() || this.#checkEnded || this.#checkUntimed(timed),
        timed ? Math.max(1, this.#nextCheckMs - Date.now()) : undefined,
      );
      if (this.#checkUntimed(timed) && Date.now() >= this.#nextCheckMs)
        this.#nextCheckMs = Date.now() + this.#record.limits.checkIntervalMs;
      this.#checkEnded = false;
      this.#tellGrants();
      if (this.#refilling === null && (this.#record.leftOut ?? 0) > 0 && this.#slots.waiting < this.#refillBelow()) {
        this.#refilling = this.#refillLine().finally(() => {
          this.#refilling = null;
          this.#checkEnded = true;
        });
      }
      if (this.#checking === null && this.#slots.held > 0 && Date.now() >= this.#nextCheckMs) {
        this.#checking = this.#checkHolders().finally(() => {
          this.#checking = null;
          this.#checkEnded = true;
          this.#nextCheckMs = Date.now() + this.#record.limits.checkIntervalMs;
        });
      }
      if (this.#mustContinue() && this.#toTell.length === 0) {
        await this.#checking;
        await this.#refilling;
        await Promise.all(this.#telling);
        await condition(allHandlersFinished);
        if (this.#toTell.length > 0) continue;
        const { record: slots, left } = this.#slots.toRecord(MAX_CARRIED_WAITER_BYTES);
        if (left > 0)
          log.info('Continuing as new without the back of the line: it is looked for when the line runs low', { left });
        const leftOut = (this.#record.leftOut ?? 0) + left;
        await continueAsNew<typeof browserAIFleetLimiter>(this.#record.limits, {
          ...this.#record,
          slots,
          ...(leftOut > 0 ? { leftOut } : {}),
        });
      }
    }
  }

  #answer(holderId: string): SlotAnswer {
    const admission = this.#slots.admission(holderId);
    if (admission.held) {
      // Granted while this batch queued: its answer says so, so no signal goes out.
      this.#toTell = this.#toTell.filter((h) => h.holderId !== holderId);
      return { held: true };
    }
    const { position, waiter } = admission;
    return {
      held: false,
      position,
      sinceMs: waiter.sinceMs,
      ticket: { lineage: this.#lineage, sinceMs: waiter.sinceMs, arrival: waiter.arrival, turn: waiter.turn },
      askAgainMs: this.#askAgainMs(position),
    };
  }

  /**
   * When a waiter that heard nothing asks again: a check interval at the head of the line (the
   * first of them to ask after a loss starts a new limiter, whose census puts every waiter back in
   * line); further back, once its expected wait is over. A grant on time comes first, so most
   * waiters never ask again: at a line of 10,000, asking at half the wait (as before) made each
   * waiter ask about six times, an activity, a timer and a share of an update each, more actions
   * than the task itself. A waiter a continue-as-new left out (limiter.ts) gets its place back when
   * it asks: ahead of everyone after it, if not before its turn.
   */
  #askAgainMs(position: number): number {
    const { checkIntervalMs: check, maxRunning } = this.#record.limits;
    if (position <= maxRunning) return check;
    const rate = this.#grantsPerMs();
    // Before any grant shows the pace, as if every slot freed once per check interval.
    const wait = rate > 0 ? position / rate : (check * position) / maxRunning;
    return Math.round(Math.min(MAX_ASK_AGAIN_CHECKS * check, Math.max(check, wait)));
  }

  /** The line is looked for its left-out waiters below this many: minutes of grants at most paces. */
  #refillBelow(): number {
    return Math.max(REFILL_BELOW_WAITERS, 10 * this.#record.limits.maxRunning);
  }

  #grantsPerMs(): number {
    const times = this.#record.grantTimes;
    if (times.length < 2) return 0;
    // Slots filled at once (a limiter's first moments) are no pace: until the sample is full it
    // spans a check interval at least. Without this, the 50 grants of a 10,000 line's first second
    // told every waiter a wait of seconds, so all 10,000 asked again a check interval later, at
    // about 20 asks a second, which was all the dev server here could do.
    const floor = times.length < RATE_SAMPLE ? this.#record.limits.checkIntervalMs : 0;
    const span = Math.max(Date.now() - times[0]!, floor);
    return span > 0 ? (times.length - 1) / span : 0;
  }

  #grant(): void {
    this.#granted(this.#slots.grant(Date.now()));
  }

  #granted(holders: SlotHolder[], except?: string): void {
    if (holders.length === 0) return;
    const record = this.#record;
    record.counts.granted += holders.length;
    record.recentGrants = [...record.recentGrants, ...holders.map((h) => h.workflowId)].slice(-RECENT_GRANTS);
    const now = Date.now();
    record.grantTimes = [...record.grantTimes, ...holders.map(() => now)].slice(-RATE_SAMPLE);
    this.#toTell.push(...holders.filter((h) => h.holderId !== except));
    if (this.#grantedDuringLook) for (const { holderId } of holders) this.#grantedDuringLook.add(holderId);
  }

  #release(holderId: string, reclaimed: boolean): void {
    if (!this.#slots.release(holderId)) return;
    this.#record.counts[reclaimed ? 'reclaimed' : 'released']++;
    this.#grant();
  }

  #warnOfMismatch(limits: FleetLimits): void {
    const theirs = JSON.stringify(limits);
    if (theirs === JSON.stringify(this.#record.limits) || this.#mismatchesWarned.has(theirs)) return;
    this.#mismatchesWarned.add(theirs);
    log.warn('A worker asked with other fleet limits than those in force; the limits in force hold', {
      inForce: this.#record.limits,
      asked: limits,
    });
  }

  #mustContinue(): boolean {
    return workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > MAX_HISTORY_EVENTS;
  }

  /** Holders that no check is timed for yet: the loop must wake to time one. */
  #checkUntimed(timed: boolean): boolean {
    return !timed && this.#checking === null && this.#slots.held > 0;
  }

  async #checkHolders(): Promise<void> {
    const gone = await browserAIFleetCheckHolders(
      this.#slots.holders.map(({ holderId, workflowId, runId }) => ({ holderId, workflowId, runId })),
    );
    for (const holderId of gone) {
      log.warn('Freed the fleet slot of a task that stopped running without releasing it', { holderId });
      this.#release(holderId, true);
    }
  }

  /**
   * Each grant is told on its own: awaiting a batch's deliveries before the next batch held every
   * later grant behind the slowest signal (p90 37 s, max 80 s in the bench's fleet scenario, after
   * an outage), and slots stood free while tasks waited.
   */
  #tellGrants(): void {
    for (const holder of this.#toTell) {
      const told: Promise<void> = this.#tell(holder).finally(() => this.#telling.delete(told));
      this.#telling.add(told);
    }
    this.#toTell = [];
  }

  /** Tells a waiter its slot is held; a waiter that is gone frees it again at once. */
  async #tell(holder: SlotHolder): Promise<void> {
    try {
      await getExternalWorkflowHandle(holder.workflowId).signal(slotGrantedSignal, {
        limiterId: this.#limiterId,
        waitedMs: holder.waitedMs,
        holderId: holder.holderId,
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('A task granted a fleet slot no longer runs; the slot goes to the next', { holderId: holder.holderId });
      this.#release(holder.holderId, true);
    }
  }
}
