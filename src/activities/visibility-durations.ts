// Learning that survives restarts and spans the fleet, with no store of its own: a workflow whose
// task of a known kind ended normally publishes where it ended (search attributes BrowserAIKind
// and BrowserAIEndMs, in the upsert of its final status: no extra Temporal action), and every
// worker reads those of closed workflows through visibility into its TaskDurations: the last week
// at start (the most recent 2,000), then what closed since, every minute. Reads from visibility
// are not billed as actions. A namespace whose visibility cannot filter on the attributes (not
// registered, or a store without custom search attributes) leaves each worker learning alone,
// with one warning.
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { Logger } from '@temporalio/common';
import { BrowserAIEndMs, BrowserAIKind } from '../contract/search-attributes';
import type { TaskDurations } from './task-durations';

const REFRESH_MS = 60_000;
const LOOK_BACK_MS = 7 * 24 * 3_600_000;
const MAX_PER_READ = 2_000;
/** Visibility may show a close a moment late: each read overlaps the last (ends already read are skipped by run ID). */
const OVERLAP_MS = 5 * 60_000;

type Lister = Pick<Client['workflow'], 'list'>;

/** Reads once: what workflows closed after `sinceMs` published, most recent first, recorded oldest first. Returns the newest close time seen. */
export async function readDurations(workflows: Lister, durations: TaskDurations, sinceMs: number): Promise<number> {
  const query = `${BrowserAIEndMs.name} >= 0 AND CloseTime > "${new Date(sinceMs).toISOString()}"`;
  const ends: Array<{ kind: string; endMs: number; runId: string; closedAtMs: number }> = [];
  for await (const info of workflows.list({ query, pageSize: 1_000 }) as AsyncIterable<WorkflowExecutionInfo>) {
    const kind = info.typedSearchAttributes.get(BrowserAIKind);
    const endMs = info.typedSearchAttributes.get(BrowserAIEndMs);
    if (kind && typeof endMs === 'number' && endMs >= 0)
      ends.push({ kind, endMs, runId: info.runId, closedAtMs: info.closeTime?.getTime() ?? sinceMs });
    if (ends.length >= MAX_PER_READ) break;
  }
  // The newest samples of a kind must be its last ones: record in the order the tasks ended.
  ends.sort((a, b) => a.closedAtMs - b.closedAtMs);
  for (const end of ends) durations.record(end.kind, { afterMs: end.endMs, byMs: end.endMs }, end.runId);
  return ends.reduce((newest, end) => Math.max(newest, end.closedAtMs), sinceMs);
}

/**
 * Reads at once and then every minute until `signal` aborts. A failed read (server unreachable,
 * attributes not registered) is logged once and tried again the next minute.
 */
export async function keepReadingDurations(
  workflows: Lister,
  durations: TaskDurations,
  signal: AbortSignal,
  logger: Pick<Logger, 'warn'>,
): Promise<void> {
  let newestMs = Date.now() - LOOK_BACK_MS;
  let warned = false;
  while (!signal.aborted) {
    try {
      newestMs = Math.max(newestMs, await readDurations(workflows, durations, newestMs - OVERLAP_MS));
    } catch (err) {
      if (!warned)
        logger.warn(
          'Could not read what other workers learned of task durations from visibility; until it can, this worker learns alone. ' +
            'Register the search attributes BrowserAIKind (Keyword) and BrowserAIEndMs (Int) on the namespace to share it.',
          { error: String(err) },
        );
      warned = true;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, REFRESH_MS);
      signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}
