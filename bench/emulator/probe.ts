// A check that the emulator runs the tasks the bench plans: one probe task, created over HTTP
// like any client would, must run for the duration the duration book gave it (otherwise every
// duration in the report would be the emulator's default), and shows which fields the answers
// carry in the emulator's mode. The probe's requests are then cleared from the request log.
import type { BrowserAIEmulator } from '../../src/emulator';
import type { DurationBook } from './durations';

const PROBE_PROJECT = 'bench-probe';
const PROBE_TEXT = 'Benchmark probe: open https://example.com';
/** Unlike any default, so a match proves `durationFor` was used. */
const PROBE_DURATION_MS = 4_321;

export interface EmulatorFeatures {
  mode: string;
  /** The create answer carried a non-null `estimatedCompletion`. */
  sendsEstimate: boolean;
  /** The create answer carried `started`. */
  sendsStarted: boolean;
}

export async function probeEmulator(emulator: BrowserAIEmulator, book: DurationBook): Promise<EmulatorFeatures> {
  book.add(PROBE_PROJECT, [PROBE_TEXT], PROBE_DURATION_MS);
  const headers = { authorization: `apikey ${emulator.apiToken}`, 'content-type': 'application/json' };
  const response = await fetch(`${emulator.baseUrl}/tasks`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      instructions: [{ action: PROBE_TEXT }],
      type: 'crawler_automation',
      project: PROBE_PROJECT,
      geoLocation: { country: 'US' },
    }),
  });
  const answer = (await response.json()) as { executionId?: string; estimatedCompletion?: unknown; started?: unknown };
  if (!response.ok || !answer.executionId) throw new Error(`the emulator refused the probe task (${response.status})`);
  const duration = emulator.task(answer.executionId)?.scenario.durationMs;
  await fetch(`${emulator.baseUrl}/tasks/${answer.executionId}/command`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ command: 'stop' }),
  });
  emulator.resetRequests();
  if (duration !== PROBE_DURATION_MS)
    throw new Error(
      `the emulator ignored durationFor (probe ran ${duration} ms, not ${PROBE_DURATION_MS}): planned durations would not apply`,
    );
  return {
    mode: emulator.mode,
    sendsEstimate: answer.estimatedCompletion !== undefined && answer.estimatedCompletion !== null,
    sendsStarted: answer.started !== undefined && answer.started !== null,
  };
}

export function describeFeatures(features: EmulatorFeatures): string {
  return (
    `\`${features.mode}\` mode: create answers ${features.sendsEstimate ? 'carry' : 'carry no'} \`estimatedCompletion\` and ${features.sendsStarted ? 'carry' : 'no'} \`started\`; ` +
    'task durations set through `durationFor` (instruction texts unchanged)'
  );
}
