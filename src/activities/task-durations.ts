import { createHash } from 'node:crypto';
import type { Instruction, TaskType } from '../browserai/types';

// How long tasks of one kind run, learned from the tasks this worker saw end, so the poll can
// sleep through the part of a task that never ends and look often where tasks of its kind do.
// Real BrowserAI answers carry no estimate (see DESIGN.md, "Polling that learns"); without this,
// polling is a guess.
//
// In memory, per worker process: nothing to configure or store, and a worker that restarts
// relearns within a few tasks. The first task of a kind uses what this worker saw of all kinds,
// and, before it saw any, the durations BrowserAI's dashboard shows (about 30 to 100 s).

/** A kind: the same type, project and instructions (only their hash is kept). */
export function taskKind(task: { type: TaskType; project: string; instructions: readonly Instruction[] }): string {
  const hash = createHash('sha256');
  for (const instruction of task.instructions) hash.update(instruction.action).update('\u0000');
  return `${task.type}:${task.project}:${hash.digest('hex').slice(0, 16)}`;
}

/** Where a task is expected to end, in milliseconds since it was created (or since input was last sent). */
export interface EndWindow {
  fromMs: number;
  toMs: number;
  /** What the window comes from: this kind's own tasks, all kinds seen, or the fallback. */
  basis: 'kind' | 'all-kinds' | 'prior';
}

/** One end seen: the task ended after `afterMs` (the last poll that saw it running) and by `byMs`. */
export interface EndSample {
  afterMs: number;
  byMs: number;
}

/** The durations BrowserAI's dashboard shows (behaviour notes): the fallback before any task ended. */
export const PRIOR_WINDOW: EndWindow = { fromMs: 25_000, toMs: 100_000, basis: 'prior' };

const SAMPLES_PER_KIND = 8;
const MAX_KINDS = 5_000;
const POOLED_SAMPLES = 200;
/** The pooled window is used once this many tasks (of any kind) ended here. */
const POOLED_MIN_SAMPLES = 5;
/**
 * Margin around the samples, as a share of their median: a kind seen once or twice may vary by
 * more than its samples show (its next run may be 15 % slower); more samples need less.
 */
const MARGIN_FEW = 0.12;
const MARGIN_MANY = 0.04;

/**
 * How long tasks of each kind (type, project, instructions) ran on this worker, learned in memory, so polls sleep
 * where tasks of a kind never end and look often where they do. One per worker process, shared by its polls.
 */
export class TaskDurations {
  // Map keeps insertion order: re-inserting on use makes it a least-recently-used list.
  readonly #byKind = new Map<string, EndSample[]>();
  readonly #pooled: EndSample[] = [];

  /** Records a task that ran to its end without input (failed and stopped tasks say nothing about the kind). */
  record(kind: string, sample: EndSample): void {
    if (!(sample.byMs >= sample.afterMs && sample.afterMs >= 0)) return;
    const samples = this.#byKind.get(kind) ?? [];
    this.#byKind.delete(kind);
    samples.push(sample);
    if (samples.length > SAMPLES_PER_KIND) samples.shift();
    this.#byKind.set(kind, samples);
    if (this.#byKind.size > MAX_KINDS) this.#byKind.delete(this.#byKind.keys().next().value!);
    this.#pooled.push(sample);
    if (this.#pooled.length > POOLED_SAMPLES) this.#pooled.shift();
  }

  /** Where a task of this kind should end: from its own kind, else all kinds, else the prior. */
  expectedEnd(kind: string | undefined): EndWindow {
    const own = kind === undefined ? undefined : this.#byKind.get(kind);
    if (own && own.length > 0) return windowOf(own, 'kind');
    if (this.#pooled.length >= POOLED_MIN_SAMPLES) return windowOf(this.#pooled, 'all-kinds');
    return PRIOR_WINDOW;
  }

  /** How many kinds and samples are held (for the worker's own metrics and tests). */
  get size(): { kinds: number; samples: number } {
    let samples = 0;
    for (const list of this.#byKind.values()) samples += list.length;
    return { kinds: this.#byKind.size, samples };
  }
}

function windowOf(samples: readonly EndSample[], basis: EndWindow['basis']): EndWindow {
  // An end lies anywhere between the last poll that saw the task running and the one that saw it
  // ended; the middle is the best guess (a first task, found late, is off by half its gap, which
  // the margin covers). Its lower bound would open the window early for every later task.
  const mids = samples.map((s) => (s.afterMs + s.byMs) / 2).sort((a, b) => a - b);
  const median = mids[Math.floor(mids.length / 2)]!;
  const margin = median * (samples.length >= 3 ? MARGIN_MANY : MARGIN_FEW);
  return { fromMs: Math.max(0, mids[0]! - margin), toMs: mids.at(-1)! + margin, basis };
}
