// The scale scenario: one worker process at its defaults, many concurrent tasks started in one
// burst, one-time codes during and after the burst; the emulator as the old bench ran it
// (documented mode: answers carry an estimate) unless asked otherwise, so figures stay comparable.
import os from 'node:os';
import { collectFacts } from '../../collect';
import { log } from '../../format';
import { PROJECT } from '../../plan';
import { runTasks } from '../../run';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import { runTargetOf, withStack } from '../../stack';
import type { TaskRecord } from '../../task';
import { planScale, slotsFor } from './plan';
import { renderScale } from './report';

const TASK_QUEUE = 'bench-scale';

export async function measureScale(context: ScenarioContext): Promise<ScenarioReport> {
  const settings = context.config.scale;
  const loadBefore = os.loadavg()[0];
  return withStack({ queueMs: QUEUE_MS, emulatorMode: settings.emulatorMode }, async (stack) => {
    // Every running task holds one poll activity: past the worker's default 5,000 slots, give it one
    // per task, or the tasks would not run concurrently.
    const worker = await stack.startWorker('default', TASK_QUEUE, slotsFor(settings.tasks));
    const records = planScale(settings, context.config.seed).map((plan): TaskRecord => ({ plan }));
    log(
      `scale: ${records.length} tasks of ${settings.durationMs / 1000} s, ${settings.burstCodes} codes during the burst, ${settings.lateCodes} after it`,
    );
    // Starting takes about 1 s per 100 workflows on 2 cores; then the tasks, the late codes and slack.
    const deadlineAt =
      Date.now() + (records.length / 100) * 1_500 + settings.durationMs + settings.lateCodeDelayMs + 8 * 60_000;
    const target = runTargetOf(stack, worker, TASK_QUEUE, PROJECT);
    const outcome = await runTasks(records, target, { batch: settings.batch, deadlineAt, label: 'scale' });
    const loadAfter = os.loadavg()[0];
    worker.sampler.sample();
    log('scale: collecting per-task results and histories');
    const requests = [...stack.emulator.requests];
    await collectFacts(stack.temporal.client, records, stack.emulator, requests);
    return renderScale({
      context,
      settings,
      stack,
      worker,
      records,
      outcome,
      requests,
      load: { before: loadBefore, after: loadAfter },
    });
  });
}
