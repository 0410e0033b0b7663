// The texts of `[large=...]`, `[big-logs=...]`, `[big-error=...]` and the hostile answers' size
// markers (`[big-progress=...]`, `[big-create=...]`, `[crafted-result=...]`): megabytes of filler that
// clients must carry, store or truncate. They are shared between tasks and rendered from a small
// cache: 500 tasks asking for 5 MB must not hold 2.5 GB.

import { FAIL_ERROR } from './scenario';

export type LargeTextKind = 'result' | 'log' | 'error' | 'progress' | 'extra' | 'crafted';

const PATTERNS: Record<LargeTextKind, { head: string; filler: string }> = {
  result: { head: '', filler: 'BrowserAI emulator large result. ' },
  log: { head: '', filler: 'BrowserAI emulator big log line. ' },
  // Starts with the ordinary failure, so a client that classifies errors by message still can;
  // the rest looks like the stack trace a browser engine may attach.
  error: { head: FAIL_ERROR, filler: '\n    at emulatedFrame (browserai-emulator/engine.js:1:1)' },
  progress: { head: '', filler: 'Reading the page. ' },
  extra: { head: '', filler: 'engine debug data ' },
  // Every `%3Fws=` reads as a new `?ws=` inspector parameter inside the previous one's value.
  crafted: { head: '', filler: '%3Fws=' },
};

const cache = new Map<string, string>();
const MAX_CACHED = 16;

/** ASCII text of exactly `bytes` bytes (and as many characters). */
export function largeText(bytes: number, kind: LargeTextKind): string {
  const key = `${kind}:${bytes}`;
  let text = cache.get(key);
  if (text === undefined) {
    const { head, filler } = PATTERNS[kind];
    const missing = Math.max(0, bytes - head.length);
    text = (head + filler.repeat(Math.ceil(missing / filler.length))).slice(0, bytes);
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(key, text);
  }
  return text;
}
