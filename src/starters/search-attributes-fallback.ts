// Search attributes at start. Every one of ours is set when a workflow starts, so a namespace
// that lacks any of them refuses the start (and the starter retries without those), instead of
// the workflow failing its first upsert later, forever: the workflow upserts only what its start set.
import { TypedSearchAttributes } from '@temporalio/common';
import { ALL_SEARCH_ATTRIBUTES } from '../contract/search-attributes';
import { startSearchAttributes } from '../workflows/start-search-attributes';

export { startSearchAttributes };

/** Our search attributes that a call may set: all of them, less those the namespace refused. */
export type RegisteredOnly = (attributes: TypedSearchAttributes) => TypedSearchAttributes | undefined;

/**
 * The search attribute a start or schedule call was refused for, when the namespace lacks one of
 * ours: its name when the server names one of ours (e.g. "has no mapping defined for search
 * attribute BrowserAIProject"), '' when it names none we know; undefined for any other refusal.
 * A value the server finds too big is another refusal (its INVALID_ARGUMENT says "exceeds size
 * limit"): dropping search attributes would hide it.
 */
function missingSearchAttribute(err: unknown): string | undefined {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const { message } = e;
    if (
      /search attribute/i.test(message) &&
      /(no mapping|not defined|unknown|not registered)/i.test(message) &&
      !/(size|exceed|too (large|long|big)|limit)/i.test(message)
    )
      return ALL_SEARCH_ATTRIBUTES.find(({ name }) => new RegExp(`\\b${name}\\b`).test(message))?.name ?? '';
  }
  return undefined;
}

/**
 * Runs a start (or schedule call) with our search attributes, and again without each one the
 * namespace refuses (the server names one per refusal), so that a namespace with some of them
 * registered (last release's, say) still gets those: the workflow publishes what its start set.
 * A refusal that names none of ours drops them all. Register them all to list tasks waiting for
 * input and to share what workers learn (docs/temporal-ui.md).
 */
export async function withSearchAttributeFallback<T>(call: (registered: RegisteredOnly) => Promise<T>): Promise<T> {
  const missing = new Set<string>();
  const registered: RegisteredOnly = (attributes) => {
    const kept = attributes.getAll().filter((pair) => !missing.has(pair.key.name));
    return kept.length > 0 ? new TypedSearchAttributes(kept) : undefined;
  };
  for (;;) {
    try {
      return await call(registered);
    } catch (err) {
      const name = missingSearchAttribute(err);
      if (name === undefined || missing.size === ALL_SEARCH_ATTRIBUTES.length) throw err;
      if (name && !missing.has(name)) missing.add(name);
      else for (const key of ALL_SEARCH_ATTRIBUTES) missing.add(key.name);
    }
  }
}
