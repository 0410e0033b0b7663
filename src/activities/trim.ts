import type { ResultEntry } from '../browserai';
import type { TrimReport } from '../contract/activity-types';

// Everything an activity returns is written into the workflow history, where one payload
// over ~2 MB fails the workflow task again and again. Results can hold page HTML or big
// extractions, so they are cut to a budget here, with a note of what was cut; the full
// results stay at BrowserAI (`GET /results/{id}`, or BrowserAIClient.getResults).

/** Ends a cut text, with its original size: the full value stays at BrowserAI. */
const mark = (bytes: number) =>
  `…[truncated by browserai-temporal: ${bytes} bytes in all; full value at GET /results/{executionId}]`;

export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/** Cuts a string to at most `maxBytes` UTF-8 bytes (plus the mark, with the original size), never splitting a character. */
export function truncateString(value: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes <= maxBytes) return value;
  const cut = Buffer.from(value, 'utf8')
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return cut + mark(bytes);
}

/** Any JSON value cut to roughly `maxBytes`: strings are truncated, anything else larger becomes a truncated JSON string. */
export function truncateValue(value: unknown, maxBytes: number): unknown {
  if (typeof value === 'string') return truncateString(value, maxBytes);
  if (value === undefined || value === null || jsonBytes(value) <= maxBytes) return value;
  return truncateString(JSON.stringify(value), maxBytes);
}

export function fitResults(results: ResultEntry[], maxBytes: number): { results: ResultEntry[]; trimmed?: TrimReport } {
  const originalBytes = jsonBytes(results);
  if (originalBytes <= maxBytes) return { results };
  let kept = results;
  let droppedEntries = 0;
  // Halve the per-field allowance until the whole fits; below 256 bytes a field says
  // nothing useful, so drop the oldest entries instead (the last ones hold the outcome).
  for (let fieldCap = Math.floor(maxBytes / 2); ; fieldCap = Math.floor(fieldCap / 2)) {
    const cap = Math.max(fieldCap, 256);
    const candidate = kept.map((entry) => truncateEntry(entry, cap));
    if (jsonBytes(candidate) <= maxBytes) {
      return { results: candidate, trimmed: report(results, candidate, originalBytes, droppedEntries, maxBytes) };
    }
    if (fieldCap <= 256) {
      if (kept.length <= 1) {
        return { results: [], trimmed: report(results, [], originalBytes, droppedEntries + kept.length, maxBytes) };
      }
      const drop = Math.ceil(kept.length / 2);
      kept = kept.slice(drop);
      droppedEntries += drop;
      fieldCap = maxBytes;
    }
  }
}

function truncateEntry(entry: ResultEntry, cap: number): ResultEntry {
  const out: ResultEntry = {};
  for (const [key, value] of Object.entries(entry)) out[key] = truncateValue(value, cap);
  return out;
}

function report(
  original: ResultEntry[],
  kept: ResultEntry[],
  originalBytes: number,
  droppedEntries: number,
  maxBytes: number,
): TrimReport {
  let truncatedFields = 0;
  kept.forEach((entry, i) => {
    const source = original[original.length - kept.length + i] ?? {};
    for (const key of Object.keys(entry)) if (entry[key] !== source[key]) truncatedFields++;
  });
  const keptBytes = jsonBytes(kept);
  return {
    originalBytes,
    keptBytes,
    truncatedFields,
    droppedEntries,
    note:
      `Results were ${originalBytes} bytes, over the ${maxBytes}-byte budget kept in workflow history (kept ${keptBytes}): ` +
      `${truncatedFields} field(s) truncated, ${droppedEntries} oldest entr${droppedEntries === 1 ? 'y' : 'ies'} dropped. ` +
      'Fetch the full results with BrowserAIClient.getResults(executionId) or `npm run starter -- result --full`.',
  };
}
