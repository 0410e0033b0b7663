// The fleet limiter: one workflow per BrowserAI account holds the count of tasks running at once.
// Temporal has no limit on running work of a kind (temporalio/temporal#7666), so this is the
// semaphore-workflow pattern of Temporal's mutex samples, grown to N slots with an order:
// - a task's create activity acquires with update-with-start (the limiter starts on first use),
//   batched per worker; the update answers each "held" or "waiting, position P";
// - a waiter gets a `browserAISlotGranted` signal when its turn comes;
// - every ending of the task signals `browserAIReleaseSlot` (releasing a waiter drops it from line);
// - a holder that stopped running without a release (terminated, or its run timed out) is found
//   by a check every `checkIntervalMs` and its slot is freed;
// - history stays bounded: the limiter continues as new, carrying its holders and its line.
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
import {
  acquireSlotsUpdate,
  limiterStateQuery,
  releaseSlotSignal,
  slotGrantedSignal,
  type FleetLimits,
  type SlotAnswer,
  type SlotHolder,
} from '../../contract/fleet-messages';
import { emptySlots, Slots, type SlotsRecord } from './slots';

/** What one run of the limiter hands the next. */
export interface LimiterRecord {
  limits: FleetLimits;
  slots: SlotsRecord;
  counts: { granted: number; released: number; reclaimed: number };
  recentGrants: string[];
}

const RECENT_GRANTS = 20;

/**
 * Continue as new while a run is still quick to replay: a worker that does not have the limiter
 * cached (the one that had it was killed, or an outage cut it off) replays the whole run inside one
 * 10-s workflow task. A run of 3,940 events (1.3 MB) took 40 s to replay on a loaded 2-core machine
 * in the bench's fleet scenario: every attempt timed out and no slot was granted meanwhile. The
 * carried record is one event, however long the line.
 */
const MAX_HISTORY_EVENTS = 500;

// The check heartbeats per holder: one whose worker died is retried after 10 s, not after a minute.
const { browserAIFleetCheckHolders } = proxyActivities<BrowserAIActivities>({
  startToCloseTimeout: '5 minutes',
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
  const record: LimiterRecord = carried ?? {
    limits,
    slots: emptySlots(),
    counts: { granted: 0, released: 0, reclaimed: 0 },
    recentGrants: [],
  };
  const slots = new Slots(record.slots, record.limits);
  const limiterId = workflowInfo().workflowId;
  /** Grants made that the waiter has not been told of yet. */
  let toTell: SlotHolder[] = [];
  /** Grant signals on their way: the run does not continue as new before they are delivered. */
  const telling = new Set<Promise<void>>();
  const granted = (holders: SlotHolder[], except?: string) => {
    record.counts.granted += holders.length;
    record.recentGrants = [...record.recentGrants, ...holders.map((h) => h.workflowId)].slice(-RECENT_GRANTS);
    toTell.push(...holders.filter((h) => h.holderId !== except));
  };
  const release = (holderId: string, reclaimed: boolean) => {
    if (!slots.release(holderId)) return;
    record.counts[reclaimed ? 'reclaimed' : 'released']++;
    granted(slots.grant(Date.now()));
  };

  setHandler(acquireSlotsUpdate, ({ requests, limits: sent }) => {
    // The workers' configuration wins as it changes: the latest acquire carries it.
    record.limits = sent;
    slots.limits = sent;
    const now = Date.now();
    const answers: SlotAnswer[] = [];
    for (const request of requests) {
      const { granted: grantedNow } = slots.request(request, now);
      // The requester's own grant is its answer: no signal needed.
      granted(grantedNow, request.holderId);
    }
    // Answered once the whole batch is in line: a grant made for a later request of the batch
    // may have gone to an earlier one, and the positions count everyone.
    for (const request of requests) {
      const waiter = record.slots.waiting.find((w) => w.holderId === request.holderId);
      if (!waiter) {
        answers.push({ held: true });
        // Granted while this batch queued: its answer says so, so no signal goes out.
        toTell = toTell.filter((h) => h.holderId !== request.holderId);
      } else answers.push({ held: false, position: slots.position(request.holderId), sinceMs: waiter.sinceMs });
    }
    return answers;
  });
  setHandler(releaseSlotSignal, ({ holderId }) => release(holderId, false));
  setHandler(limiterStateQuery, () => ({
    limits: record.limits,
    held: slots.held,
    waiting: record.slots.waiting.length,
    holders: record.slots.holders,
    ...record.counts,
    recentGrants: record.recentGrants,
  }));

  let nextCheckMs = Date.now() + record.limits.checkIntervalMs;
  // The check runs beside the grants, never in their way: a slow or retried check delays no one.
  let checking: Promise<void> | null = null;
  /** A check just ended: the loop wakes to time the next one. */
  let checkEnded = false;
  const checkHolders = async () => {
    const gone = await browserAIFleetCheckHolders(
      record.slots.holders.map(({ holderId, workflowId, runId }) => ({ holderId, workflowId, runId })),
    );
    for (const holderId of gone) {
      log.warn('Freed the fleet slot of a task that stopped running without releasing it', { holderId });
      release(holderId, true);
    }
  };
  const mustContinue = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > MAX_HISTORY_EVENTS;
  /** Holders that no check is timed for yet: the loop must wake to time one. */
  const checkUntimed = (timed: boolean) => !timed && checking === null && slots.held > 0;
  for (;;) {
    // An acquire granted at once tells no one, so a limiter idle when it came (no holder, no check
    // timed) would otherwise sleep on, and a holder terminated then would keep its slot for good.
    const timed = checking === null && slots.held > 0;
    await condition(
      () => toTell.length > 0 || mustContinue() || checkEnded || checkUntimed(timed),
      timed ? Math.max(1, nextCheckMs - Date.now()) : undefined,
    );
    if (checkUntimed(timed) && Date.now() >= nextCheckMs) nextCheckMs = Date.now() + record.limits.checkIntervalMs;
    checkEnded = false;
    // Each grant is told on its own: awaiting a batch's deliveries before the next batch held every
    // later grant behind the slowest signal (p90 37 s, max 80 s in the bench's fleet scenario, after
    // an outage), and slots stood free while tasks waited.
    for (const holder of toTell) {
      const told: Promise<void> = tell(holder).finally(() => telling.delete(told));
      telling.add(told);
    }
    toTell = [];
    if (checking === null && slots.held > 0 && Date.now() >= nextCheckMs) {
      checking = checkHolders().finally(() => {
        checking = null;
        checkEnded = true;
        nextCheckMs = Date.now() + record.limits.checkIntervalMs;
      });
    }
    if (mustContinue() && toTell.length === 0) {
      await checking;
      await Promise.all(telling);
      await condition(allHandlersFinished);
      if (toTell.length > 0) continue;
      slots.prune();
      await continueAsNew<typeof browserAIFleetLimiter>(record.limits, record);
    }
  }

  /** Tells a waiter its slot is held; a waiter that is gone frees it again at once. */
  async function tell(holder: SlotHolder): Promise<void> {
    try {
      await getExternalWorkflowHandle(holder.workflowId).signal(slotGrantedSignal, {
        limiterId,
        waitedMs: holder.waitedMs,
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('A task granted a fleet slot no longer runs; the slot goes to the next', { holderId: holder.holderId });
      release(holder.holderId, true);
    }
  }
}
