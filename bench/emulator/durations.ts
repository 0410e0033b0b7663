// Running times of planned tasks, handed to the emulator through `durationFor` at create time: a
// queue per project and instruction text (a kind's tasks share one), given out in create order.
// Our workflows and the MCP client's twins use different projects, so both get the same durations.
import type { BrowserAIEmulator, EmulatorOptions } from '../../src/emulator';
import { plainInput } from '../plan';

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

const PROBE = { project: 'bench-probe', text: 'Benchmark probe: open https://example.com', durationMs: 4_321 };

/** The emulator's mode, and whether its create answer carried a non-null `estimatedCompletion`, and `started`. */
export type EmulatorFeatures = { mode: string; sendsEstimate: boolean; sendsStarted: boolean };

/**
 * One probe task, created over HTTP like any client would, must run for the duration the book
 * gave it (unlike any default, so a match proves `durationFor` was used; otherwise every duration
 * in the report would be the emulator's default); its answer shows which fields the emulator's
 * mode sends. The probe's requests are then cleared from the request log.
 */
export async function probeEmulator(emulator: BrowserAIEmulator, book: DurationBook): Promise<EmulatorFeatures> {
  book.add(PROBE.project, [PROBE.text], PROBE.durationMs);
  const call = (path: string, body: object) =>
    fetch(`${emulator.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `apikey ${emulator.apiToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const response = await call('/tasks', plainInput(PROBE.text, PROBE.project));
  const answer = (await response.json()) as { executionId?: string; estimatedCompletion?: unknown; started?: unknown };
  if (!response.ok || !answer.executionId) throw new Error(`the emulator refused the probe task (${response.status})`);
  const duration = emulator.task(answer.executionId)?.scenario.durationMs;
  await call(`/tasks/${answer.executionId}/command`, { command: 'stop' });
  emulator.resetRequests();
  if (duration !== PROBE.durationMs)
    throw new Error(`the emulator ignored durationFor (probe ran ${duration} ms, not ${PROBE.durationMs})`);
  const sent = (value: unknown) => value !== undefined && value !== null;
  return { mode: emulator.mode, sendsEstimate: sent(answer.estimatedCompletion), sendsStarted: sent(answer.started) };
}

export function describeFeatures(features: EmulatorFeatures): string {
  return `\`${features.mode}\` mode: create answers ${features.sendsEstimate ? 'carry' : 'carry no'} \`estimatedCompletion\` and ${features.sendsStarted ? 'carry' : 'no'} \`started\`; task durations set through \`durationFor\` (instruction texts unchanged)`;
}
