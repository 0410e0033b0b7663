// The scale scenario: one worker process at its defaults, many concurrent tasks started in one
// burst, one-time codes during and after the burst; the emulator as the old bench ran it
// (documented mode: answers carry an estimate) unless asked otherwise, so figures stay comparable.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { collectFacts } from '../../collect';
import { log } from '../../format';
import { PROJECT } from '../../plan';
import { runTasks } from '../../run';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import { runTargetOf, withStack } from '../../stack';
import type { TaskRecord } from '../../task';
import { planScale, slotsFor } from './plan';
import type { TimedProbe } from './memory';
import { renderScale } from './report';

const TASK_QUEUE = 'bench-scale';
const PROBE_EVERY_MS = 10_000;
const BUILD_BUNDLE = resolve(__dirname, '../../../scripts/build-workflow-bundle.js');

/** The image's workflow bundle (Dockerfile): built once by the same script, into a temporary file. */
export function buildWorkflowBundle(): string {
  const file = join(mkdtempSync(join(os.tmpdir(), 'bench-scale-')), 'workflow-bundle.js');
  execFileSync(process.execPath, [BUILD_BUNDLE, file], { stdio: 'ignore' });
  return file;
}

export async function measureScale(context: ScenarioContext): Promise<ScenarioReport> {
  const settings = context.config.scale;
  const loadBefore = os.loadavg()[0];
  return withStack({ queueMs: QUEUE_MS, emulatorMode: settings.emulatorMode }, async (stack) => {
    // As the image runs it: the workflow bundle built beforehand, so the start-up's bundling is not
    // in the figures. Every running task holds one poll activity: past the worker's default 5,000
    // slots, give it one per task, or the tasks would not run concurrently.
    const worker = await stack.startWorker('default', TASK_QUEUE, {
      WORKER_WORKFLOW_BUNDLE: buildWorkflowBundle(),
      ...slotsFor(settings.tasks),
      ...(settings.maxCachedWorkflows ? { WORKER_MAX_CACHED_WORKFLOWS: String(settings.maxCachedWorkflows) } : {}),
    });
    const records = planScale(settings, context.config.seed).map((plan): TaskRecord => ({ plan }));
    log(
      `scale: ${records.length} tasks of ${settings.durationMs / 1000} s, ${settings.burstCodes} codes during the burst, ${settings.lateCodes} after it`,
    );
    // Starting takes about 1 s per 100 workflows on 2 cores; then the tasks, the late codes and slack:
    // 8 min, and past 2,000 tasks 100 ms more per task (10,000 closed at about 12 a second here, the
    // dev server on the same 2 cores replaying workflows the worker's cache could not hold).
    const deadlineAt =
      Date.now() +
      (records.length / 100) * 1_500 +
      settings.durationMs +
      settings.lateCodeDelayMs +
      8 * 60_000 +
      Math.max(0, records.length - 2_000) * 100;
    const target = runTargetOf(stack, worker, TASK_QUEUE, PROJECT);
    // Where the memory goes, asked every 10 s: the answer taken at the largest RSS is reported.
    const probes: TimedProbe[] = [];
    const probing = setInterval(
      () => void worker.probeMemory().then((report) => report && probes.push({ at: Date.now(), report })),
      PROBE_EVERY_MS,
    );
    const outcome = await runTasks(records, target, { batch: settings.batch, deadlineAt, label: 'scale' }).finally(() =>
      clearInterval(probing),
    );
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
      memoryProbes: probes,
    });
  });
}
