// The realistic mix: every task a job of its own (nothing to learn from another), running 30 to
// 100 s as BrowserAI's dashboard shows, arriving over a minute rather than all at once, and a
// share of them stopping at a one-time-code form. The emulator runs in its default mode.
import type { RealisticSettings } from '../../config';
import { Random } from '../../../dev/random';
import { CodeMaker, uniform } from '../../plan';
import type { BenchStack } from '../../stack';
import { plannedTwins, type TwinSpec } from '../twins';

export function planRealistic(stack: BenchStack, settings: RealisticSettings, seed: number) {
  const rng = new Random(seed);
  const codes = new CodeMaker(new Random(seed + 1));
  const specs: TwinSpec[] = [];
  for (let i = 0; i < settings.tasks; i++) {
    // Code tasks spread evenly over the list (and so over the start window).
    const needsCode = Math.floor((i + 1) * settings.codeShare) > Math.floor(i * settings.codeShare);
    const tag = `#rl${i}`;
    specs.push({
      workflowId: `bench-realistic-${i}`,
      group: needsCode ? 'one-time code' : 'plain',
      startAtMs: Math.round(uniform(rng, 0, settings.startSpreadMs)),
      shape: {
        text: `Realistic job ${tag}: open https://shop${i}.example.com, search for "desk lamp" and list the first 10 prices`,
        durationMs: Math.round(uniform(rng, settings.minDurationMs, settings.maxDurationMs)),
        needsCode,
      },
      code: needsCode ? { value: codes.next(), tag, when: 'awaiting', delayMs: 0 } : undefined,
    });
  }
  return plannedTwins(stack, specs);
}
