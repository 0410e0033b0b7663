// The fleet limiter's messages and the shapes they carry: what a task's create activity sends
// to acquire a slot, what the limiter signals back, and what a task sends to let go of it.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

/** The limits a limiter enforces: set by the workers (every acquire carries the sender's). */
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

/** A workflow in line for a slot: since when, and its arrival number (the order within its key). */
export interface SlotWaiter extends SlotRequest {
  sinceMs: number;
  arrival: number;
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
}

/** What the acquire update answers: a slot now, or a place in line (a grant signal follows). */
export type SlotAnswer = { held: true } | { held: false; position: number; sinceMs: number };

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
}

/**
 * Asks for slots for a batch of workflows (one worker's creates of the moment: Temporal lets a
 * workflow have only 10 updates in flight, so each worker sends one at a time), answered in order.
 */
export const acquireSlotsUpdate = defineUpdate<SlotAnswer[], [{ requests: SlotRequest[]; limits: FleetLimits }]>(
  'browserAIAcquireSlots',
);
/** Sent by a task on every ending (and by a create refused for good): frees its slot, or drops it from the line. */
export const releaseSlotSignal = defineSignal<[{ holderId: string }]>('browserAIReleaseSlot');
/** Sent by the limiter to a waiting task: its slot is held for it now. */
export const slotGrantedSignal = defineSignal<[{ limiterId: string; waitedMs: number }]>('browserAISlotGranted');
/** The limiter's holders, line length and counts (`temporal workflow query --type browserAILimiterState`). */
export const limiterStateQuery = defineQuery<LimiterState>('browserAILimiterState');
