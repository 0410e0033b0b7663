// The checks of a batch's name and items, shared by the client, the CLI and the workflow, so every
// one refuses the same things with the same words. Pure and workflow-safe.
import { taskInputProblems } from '../../contract/input-problems';
import type { BatchItem } from '../../contract/batch-messages';

/** An item ID: part of its child's workflow ID (`<batch>/<id>`), so no `/`, and short enough for SQL visibility. */
const ITEM_ID = /^[A-Za-z0-9._:@+=-]{1,128}$/;
/** A batch name: its workflow ID, and the first part of its children's (255 characters at most in all). */
const BATCH_NAME = /^[A-Za-z0-9._:@+=-]{1,100}$/;

/** Concurrency bounds: at least one task at a time; above 1,000 the batch's own history is the bottleneck. */
export const MAX_BATCH_CONCURRENCY = 1_000;

/** A batch run's history budget: at most 40 MB, under Temporal's 50 MB; at least 4 MB, so one item of the largest result fits past a quarter of it. */
export const MAX_BATCH_HISTORY_BYTES = 40_000_000;
const MIN_BATCH_HISTORY_BYTES = 4_000_000;

export function maxHistoryBytesProblems(bytes: unknown): string[] {
  return bytes === undefined ||
    (Number.isInteger(bytes) &&
      (bytes as number) >= MIN_BATCH_HISTORY_BYTES &&
      (bytes as number) <= MAX_BATCH_HISTORY_BYTES)
    ? []
    : ['maxHistoryBytes must be a whole number from 4,000,000 to 40,000,000 (bytes)'];
}

/** The workflow ID of an item's `browserTask`: deterministic, so a resumed batch never starts an item twice. */
export function batchItemWorkflowId(batchName: string, itemId: string): string {
  return `${batchName}/${itemId}`;
}

export function batchNameProblems(name: unknown): string[] {
  return typeof name === 'string' && BATCH_NAME.test(name)
    ? []
    : ['the batch name must be 1-100 letters, digits or ._:@+=- (it is the batch workflow ID)'];
}

export function concurrencyProblems(concurrency: unknown): string[] {
  return Number.isInteger(concurrency) &&
    (concurrency as number) >= 1 &&
    (concurrency as number) <= MAX_BATCH_CONCURRENCY
    ? []
    : [`concurrency must be a whole number from 1 to ${MAX_BATCH_CONCURRENCY}`];
}

/**
 * Every problem of a list of items, each prefixed with where it is (`label(i)`: e.g. "line 7" for
 * a file, "item 7" for a list), with the input validator's own words; a repeated ID is a problem
 * at its second place. `seen` carries the IDs across calls, each with its place: `items[0]` is at
 * place `first`, so a list checked a piece at a time names the earlier place of a repeated ID.
 */
export function batchItemsProblems(
  items: readonly unknown[],
  label: (place: number) => string = (place) => `item ${place + 1}`,
  seen: Map<string, number> = new Map(),
  first = 0,
): string[] {
  const problems: string[] = [];
  items.forEach((item, index) => {
    const place = first + index;
    const where = label(place);
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      problems.push(`${where}: must be an object with an id and a task input`);
      return;
    }
    const { id, input } = item as Partial<BatchItem>;
    if (typeof id !== 'string' || !ITEM_ID.test(id))
      problems.push(`${where}: id must be 1-128 letters, digits or ._:@+=- (got ${JSON.stringify(id ?? null)})`);
    else if (seen.has(id))
      problems.push(
        `${where}: id ${JSON.stringify(id)} is used already at ${label(seen.get(id)!)}; item IDs must be unique`,
      );
    else seen.set(id, place);
    for (const problem of taskInputProblems(input)) problems.push(`${where}: ${problem}`);
  });
  return problems;
}
