// The value a Keyword search attribute of ours is given. SQL visibility (PostgreSQL, MySQL) keeps
// Keyword attributes in VARCHAR(255) columns: a longer value makes the server's visibility write
// fail (it retries for about an hour, then drops it), so the workflow has no visibility row at all,
// and is missing from the waiting list, from learning and from every list in the UI. So every
// Keyword value we write fits 255 characters, a longer one being cut and marked, with a hash of
// the whole value: two long project names alike in their first 200 characters stay apart, and a
// filter computes the same form from the whole name (`BrowserAIProject = keywordValue(project)`).
// Pure (no Node built-ins): the workflow computes it too, for the values it upserts.
import { CUT_MARK } from '../browserai/bounds';

/** The longest Keyword value SQL visibility stores, in characters (PostgreSQL and MySQL count characters, not bytes). */
export const MAX_KEYWORD_CHARS = 255;

/**
 * `value` as a Keyword search attribute holds it: itself when it fits {@link MAX_KEYWORD_CHARS}
 * (counted in UTF-16 code units, never fewer than the characters the database counts), else its
 * start, the cut mark, its length and a 64-bit FNV-1a hash of its UTF-8 bytes, in 255 at most.
 * Deterministic, so starters, filters and the workflow all compute the same value.
 */
export function keywordValue(value: string): string {
  if (value.length <= MAX_KEYWORD_CHARS) return value;
  const mark = `${CUT_MARK} ${value.length} characters in all, #${fnv1a64(value)}]`;
  let end = MAX_KEYWORD_CHARS - mark.length;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // never split a surrogate pair
  return `${value.slice(0, end)}${mark}`;
}

/** Whether a Keyword value was cut by {@link keywordValue} (or is a value that happens to end like one). */
export function isCutKeyword(value: string): boolean {
  return value.length === MAX_KEYWORD_CHARS && value.includes(CUT_MARK);
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = 0xffffffffffffffffn;

/**
 * 64-bit FNV-1a of `text`'s UTF-8 bytes, 16 hex digits. Not a cryptographic hash: it keeps
 * different values apart in a list filter, which is no security boundary (any client of the
 * namespace may list every workflow).
 */
function fnv1a64(text: string): string {
  let hash = FNV_OFFSET;
  for (const byte of utf8(text)) hash = ((hash ^ BigInt(byte)) * FNV_PRIME) & MASK_64;
  return hash.toString(16).padStart(16, '0');
}

/** UTF-8 bytes of `text` (lone surrogates as U+FFFD, as TextEncoder does; the workflow sandbox has no TextEncoder). */
function* utf8(text: string): Generator<number> {
  for (const char of text) {
    let code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
    if (code < 0x80) yield code;
    else if (code < 0x800) yield* [0xc0 | (code >> 6), 0x80 | (code & 0x3f)];
    else if (code < 0x10000) yield* [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)];
    else yield* [0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)];
  }
}
