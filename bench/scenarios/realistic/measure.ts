// The realistic scenario: one worker at its defaults, the emulator in its default mode, our
// workflows and the MCP client's loop side by side on the same tasks.
import os from 'node:os';
import { log } from '../../format';
import { PROJECT } from '../../plan';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import { runTargetOf, withStack } from '../../stack';
import { runSideBySide } from '../side-by-side';
import { planRealistic } from './plan';
import { renderRealistic } from './report';

const TASK_QUEUE = 'bench-realistic';

export async function measureRealistic(context: ScenarioContext): Promise<ScenarioReport> {
  const settings = context.config.realistic;
  const loadBefore = os.loadavg()[0];
  return withStack({ queueMs: QUEUE_MS }, async (stack) => {
    const worker = await stack.startWorker('default', TASK_QUEUE);
    const planned = planRealistic(stack, settings, context.config.seed);
    log(
      `realistic: ${planned.ours.length} tasks of ${settings.minDurationMs / 1000}–${settings.maxDurationMs / 1000} s over ${settings.startSpreadMs / 1000} s, beside the MCP client's loop`,
    );
    const deadlineAt = Date.now() + settings.startSpreadMs + settings.maxDurationMs * 2 + 5 * 60_000;
    const target = runTargetOf(stack, worker, TASK_QUEUE, PROJECT);
    const result = await runSideBySide(target, planned, { label: 'realistic', deadlineAt });
    return renderRealistic({
      context,
      settings,
      stack,
      worker,
      result,
      load: { before: loadBefore, after: os.loadavg()[0] },
    });
  });
}
