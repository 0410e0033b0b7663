// Search attributes at start. Every one of ours is set when a workflow starts, so a namespace
// that lacks any of them refuses the start (and the starter retries without them), instead of
// the workflow failing its first upsert later, forever.
import { TypedSearchAttributes } from '@temporalio/common';
import {
  BrowserAIAwaitingInput,
  BrowserAIAwaitingInputSince,
  BrowserAIEndMs,
  BrowserAIExecutionId,
  BrowserAIKind,
  BrowserAIProject,
  BrowserAIStatus,
} from '../workflows/search-attributes';
import { keywordValue } from '../workflows/keyword-value';

export function startSearchAttributes(project?: string): TypedSearchAttributes {
  return new TypedSearchAttributes([
    { key: BrowserAIStatus, value: 'starting' },
    { key: BrowserAIAwaitingInput, value: false },
    // "Never waited": the workflow sets it when a wait for input begins.
    { key: BrowserAIAwaitingInputSince, value: new Date(0) },
    // Not known until the create answers; the workflow upserts it then.
    { key: BrowserAIExecutionId, value: '' },
    // A saved task's project is known only once it is read: the workflow upserts it then. A
    // project over 255 characters is cut and hashed, as SQL visibility stores no longer Keyword.
    { key: BrowserAIProject, value: keywordValue(project ?? '') },
    // Nothing learned yet: the workflow sets both when its task ends normally.
    { key: BrowserAIKind, value: '' },
    { key: BrowserAIEndMs, value: -1 },
  ]);
}

/**
 * Whether a start or schedule call was refused because the namespace lacks one of our search
 * attributes (the server says so in the gRPC cause, e.g. "has no mapping defined for search
 * attribute BrowserAIProject"). A value the server finds too big is another refusal (its
 * INVALID_ARGUMENT says "exceeds size limit"): starting without search attributes would hide it.
 */
function isMissingSearchAttribute(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (
      /search attribute/i.test(e.message) &&
      /(no mapping|not defined|unknown|not registered)/i.test(e.message) &&
      !/(size|exceed|too (large|long|big)|limit)/i.test(e.message)
    )
      return true;
  }
  return false;
}

/**
 * Runs a start (or schedule call) with our search attributes, and once more without them
 * when the namespace refuses them: the workflow then skips its upserts. Register them to
 * filter by them (docs/temporal-ui.md).
 */
export async function withSearchAttributeFallback<T>(call: (withSearchAttributes: boolean) => Promise<T>): Promise<T> {
  try {
    return await call(true);
  } catch (err) {
    if (!isMissingSearchAttribute(err)) throw err;
    return call(false);
  }
}
