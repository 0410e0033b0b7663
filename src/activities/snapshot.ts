import type { TaskExecution, TaskMetadata } from '../contract/browserai-types';
import { categorize } from '../contract/status';
import { truncateString, truncateValue } from './trim';
import type { TaskSnapshot } from '../contract/activity-types';

// How much of a task's progress the workflow keeps: enough for the UI and the `state`
// query, little enough that hours of polling never grow the history.
const LOG_LINES = 5;
const LOG_LINE_BYTES = 300;
const PROGRESS_STATUS_BYTES = 1_000;
const ERROR_BYTES = 2_000;
export const DEFAULT_RESULT_BYTES = 64 * 1024;

export function snapshotOf(meta: TaskMetadata | TaskExecution, resultBytes = DEFAULT_RESULT_BYTES): TaskSnapshot {
  const progress = (meta as TaskMetadata).progress;
  const logs = Array.isArray(progress?.logs) ? progress.logs.filter((l): l is string => typeof l === 'string') : [];
  const category = categorize(meta.status);
  const error = (meta as TaskMetadata).error;
  const snapshot: TaskSnapshot = {
    executionId: meta.executionId,
    status: typeof meta.status === 'string' ? meta.status : String(meta.status),
    category,
    progress: {
      status: typeof progress?.status === 'string' ? truncateString(progress.status, PROGRESS_STATUS_BYTES) : undefined,
      logs: logs.slice(-LOG_LINES).map((line) => truncateString(line, LOG_LINE_BYTES)),
    },
    started: meta.started ?? null,
    estimatedCompletion: meta.estimatedCompletion ?? null,
    error: typeof error === 'string' ? truncateString(error, ERROR_BYTES) : null,
  };
  // Not only at the end: a session waiting for input shows its output so far, and a task that
  // `complete` stops may have nothing in its results afterwards.
  if ('result' in meta && meta.result !== undefined && meta.result !== null) {
    snapshot.result = truncateValue(meta.result, resultBytes);
  }
  return snapshot;
}
