// What every scenario's plan shares: turning "a task of this kind, this long" into the input the
// workflow gets, with the duration registered for the emulator's `durationFor` (so the text, and
// with it the kind, stays the same whatever the duration), and unique one-time codes.
import type { BrowserTaskInput, PollingOptions } from '../src/contract/input';
import type { Random } from '../dev/random';
import type { DurationBook } from './durations';

export const PROJECT = 'bench';

export interface TaskShape {
  /** The instruction text; tasks of one kind share it. */
  text: string;
  durationMs: number;
  /** Adds the `[needs-code]` marker: the emulator stops the task at a one-time-code form. */
  needsCode?: boolean;
  project?: string;
  polling?: PollingOptions;
}

/** The workflow input; its running time is registered with the stack's duration book (`BenchStack`). */
export function taskInput(stack: { durations: DurationBook }, shape: TaskShape): BrowserTaskInput {
  const project = shape.project ?? PROJECT;
  const text = shape.needsCode ? `${shape.text} [needs-code]` : shape.text;
  stack.durations.add(project, [text], shape.durationMs);
  return { ...plainInput(text, project), ...(shape.polling ? { polling: shape.polling } : {}) };
}

/** One instruction, a crawler task from the US: the input every scenario's tasks share. */
export function plainInput(text: string, project = PROJECT): BrowserTaskInput {
  return { instructions: [{ action: text }], type: 'crawler_automation', project, geoLocation: { country: 'US' } };
}

/** 6-digit codes, unique within a run, from the seeded generator. */
export class CodeMaker {
  private readonly used = new Set<string>();

  constructor(private readonly rng: Random) {}

  next(): string {
    let code: string;
    do code = String(this.rng.int(100_000, 999_999));
    while (this.used.has(code));
    this.used.add(code);
    return code;
  }
}

export function uniform(rng: Random, min: number, max: number): number {
  return min + rng.next() * (max - min);
}
