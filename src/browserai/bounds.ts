// The sizes an answer's values are cut to at the client boundary (answers.ts), so that no later
// consumer (a heartbeat, an activity result and so history, a search attribute, the `state`
// query, current details, a log line, a failure message) meets a value that Temporal refuses or
// that stalls the worker. Temporal refuses a search attribute value over 2 KB (it terminates the
// workflow), a payload over 2 MB (the workflow task or the activity's completion fails, again and
// again), and JSON nested deeper than its stack allows cannot even be serialized.
//
// A value that is cut says so: a text ends with CUT_MARK and its original length; JSON nested too
// deep is replaced, from the level that is too deep, by a text saying so. The whole value stays
// at BrowserAI. Pure: no Node built-ins, the workflow bundle may import it.

/** The limits, in characters (UTF-16 code units, as JavaScript counts them) or levels. */
export const ANSWER_LIMITS = {
  /** A status, a time, a script type or ID, a message: a word or a line; a search attribute takes 2 KB. */
  shortText: 256,
  /** `progress.status`: a sentence or two. */
  progressStatus: 4 * 1024,
  /** One progress log line (engine logs may carry a page's text or a stack trace). */
  logLine: 4 * 1024,
  /** Progress log lines kept: the latest ones. */
  logLines: 100,
  /** The task's `error` text. */
  error: 16 * 1024,
  /** The message of an error answer (`{error}` or its body as text), which becomes a failure message. */
  errorAnswer: 2 * 1024,
  /** Levels of nesting of any answer; JSON deeper than this is replaced by a text saying so. */
  depth: 64,
} as const;

/** What ends a text that was cut; the original length follows it. */
export const CUT_MARK = '…[cut by browserai-temporal:';

/** `text` cut to at most `maxChars` characters plus a mark saying it was cut and how long it was; never splits a surrogate pair. */
export function cutText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = maxChars;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // a high surrogate whose low half would be cut off
  return `${text.slice(0, end)}${CUT_MARK} ${text.length} characters in all]`;
}

/**
 * A copy of a JSON value whose containers nested deeper than `maxDepth` levels are replaced by a
 * text saying so. Costs no stack (an answer nested a hundred thousand levels deep is read like any
 * other), and returns the value itself when nothing is too deep (the common case: no copy).
 */
export function boundDepth<T>(value: T, maxDepth: number = ANSWER_LIMITS.depth): T {
  if (!isContainer(value) || depthWithin(value, maxDepth)) return value;
  const root: Container = Array.isArray(value) ? [] : {};
  const pending: Array<[Container, Container, number]> = [[value, root, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [source, copy, depth] = next;
    for (const key of Object.keys(source)) {
      const item = (source as Record<string, unknown>)[key];
      let kept = item;
      if (isContainer(item)) {
        if (depth >= maxDepth) kept = `[cut by browserai-temporal: nested deeper than ${maxDepth} levels]`;
        else {
          kept = Array.isArray(item) ? [] : {};
          pending.push([item, kept as Container, depth + 1]);
        }
      }
      setOwn(copy, key, kept);
    }
  }
  return root as T;
}

type Container = Record<string, unknown> | unknown[];

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

/** Whether no container in `value` is nested deeper than `maxDepth` levels (the value itself is level 1). */
function depthWithin(value: Container, maxDepth: number): boolean {
  const pending: Array<[Container, number]> = [[value, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [container, depth] = next;
    for (const key of Object.keys(container)) {
      const item = (container as Record<string, unknown>)[key];
      if (!isContainer(item)) continue;
      if (depth >= maxDepth) return false;
      pending.push([item, depth + 1]);
    }
  }
  return true;
}

/** Plain assignment of `__proto__` (a key JSON.parse may produce) would change the copy's prototype. */
function setOwn(target: Container, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else (target as Record<string, unknown>)[key] = value;
}
