import { createHash } from 'node:crypto';
import type { Instruction, TaskType } from '../contract/browserai-types';

// How long tasks of one kind run, learned from the tasks this worker saw end, so the poll can
// sleep through the part of a task that never ends and look often where tasks of its kind do.
// Real BrowserAI answers carry no estimate (docs/design/learned-durations.md); without this,
// polling is a guess.
//
// In memory, per worker process, and shared through visibility: a workflow publishes where its
// task ended (search attributes BrowserAIKind, BrowserAIEndMs, in the upsert of its final status),
// and every worker reads what closed workflows published (visibility-durations.ts), at start and
// then every minute. A kind this worker has not seen is polled as on a fresh worker,
// on the durations BrowserAI's dashboard shows (about 30 to 100 s): what other kinds took says
// little about a new one, and a run of short tasks must not make a long one be found late.

/** A kind: the same type, project and instructions (only hashes of the project and the instructions are kept). */
export function taskKind(task: { type: TaskType; project: string; instructions: readonly Instruction[] }): string {
  const hash = createHash('sha256');
  for (const instruction of task.instructions) hash.update(instruction.action).update('\u0000');
  const project = createHash('sha256').update(task.project).digest('hex').slice(0, 16);
  return `${task.type}:${project}:${hash.digest('hex').slice(0, 16)}`;
}

/** Where a task is expected to end, in milliseconds since it was created (or since input was last sent). */
export interface EndWindow {
  fromMs: number;
  toMs: number;
  /** What the window comes from: this kind's own tasks, or the fallback. */
  basis: 'kind' | 'prior';
}

/** One end seen: the task ended after `afterMs` (the last poll that saw it running) and by `byMs`. */
export interface EndSample {
  afterMs: number;
  byMs: number;
}

/** The durations BrowserAI's dashboard shows (behaviour notes): the window of a kind not seen yet. */
export const PRIOR_WINDOW: EndWindow = { fromMs: 25_000, toMs: 100_000, basis: 'prior' };

const SAMPLES_PER_KIND = 8;
/** Runs whose end this worker recorded, so reading the same end from visibility does not count it twice. */
const RECENT_SOURCES = 20_000;
/** About 60 bytes of key and 8 samples of 16 bytes each per kind: a few MB at most. */
const MAX_KINDS = 5_000;
/**
 * A sample more than this many times the kind's median (or less than its inverse) is an outlier,
 * once there are 3 samples to tell: one 10-minute run of a 2-s kind must not spread its window
 * over 10 minutes. A task that runs that long again is found by the backoff after the window.
 */
const OUTLIER_FACTOR = 3;
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
  readonly #sources = new Set<string>();

  /**
   * Records a task that ran to its end without input (failed and stopped tasks say nothing about
   * the kind). `source` (its workflow run) is recorded once, whether this worker saw the end or
   * read it from visibility.
   */
  record(kind: string, sample: EndSample, source?: string): void {
    if (!(sample.byMs >= sample.afterMs && sample.afterMs >= 0)) return;
    if (source !== undefined) {
      if (this.#sources.has(source)) return;
      this.#sources.add(source);
      if (this.#sources.size > RECENT_SOURCES) this.#sources.delete(this.#sources.values().next().value!);
    }
    const samples = this.#byKind.get(kind) ?? [];
    this.#byKind.delete(kind);
    samples.push(sample);
    if (samples.length > SAMPLES_PER_KIND) samples.shift();
    this.#byKind.set(kind, samples);
    if (this.#byKind.size > MAX_KINDS) this.#byKind.delete(this.#byKind.keys().next().value!);
  }

  /** Where a task of this kind should end: from its own kind, else the prior. */
  expectedEnd(kind: string | undefined): EndWindow {
    const own = kind === undefined ? undefined : this.#byKind.get(kind);
    return own && own.length > 0 ? windowOf(own) : PRIOR_WINDOW;
  }

  /** How many kinds and samples are held (for the worker's own metrics and tests). */
  get size(): { kinds: number; samples: number } {
    let samples = 0;
    for (const list of this.#byKind.values()) samples += list.length;
    return { kinds: this.#byKind.size, samples };
  }
}

function windowOf(samples: readonly EndSample[]): EndWindow {
  // An end lies anywhere between the last poll that saw the task running and the one that saw it
  // ended; the middle is the best guess (a first task, found late, is off by half its gap, which
  // the margin covers). Its lower bound would open the window early for every later task.
  let mids = samples.map((s) => (s.afterMs + s.byMs) / 2).sort((a, b) => a - b);
  let median = mids[Math.floor(mids.length / 2)]!;
  if (mids.length >= 3) {
    mids = mids.filter((mid) => mid <= median * OUTLIER_FACTOR && mid >= median / OUTLIER_FACTOR);
    median = mids[Math.floor(mids.length / 2)]!;
  }
  const margin = median * (samples.length >= 3 ? MARGIN_MANY : MARGIN_FEW);
  return { fromMs: Math.max(0, mids[0]! - margin), toMs: mids.at(-1)! + margin, basis: 'kind' };
}
