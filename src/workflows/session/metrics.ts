// Workflow-side metrics, through the workflow's metric meter: the SDK emits nothing while a
// workflow replays (workflowInfo().unsafe.isReplaying), so a replay after a cache eviction or on
// another worker counts nothing twice: a wait for input is entered once and left once.
// The SDK adds its own tags (namespace, task_queue, workflow_type); ours carry no task data.
import { metricMeter } from '@temporalio/workflow';
import { categorize, isFailedStatus, normalizeStatus } from '../../contract/status';
import { FailureType } from '../../contract/errors';
import {
  CODES_TYPED,
  STOPS_ENDED,
  STOPS_SENT,
  TASK_POLLS,
  TASKS_ENDED,
  AWAITING_INPUT_ENTERED,
  AWAITING_INPUT_LEFT,
} from '../../telemetry/names';

/** How a task ended, as the `outcome` label says it. */
export type TaskOutcome = 'completed' | 'failed' | 'stopped' | 'cancelled' | 'timed_out' | 'error';

/** The outcome of a task that ended at BrowserAI, from its status. */
export function outcomeOfStatus(status: string): TaskOutcome {
  const normalized = normalizeStatus(status);
  if (isFailedStatus(status)) return 'failed';
  if (normalized === 'stopped') return 'stopped';
  if (normalized === 'cancelled' || normalized === 'canceled') return 'cancelled';
  return categorize(status) === 'ended' ? 'completed' : 'error';
}

/** The outcome of a workflow that ended early, from the failure type it ends with. */
export function outcomeOfFailure(cancelled: boolean, type: string | undefined): TaskOutcome {
  if (cancelled) return 'cancelled';
  if (type === FailureType.TaskTimeout || type === FailureType.AwaitingInputTimeout || type === FailureType.Timeout)
    return 'timed_out';
  return 'error';
}

export function recordTaskEnded(outcome: TaskOutcome, polls: number, failureType?: string): void {
  metricMeter.createCounter(TASKS_ENDED, '1', 'BrowserAI tasks ended, by outcome').add(1, {
    outcome,
    ...(failureType
      ? { failure_type: (Object.values(FailureType) as string[]).includes(failureType) ? failureType : 'other' }
      : {}),
  });
  metricMeter
    .createHistogram(TASK_POLLS, 'int', '1', 'GET /tasks/{id} polls of a task (this workflow run)')
    .record(polls);
}

/**
 * A wait for input begins (entered) or ends, however it ends (left). Both are counters: emitted
 * once each, never again on replay, so entered - left is the number of tasks waiting now.
 */
export function recordAwaitingInput(change: 'entered' | 'left'): void {
  if (change === 'entered') metricMeter.createCounter(AWAITING_INPUT_ENTERED, '1', 'Waits for input begun').add(1);
  else metricMeter.createCounter(AWAITING_INPUT_LEFT, '1', 'Waits for input ended').add(1);
}

export function recordCodeTyped(): void {
  metricMeter.createCounter(CODES_TYPED, '1', 'One-time codes typed into BrowserAI tasks').add(1);
}

export function recordStopSent(): void {
  metricMeter.createCounter(STOPS_SENT, '1', 'Stop commands sent to BrowserAI').add(1);
}

export function recordStopEnded(confirmed: boolean): void {
  metricMeter
    .createCounter(STOPS_ENDED, '1', 'Stop commands ended: confirmed by BrowserAI or given up')
    .add(1, { result: confirmed ? 'confirmed' : 'unconfirmed' });
}
