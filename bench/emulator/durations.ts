// Running times of planned tasks, handed to the emulator through `durationFor` at create time.
// Tasks of one kind share one instruction text (that is what makes them one kind), so the
// emulator cannot tell them apart: the book keeps a queue of planned durations per project and
// text and gives them out in create order. Every task of a kind draws from the same spread, so
// which one gets which does not matter; our workflows and the MCP client's twins use different
// projects, so both sides get the same durations.
import type { EmulatorOptions } from '../../src/emulator';

type TaskForDuration = Parameters<NonNullable<EmulatorOptions['durationFor']>>[0];

export class DurationBook {
  private readonly queues = new Map<string, number[]>();
  /** Creates the book had no duration for (the emulator's default applied to them). */
  misses = 0;

  add(project: string, instructions: string[], durationMs: number): void {
    const key = bookKey(project, instructions);
    const queue = this.queues.get(key) ?? [];
    queue.push(Math.round(durationMs));
    this.queues.set(key, queue);
  }

  /** For the emulator's `durationFor` option; an arrow so it can be passed as it is. */
  readonly durationFor = (task: TaskForDuration): number | undefined => {
    const duration = this.queues.get(bookKey(task.project, task.instructions))?.shift();
    if (duration === undefined) this.misses++;
    return duration;
  };
}

function bookKey(project: string, instructions: string[]): string {
  return `${project}\u0000${instructions.join('\u0000')}`;
}
