// What the Temporal UI shows of a session: current details (Markdown) and typed search attributes.
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { TaskResultsSummary } from '../../contract/activity-types';
import { renderDetails } from '../details';
import type { BrowserTaskState } from '../../contract/messages';
import {
  ALL_SEARCH_ATTRIBUTES,
  BrowserAIAwaitingInput,
  BrowserAIAwaitingInputSince,
  BrowserAIEndMs,
  BrowserAIExecutionId,
  BrowserAIKind,
  BrowserAIProject,
  BrowserAIStatus,
} from '../../contract/search-attributes';
import { keywordValue } from '../keyword-value';

export class Publisher {
  // Search attributes exist only where the namespace registered them; the starters set every one
  // it has at start (and none it lacks), so what the start set is what upserts may touch.
  readonly #on = new Set(
    ALL_SEARCH_ATTRIBUTES.filter((key) => workflowInfo().typedSearchAttributes.get(key) !== undefined).map(
      (key) => key.name,
    ),
  );
  // What the start (or the previous run) already set needs no upsert of its own.
  // Compared as Keyword values: a start by an earlier release set a long project whole, and
  // upserting its cut form now would change the workflow's commands on replay.
  readonly #published = new Map<string, unknown>(
    [BrowserAIStatus, BrowserAIAwaitingInput, BrowserAIExecutionId, BrowserAIProject].map((key) => {
      const value = workflowInfo().typedSearchAttributes.get(key);
      return [key.name, typeof value === 'string' ? keywordValue(value) : value];
    }),
  );
  #publishedSinceMs = workflowInfo().typedSearchAttributes.get(BrowserAIAwaitingInputSince)?.getTime();
  #learned: { kind: string; endMs: number } | null = null;
  #upsertQueued = false;
  #latest: BrowserTaskState | null = null;
  #awaitingSinceMs: number | null = null;

  constructor(readonly project: string) {}

  /**
   * Shows `state` in the UI. Secrets (codes received) are masked in the details. `awaitingSinceMs`:
   * when the current wait for input began, while the task awaits input. `holdUpsert`: the search
   * attributes wait for the next publish (the look right after a create, a second away, would
   * change them again: one upsert instead of two).
   */
  publish(
    state: BrowserTaskState,
    results: TaskResultsSummary | null,
    secrets: readonly string[],
    awaitingSinceMs: number | null,
    holdUpsert = false,
  ): void {
    setCurrentDetails(renderDetails(state, results, secrets));
    this.#latest = state;
    this.#awaitingSinceMs = awaitingSinceMs;
    // Every upsert is a history event: changes made in one activation go out as one upsert,
    // from a microtask that runs after them but before the activation completes.
    if (this.#on.size > 0 && !this.#upsertQueued && !holdUpsert) {
      this.#upsertQueued = true;
      void Promise.resolve().then(() => this.#upsertChanges());
    }
  }

  /**
   * Where this task of `kind` ended: goes out with the next upsert, the one of its final status
   * (no upsert of its own), for every worker to read from visibility.
   */
  learned(kind: string, endMs: number): void {
    if (this.#on.has(BrowserAIKind.name) && this.#on.has(BrowserAIEndMs.name)) this.#learned = { kind, endMs };
  }

  #upsertChanges(): void {
    this.#upsertQueued = false;
    const state = this.#latest!;
    // Every Keyword value fits SQL visibility's 255 characters (keyword-value.ts): a BrowserAI
    // status is kept up to 256 characters and its cut mark, a project up to 512.
    const wanted: SearchAttributeUpdatePair[] = [
      { key: BrowserAIStatus, value: keywordValue(state.status) },
      { key: BrowserAIAwaitingInput, value: state.awaitingInput },
      { key: BrowserAIProject, value: keywordValue(this.project) },
    ];
    if (state.executionId) wanted.push({ key: BrowserAIExecutionId, value: keywordValue(state.executionId) });
    if (this.#learned) {
      wanted.push(
        { key: BrowserAIKind, value: keywordValue(this.#learned.kind) },
        { key: BrowserAIEndMs, value: this.#learned.endMs },
      );
      this.#learned = null;
    }
    const changed = wanted.filter(
      (pair) => this.#on.has(pair.key.name) && this.#published.get(pair.key.name) !== pair.value,
    );
    // Set when a wait begins, in the upsert that sets BrowserAIAwaitingInput; left as it is after.
    const since = this.#awaitingSinceMs;
    if (this.#on.has(BrowserAIAwaitingInputSince.name) && since !== null && since !== this.#publishedSinceMs) {
      changed.push({ key: BrowserAIAwaitingInputSince, value: new Date(since) });
      this.#publishedSinceMs = since;
    }
    if (changed.length === 0) return;
    upsertSearchAttributes(changed);
    for (const pair of changed) this.#published.set(pair.key.name, pair.value);
  }
}
