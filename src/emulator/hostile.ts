// Hostile answers: values a client must bound or mask before it keeps any of them, asked for by
// markers (scenario.ts): a status of thousands of characters, megabytes of `progress.status`, a
// `result` nested tens of thousands of levels deep or made of crafted text, a create answer with
// megabytes of extra field, an object keyed by the browser's proxy URL with its password. Nothing
// says BrowserAI sends any of these: an answer is untrusted input, and these are the shapes that
// broke workflows once (docs/design/answers.md, "What each endpoint must answer").

import type { StoredEntry, Task } from './tasks';
import { largeText } from './large-text';

/** Filler of a `[long-status=...]` status: the real status first, so a client that reads a prefix still can. */
const STATUS_FILLER = ' (the engine is still working on it)';

/** A status of `chars` characters that starts with the real one. */
export function longStatus(status: string, chars: number): string {
  return (status + STATUS_FILLER.repeat(Math.ceil(Math.max(0, chars - status.length) / STATUS_FILLER.length))).slice(
    0,
    Math.max(chars, status.length),
  );
}

/**
 * A JSON value nested `levels` deep (`{"level": {"level": ... "leaf"}}`), written as text when the
 * answer is sent: JSON.stringify would overflow the emulator's own stack (see {@link answerText}).
 */
export class NestedJson {
  constructor(
    readonly levels: number,
    readonly leaf: string,
  ) {}

  text(): string {
    return `${'{"level":'.repeat(this.levels)}${JSON.stringify(this.leaf)}${'}'.repeat(this.levels)}`;
  }
}

/** Stands for a NestedJson in the JSON text until it is written out; no answer holds it otherwise. */
const NESTED_TOKEN = 'browserai-emulator-nested-json-';

/** An answer body as JSON text, with every {@link NestedJson} in it written out. */
export function answerText(body: unknown): string {
  const nested: NestedJson[] = [];
  const text = JSON.stringify(body, (_key, value: unknown) =>
    value instanceof NestedJson ? `${NESTED_TOKEN}${nested.push(value) - 1}` : value,
  );
  if (nested.length === 0) return text;
  return text.replace(new RegExp(`"${NESTED_TOKEN}(\\d+)"`, 'g'), (_match, i: string) => nested[Number(i)]!.text());
}

/** The hostile `result` of an entry, or undefined when its task asked for none: the ordinary one is used. */
export function hostileResult(task: Task, entry: StoredEntry, ordinary: string): unknown {
  const { deepResultLevels, craftedResultBytes, secretKeys } = task.scenario;
  if (entry.state === 'failed') return undefined;
  if (deepResultLevels !== null) return new NestedJson(deepResultLevels, ordinary);
  if (craftedResultBytes !== null) return largeText(craftedResultBytes, 'crafted');
  // Keyed by the proxy URL, as an engine's map of open connections would be.
  if (secretKeys) return { [task.connection.connectionUrl]: 'connected', outcome: ordinary };
  return undefined;
}
