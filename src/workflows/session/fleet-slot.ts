// The task's fleet slot, under a worker's fleet limit (docs/design/fleet-limit.md): where the task
// stands in line, the wait for a slot, and its release on every ending. The create activity asks
// the limiter; this side only waits for the grant and lets go. The slot lives in the session
// record, so continue-as-new keeps it.
import { condition, getExternalWorkflowHandle, isCancellation, log, workflowInfo } from '@temporalio/workflow';
import type { SlotPlace, WaitingForSlot } from '../../contract/activity-types';
import { fairnessKeyOf, priorityOf, type BrowserTaskInput } from '../../contract/input';
import type { BrowserTaskState } from '../../contract/messages';
import {
  releaseSlotSignal,
  WAITING_FOR_SLOT,
  type SlotTicket,
  type TaskSlotReport,
} from '../../contract/fleet-messages';
import { rootFailure } from './failures';
import type { FleetSlot, SessionRecord } from './record';

export class FleetSlotHolder {
  /** The limiter signalled that a slot is held for this task. */
  #granted = false;
  /** The place the limiter gave at the last ask: shown again when the task asks again. */
  #ticket: SlotTicket | undefined;
  /** The create is on its way (a new limiter's census counts the task as holding meanwhile). */
  creating = false;
  /** When the wait began (this run's clock): the asks again in between are part of the wait. */
  #waitBeganMs: number | null = null;

  constructor(
    private readonly input: BrowserTaskInput,
    private readonly record: SessionRecord,
    /** Shows a change of the wait (status, place in line) in `state` and the UI. */
    private readonly changed: () => void,
  ) {}

  /** Where the task stands in the fleet's line (used only by a worker with a fleet limit). */
  place(): SlotPlace {
    const info = workflowInfo();
    const { input } = this;
    return {
      workflowId: info.workflowId,
      firstExecutionRunId: info.firstExecutionRunId,
      runId: info.runId,
      taskQueue: info.taskQueue,
      priority: priorityOf(input),
      fairnessKey: fairnessKeyOf({ project: input.project, fairnessKey: input.fairnessKey }),
      fairnessWeight: input.fairnessWeight ?? 1,
      ...(this.record.slot?.held ? { heldFrom: this.record.slot.limiterId } : {}),
      ...(this.#ticket ? { ticket: this.#ticket } : {}),
    };
  }

  /**
   * Waits (cancellably: nothing was sent) until the limiter grants a slot, or until it is time to
   * ask again (`askAgainMs`: the limiter may have been lost, and a new one knows only who asks).
   * True when granted. The wait is no part of the task's time: the overall timeout starts over
   * from the grant.
   */
  async waitFor(wait: WaitingForSlot['waitingForSlot']): Promise<boolean> {
    const record = this.record;
    this.#waitBeganMs ??= Date.now();
    const first = record.status !== WAITING_FOR_SLOT;
    record.slot = { limiterId: wait.limiterId, held: false, waitingSinceMs: wait.sinceMs, position: wait.position };
    record.status = WAITING_FOR_SLOT;
    this.#ticket = wait.ticket;
    this.changed();
    if (first) log.info('Waiting for a fleet slot', { limiterId: wait.limiterId, position: wait.position });
    // Answers from before the limiter said when to ask again: wait for the grant alone, as then.
    const granted =
      wait.askAgainMs === undefined
        ? await condition(() => this.#granted).then(() => true)
        : await condition(() => this.#granted, wait.askAgainMs);
    if (!granted) return false;
    this.held(wait.limiterId);
    return true;
  }

  /**
   * The limiter's `browserAISlotGranted`: a slot is held for this task now, unless the grant names
   * another workflow (one that had this workflow ID before: its grant is not this one's).
   */
  granted(holderId: string | undefined): void {
    const info = workflowInfo();
    if (holderId !== undefined && holderId !== `${info.workflowId}/${info.firstExecutionRunId}`) {
      log.warn('Ignored a fleet slot granted to an earlier workflow with this ID', { holderId });
      return;
    }
    this.#granted = true;
  }

  /** What the task tells a new limiter's census of its slot. */
  report(): TaskSlotReport {
    const info = workflowInfo();
    const slot = this.record.slot;
    const holderId = `${info.workflowId}/${info.firstExecutionRunId}`;
    const { workflowId, runId, priority, fairnessKey, fairnessWeight } = this.place();
    return {
      holderId,
      project: this.input.project,
      limiterId: slot?.limiterId ?? null,
      held: slot?.held === true,
      creating: this.creating,
      ...(slot && !slot.held && !this.creating && slot.waitingSinceMs !== null
        ? {
            waiting: {
              request: {
                holderId,
                workflowId,
                runId,
                project: this.input.project,
                priority,
                fairnessKey,
                fairnessWeight,
              },
              sinceMs: slot.waitingSinceMs,
            },
          }
        : {}),
    };
  }

  /**
   * The create took a slot of `limiterId`: at once, after the wait (the grant), or as it asked again
   * (the limiter had granted it meanwhile). A wait ends here, and moves the task's start by its length.
   */
  held(limiterId: string): void {
    const record = this.record;
    record.slot = { limiterId, held: true, waitingSinceMs: null, position: null };
    if (this.#waitBeganMs === null) return;
    record.startedAtMs += Date.now() - this.#waitBeganMs;
    this.#waitBeganMs = null;
    record.status = 'starting';
    this.changed();
  }

  /**
   * Lets go of the fleet slot, once, on every ending (never on continue-as-new: the next run keeps
   * it). A release the limiter never gets is still freed by its check once this workflow has closed.
   */
  async release(): Promise<void> {
    const slot = this.record.slot;
    if (!slot) return;
    this.record.slot = null;
    const info = workflowInfo();
    try {
      await getExternalWorkflowHandle(slot.limiterId).signal(releaseSlotSignal, {
        holderId: `${info.workflowId}/${info.firstExecutionRunId}`,
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('Could not release the fleet slot; the limiter frees it once this workflow has closed', {
        limiterId: slot.limiterId,
        failure: rootFailure(err).message,
      });
    }
  }

  /** What `state` shows of the fleet slot, when the task has one. */
  view(): Pick<BrowserTaskState, 'fleetSlot'> {
    const slot = this.record.slot;
    return slot ? { fleetSlot: slotView(slot) } : {};
  }
}

function slotView(slot: FleetSlot): NonNullable<BrowserTaskState['fleetSlot']> {
  return slot.held
    ? { held: true }
    : {
        held: false,
        waitingSince: new Date(slot.waitingSinceMs!).toISOString(),
        ...(slot.position !== null ? { positionWhenQueued: slot.position } : {}),
      };
}
