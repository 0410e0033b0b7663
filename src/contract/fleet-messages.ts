// The fleet limiter's messages and the shapes they carry: what a task's create activity sends
// to acquire a slot, what the limiter signals back, and what a task sends to let go of it.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

/**
 * The limits a limiter enforces. A new limiter takes those of the worker that starts it; after that
 * they change only by `setFleetLimitsUpdate` (docs/fleet.md, "Changing the limit"): a worker
 * configured otherwise is served under the limiter's and warns.
 */
export interface FleetLimits {
  /** At most this many BrowserAI tasks hold a slot at once, across the fleet. */
  maxRunning: number;
  /**
   * Lower limits for single projects, by project name; `*` applies to every project not named.
   * A project limit above `maxRunning` changes nothing.
   */
  perProject?: Record<string, number>;
  /** How often the limiter checks that its holders still run (a terminated one frees its slot); ms. */
  checkIntervalMs: number;
}

/** What is wrong with limits, for a worker to refuse at start and the limiter to refuse a change; empty when nothing. */
export function fleetLimitsProblems(limits: Partial<FleetLimits>): string[] {
  const problems: string[] = [];
  const count = (value: unknown) => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 100_000;
  if (!count(limits.maxRunning))
    problems.push(`fleet limit maxRunning must be an integer from 1 to 100000 (got ${String(limits.maxRunning)})`);
  for (const [project, limit] of Object.entries(limits.perProject ?? {})) {
    if (!count(limit))
      problems.push(`fleet limit of project ${project} must be an integer from 1 to 100000 (got ${String(limit)})`);
  }
  const check = limits.checkIntervalMs;
  if (check !== undefined && !(Number.isInteger(check) && check >= 1_000 && check <= 3_600_000))
    problems.push(`fleet limit checkIntervalMs must be an integer from 1000 to 3600000 (got ${String(check)})`);
  return problems;
}

/** The status a task shows (state, `BrowserAIStatus`, the UI) while it waits for a fleet slot. */
export const WAITING_FOR_SLOT = 'waiting_for_slot';

/** A workflow asking for a slot. Its `holderId` names it across continue-as-new and ID reuse. */
export interface SlotRequest {
  /** `workflowId/firstExecutionRunId`: the workflow, not one run of it. */
  holderId: string;
  workflowId: string;
  /** The run that asked (the create runs in the first run, so it is the first run's ID too). */
  runId: string;
  project: string;
  /** 1 (first) to 5 (last), as Temporal's task priorities. */
  priority: number;
  fairnessKey: string;
  /** The key's share relative to other keys; 1 by default. */
  fairnessWeight: number;
}

/**
 * A waiter's place in one limiter lineage (its runs from one start, across continue-as-new): given in
 * the waiting answer, shown again when the waiter asks again, so a waiter the lineage no longer
 * carries (limiter.ts) gets its place back. Another lineage ignores it.
 */
export interface SlotTicket {
  /** The limiter's first run ID since it last started: its lineage. */
  lineage: string;
  sinceMs: number;
  arrival: number;
  turn: number;
}

/** An acquire: the request, and the ticket of the waiter's last answer when it asks again. */
export interface SlotAsk {
  request: SlotRequest;
  ticket?: SlotTicket;
}

/** A workflow that holds a slot, and since when. */
export interface SlotHolder {
  holderId: string;
  workflowId: string;
  runId: string;
  project: string;
  sinceMs: number;
  /** How long it waited in line before the slot was granted. */
  waitedMs: number;
  /**
   * Counted by a new limiter's census while its create was on its way (a lost limiter may have
   * granted it): the claim is given up if it asks for a slot after all.
   */
  provisional?: true;
}

/**
 * What the acquire update answers: a slot now, or a place in line. A grant signal follows; a waiter
 * that has heard none after `askAgainMs` asks again (the limiter may have been lost meanwhile).
 */
export type SlotAnswer =
  { held: true } | { held: false; position: number; sinceMs: number; ticket: SlotTicket; askAgainMs: number };

