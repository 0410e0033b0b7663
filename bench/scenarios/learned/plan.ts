// One job, repeated: a fixed set of kinds (one instruction text each), whose base durations are
// spread evenly over 30–100 s; every round runs every kind again, each task within ±15 % of its
// kind's base. Durations reach the emulator through `durationFor`, so a kind's text never changes.
import type { LearnedSettings } from '../../config';
import { Random } from '../../../dev/random';
import { uniform } from '../../plan';
import type { BenchStack } from '../../stack';
import { plannedTwins, type TwinSpec } from '../twins';

export interface LearnedKind {
  text: string;
  baseMs: number;
}

export function learnedKinds(settings: LearnedSettings): LearnedKind[] {
  const { kinds, minDurationMs: min, maxDurationMs: max } = settings;
  return Array.from({ length: kinds }, (_, k) => ({
    text: `Learned job ${k + 1}: open https://catalog${k + 1}.example.com, page through the listing and export every item as JSON`,
    baseMs: kinds === 1 ? (min + max) / 2 : min + (k * (max - min)) / (kinds - 1),
  }));
}

/** Round `round` (1-based): every kind `tasksPerKind` times, durations drawn for this round. */
export function planRound(
  stack: BenchStack,
  settings: LearnedSettings,
  kinds: LearnedKind[],
  round: number,
  seed: number,
) {
  const rng = new Random(seed * 1000 + round);
  const specs: TwinSpec[] = [];
  kinds.forEach((kind, k) => {
    for (let i = 0; i < settings.tasksPerKind; i++) {
      specs.push({
        workflowId: `bench-learned-r${round}-k${k + 1}-${i}`,
        group: `round ${round}`,
        startAtMs: Math.round(uniform(rng, 0, settings.startSpreadMs)),
        shape: {
          text: kind.text,
          durationMs: Math.round(kind.baseMs * (1 + uniform(rng, -settings.jitter, settings.jitter))),
        },
      });
    }
  });
  return plannedTwins(stack, specs);
}
