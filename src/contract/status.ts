// BrowserAI's status vocabulary is undocumented; real clients show `finalized`, `awaiting`,
// `stopped` and `failed`. Everything else, including values nobody has seen yet, counts as
// still running so a new value never crashes a workflow; the workflow's own timeout ends it.
// Pure and dependency-free: the workflow bundle imports it.

/** What a BrowserAI status means to the workflow: still running, waiting for input, or ended. */
export type StatusCategory = 'running' | 'awaiting' | 'ended';

const ENDED = new Set(['finalized', 'completed', 'failed', 'stopped', 'cancelled', 'canceled', 'error']);
const KNOWN_RUNNING = new Set(['queued', 'pending', 'running', 'started', 'in_progress', 'processing']);

export function normalizeStatus(status: unknown): string {
  return typeof status === 'string' ? status.trim().toLowerCase() : '';
}

export function categorize(status: unknown): StatusCategory {
  const s = normalizeStatus(status);
  if (ENDED.has(s)) return 'ended';
  if (s === 'awaiting') return 'awaiting';
  return 'running';
}

/** True for values outside the known vocabulary: worth one log line, never an error. */
export function isUnknownStatus(status: unknown): boolean {
  const s = normalizeStatus(status);
  return !ENDED.has(s) && s !== 'awaiting' && !KNOWN_RUNNING.has(s);
}

export function isFailedStatus(status: unknown): boolean {
  const s = normalizeStatus(status);
  return s === 'failed' || s === 'error';
}