/** The acquire update's answer: one per request, in order, and the limits the limiter enforces. */
export interface SlotAnswers {
  answers: SlotAnswer[];
  limits: FleetLimits;
}

/** What a task says of its fleet slot (`fleetSlotQuery`): a new limiter's census reads it. */
export interface TaskSlotReport {
  /** `workflowId/firstExecutionRunId`. */
  holderId: string;
  project: string;
  /** The limiter the task holds a slot of or waits at; null before its create asked one. */
  limiterId: string | null;
  held: boolean;
  /** Its create is on its way (it may have just been granted a slot it has not recorded yet). */
  creating: boolean;
  /**
   * While it waits in line at `limiterId` (its create not on its way): what it asked, so that a new
   * limiter's census puts it back in line, in the order of `sinceMs`, without waiting for its ask.
   */
  waiting?: { request: SlotRequest; sinceMs: number };
}

/** What a new limiter's census found: the tasks still holding slots, and those waiting in line. */
export interface Census {
  /** Running tasks that hold a slot of the lost limiter, or whose create was on its way (provisional). */
  holders: SlotHolder[];
  /** Running tasks waiting in the lost limiter's line: what each asked, and since when. */
  waiters: NonNullable<TaskSlotReport['waiting']>[];
}

/** The limiter's view: for `temporal workflow query`, the bench, and the tests. */
export interface LimiterState {
  limits: FleetLimits;
  held: number;
  waiting: number;
  holders: SlotHolder[];
  /** Grants and releases since the limiter first started (all runs). */
  granted: number;
  released: number;
  /** Slots freed because their holder had stopped running without a release (terminated, timed out). */
  reclaimed: number;
  /** The workflow IDs of the last grants (at most 20), oldest first: who got slots lately, in order. */
  recentGrants: string[];
  /** Holders a new limiter found still running after the one before it was lost (its census). */
  claimed: number;
  /** Waiters a new limiter found in its census and put back in line (they did not have to ask again). */
  rejoined?: number;
  /** The limiter's first run ID since it last started: tickets of another lineage are ignored. */
  lineage: string;
  /** True while a new limiter looks for holders a lost one left: it grants nothing meanwhile. */
  takingCensus: boolean;
  /** Grants a minute over the last grants: how fast the line moves. */
  grantsPerMinute: number;
}

/**
 * Asks for slots for a batch of workflows (one worker's creates of the moment: Temporal lets a
 * workflow have only 10 updates in flight, so each worker sends one at a time), answered in order.
 */
export const acquireSlotsUpdate = defineUpdate<SlotAnswers, [{ asks: SlotAsk[]; limits: FleetLimits }]>(
  'browserAIAcquireSlots',
);
/**
 * Changes the limits in force (an operator's act: `temporal workflow update execute --name
 * browserAISetFleetLimits --input '{"maxRunning": 80}'`): the fields given replace those in force.
 * Answers the limits before; logged by the limiter.
 */
export const setFleetLimitsUpdate = defineUpdate<FleetLimits, [Partial<FleetLimits>]>('browserAISetFleetLimits');
/** Sent by a task on every ending (and by a create refused for good): frees its slot, or drops it from the line. */
export const releaseSlotSignal = defineSignal<[{ holderId: string }]>('browserAIReleaseSlot');
/**
 * Sent by the limiter to a waiting task: its slot is held for it now. It names the workflow by its
 * `holderId`: a later workflow under the same ID (terminated and started again) does not take it.
 */
export const slotGrantedSignal =
  defineSignal<[{ limiterId: string; waitedMs: number; holderId?: string }]>('browserAISlotGranted');
/** A task's fleet slot as it knows it: a new limiter asks every running task (its census). */
export const fleetSlotQuery = defineQuery<TaskSlotReport>('browserAIFleetSlot');
/** The limiter's holders, line length and counts (`temporal workflow query --type browserAILimiterState`). */
export const limiterStateQuery = defineQuery<LimiterState>('browserAILimiterState');
