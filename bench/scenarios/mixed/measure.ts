// The mixed-workload scenario, on one worker process throughout: the 2-s kind's 10-minute run is
// started first; meanwhile short tasks and another project's long ones teach the worker other
// jobs (ours only), then tasks of kinds it has not seen run beside the MCP client's loop; once
// the long run has ended (and is among the kind's samples), the 2-s kind runs beside it too.
import os from 'node:os';
import { sleep } from '../../../dev/async';
import { collectFacts } from '../../collect';
import { log } from '../../format';
import { PROJECT } from '../../plan';
import { runTasks } from '../../run';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import { runTargetOf, withStack } from '../../stack';
import type { TaskRecord } from '../../task';
import { runSideBySide } from '../side-by-side';
import { planMixed } from './plan';
import { renderMixed } from './report';

const TASK_QUEUE = 'bench-mixed';
const SLACK_MS = 4 * 60_000;

export async function measureMixed(context: ScenarioContext): Promise<ScenarioReport> {
  const settings = context.config.mixed;
  const loadBefore = os.loadavg()[0];
  return withStack({ queueMs: QUEUE_MS }, async (stack) => {
    const worker = await stack.startWorker('default', TASK_QUEUE);
    const target = runTargetOf(stack, worker, TASK_QUEUE, PROJECT);
    const plan = planMixed(stack, settings, context.config.seed);
    const outlier: TaskRecord[] = [{ plan: plan.outlier }];
    const outlierRun = runTasks(outlier, target, {
      batch: 1,
      deadlineAt: Date.now() + settings.outlierMs + SLACK_MS,
      label: 'mixed: the 2-s kind, long run',
    });
    // Its create must come first: the book hands the kind's durations out in create order.
    while (!stack.emulator.requests.some((r) => r.method === 'POST' && r.path === '/tasks')) await sleep(100);

    log(`mixed: warm-up, ${plan.warmUp.length} tasks (short, another project's long ones, the 2-s kind)`);
    const warmUp = plan.warmUp.map((p): TaskRecord => ({ plan: p }));
    const warmOutcome = await runTasks(warmUp, target, {
      batch: 50,
      deadlineAt: Date.now() + 200_000 + SLACK_MS,
      label: 'mixed warm-up',
    });
    log(`mixed: ${plan.unseen.ours.length} tasks of kinds not seen yet`);
    const unseen = await runSideBySide(target, plan.unseen, {
      label: 'mixed unseen kinds',
      deadlineAt: Date.now() + 160_000 + SLACK_MS,
    });
    log('mixed: waiting for the 2-s kind’s long run to end');
    const outlierOutcome = await outlierRun;
    log(`mixed: ${plan.known.ours.length} tasks of the 2-s kind`);
    const known = await runSideBySide(target, plan.known, {
      label: 'mixed known kind',
      deadlineAt: Date.now() + 60_000 + SLACK_MS,
    });
    await collectFacts(target.client, [...outlier, ...warmUp], stack.emulator, [...stack.emulator.requests]);
    return renderMixed({
      context,
      settings,
      stack,
      worker,
      outlier,
      warmUp,
      unseen,
      known,
      outcomes: [warmOutcome, outlierOutcome],
      load: { before: loadBefore, after: os.loadavg()[0] },
    });
  });
}
