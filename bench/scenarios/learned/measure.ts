// The learned-rounds scenario: the same worker process through every round (what it learns is
// per worker, in memory), each round beside the MCP client's loop, one round after the other.
import os from 'node:os';
import { log } from '../../format';
import { PROJECT } from '../../plan';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import { runTargetOf, withStack } from '../../stack';
import { runSideBySide, type SideBySide } from '../side-by-side';
import { learnedKinds, planRound } from './plan';
import { renderLearned } from './report';

const TASK_QUEUE = 'bench-learned';

export async function measureLearned(context: ScenarioContext): Promise<ScenarioReport> {
  const settings = context.config.learned;
  const loadBefore = os.loadavg()[0];
  return withStack({ queueMs: QUEUE_MS }, async (stack) => {
    let worker = await stack.startWorker('default', TASK_QUEUE);
    const target = runTargetOf(stack, worker, TASK_QUEUE, PROJECT);
    const kinds = learnedKinds(settings);
    const rounds: SideBySide[] = [];
    for (let round = 1; round <= settings.rounds; round++) {
      if (settings.restartBeforeLast && round === settings.rounds && round > 1) {
        log('learned: restarting the worker before the last round');
        await worker.stop();
        worker = await stack.startWorker('default', TASK_QUEUE);
        target.worker = worker;
      }
      const planned = planRound(stack, settings, kinds, round, context.config.seed);
      log(`learned: round ${round}/${settings.rounds}, ${planned.ours.length} tasks of ${kinds.length} kinds`);
      const deadlineAt =
        Date.now() + settings.startSpreadMs + settings.maxDurationMs * (1 + settings.jitter) * 2 + 4 * 60_000;
      rounds.push(await runSideBySide(target, planned, { label: `learned round ${round}`, deadlineAt }));
      if (worker.exited) break;
    }
    return renderLearned({
      context,
      settings,
      kinds,
      stack,
      worker,
      rounds,
      load: { before: loadBefore, after: os.loadavg()[0] },
    });
  });
}
