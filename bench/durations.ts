// Running times of planned tasks, handed to the emulator through `durationFor` at create time: a
// queue per project and instruction text (a kind's tasks share one), given out in create order.
// Our workflows and the MCP client's twins use different projects, so both get the same durations.
import type { EmulatorOptions } from '../src/emulator';

type TaskForDuration = Parameters<NonNullable<EmulatorOptions['durationFor']>>[0];

export class DurationBook {
  private readonly queues = new Map<string, number[]>();
  /** Creates the book had no duration for (the emulator's default applied to them). */
  misses = 0;

  add(project: string, instructions: string[], durationMs: number): void {
    const key = bookKey(project, instructions);
    this.queues.set(key, [...(this.queues.get(key) ?? []), Math.round(durationMs)]);
  }

  /** For the emulator's `durationFor` option; an arrow so it can be passed as it is. */
  readonly durationFor = (task: TaskForDuration): number | undefined => {
    const duration = this.queues.get(bookKey(task.project, task.instructions))?.shift();
    if (duration === undefined) this.misses++;
    return duration;
  };
}

const bookKey = (project: string, instructions: string[]) => `${project}\u0000${instructions.join('\u0000')}`;
