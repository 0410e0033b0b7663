// Many concurrent tasks on one worker, as the old bench's main run (whose 500-task figures this
// generalises): every task `[duration=60s]` with a tag, some `[needs-code]`. Code tasks are
// spread evenly over the start burst; the first kind gets its code as soon as the form shows
// (during the burst), the second a while after the last start (the worker busy with running
// tasks only). Texts are as in the old bench, markers included, so figures stay comparable.
import type { ScaleSettings } from '../../config';
import { Random } from '../../../dev/random';
import { CodeMaker, PROJECT } from '../../plan';
import type { PlannedCode, PlannedTask } from '../../task';

export function planScale(settings: ScaleSettings, seed: number): PlannedTask[] {
  const codes = new CodeMaker(new Random(seed));
  const codeTasks = settings.burstCodes + settings.lateCodes;
  const seconds = Math.round(settings.durationMs / 1000);
  let codeIndex = 0;
  return Array.from({ length: settings.tasks }, (_, i): PlannedTask => {
    const needsCode = Math.floor(((i + 1) * codeTasks) / settings.tasks) > Math.floor((i * codeTasks) / settings.tasks);
    const tag = `#m${i}`;
    let code: PlannedCode | undefined;
    if (needsCode) {
      // Late ones spread evenly among the code tasks, so both kinds span the whole burst.
      const j = codeIndex++;
      const late =
        Math.floor(((j + 1) * settings.lateCodes) / codeTasks) > Math.floor((j * settings.lateCodes) / codeTasks);
      code = late
        ? { value: codes.next(), tag, when: 'after-burst', delayMs: settings.lateCodeDelayMs }
        : { value: codes.next(), tag, when: 'awaiting', delayMs: 0 };
    }
    return {
      workflowId: `bench-scale-${i}`,
      group: code ? (code.when === 'awaiting' ? 'code during burst' : 'code after burst') : 'plain',
      startAtMs: 0,
      durationMs: settings.durationMs,
      code,
      input: {
        type: 'crawler_automation',
        project: PROJECT,
        geoLocation: { country: 'US' },
        instructions: [{ action: `Benchmark crawl ${tag} [duration=${seconds}s]${needsCode ? ' [needs-code]' : ''}` }],
      },
    };
  });
}

/** WORKER_MAX_CONCURRENT_ACTIVITIES for this many tasks, when the worker's default (5,000) is too few. */
export function slotsFor(tasks: number): Record<string, string> | undefined {
  return tasks + 100 > 5_000 ? { WORKER_MAX_CONCURRENT_ACTIVITIES: String(tasks + 100) } : undefined;
}
