// A batch's list, in one short string: what a resume is compared by (docs/design/batch-client.md).
import { createHash } from 'node:crypto';
import type { BatchItem } from '../contract/batch-messages';

/**
 * The fingerprint of a batch's list: SHA-256 over each item in order (its JSON with the keys
 * sorted, so the same item written in another key order is the same), so any edit gives another:
 * an item changed, moved, added, removed or replaced. Items are added one at a time, so a list
 * read from a file of a million lines needs no more memory than one item.
 */
export class BatchFingerprint {
  readonly #hash = createHash('sha256');
  #count = 0;

  add(item: BatchItem): void {
    this.#hash.update(sortedJson(item));
    this.#hash.update('\n');
    this.#count++;
  }

  /** How many items were added. */
  get count(): number {
    return this.#count;
  }

  /** `sha256:` and 64 hex digits; the fingerprint takes no more items after. */
  digest(): string {
    return `sha256:${this.#hash.digest('hex')}`;
  }
}

/** The fingerprint of a list held in memory. */
export function batchFingerprint(items: Iterable<BatchItem>): string {
  const fingerprint = new BatchFingerprint();
  for (const item of items) fingerprint.add(item);
  return fingerprint.digest();
}

function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, field: unknown) =>
    field && typeof field === 'object' && !Array.isArray(field)
      ? Object.fromEntries(
          Object.keys(field)
            .sort()
            .map((key) => [key, (field as Record<string, unknown>)[key]]),
        )
      : field,
  );
}
