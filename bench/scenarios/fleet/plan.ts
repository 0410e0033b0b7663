// The fleet scenario's plan. Two tenants' batches start together (75 % and 20 % of the tasks),
// enough to keep the limit busy ~ten times over; a late project's few items (2.5 %) start once
// they wait in line; interactive priority-1 tasks (2.5 %) start one by one, mid-batch. One worker
// is SIGKILLed and the Temporal server paused later still, once everything has started.
import type { FleetSettings } from '../../config';
import { taskInput } from '../../plan';
import type { BenchStack } from '../../stack';
import type { TaskRecord } from '../../task';

export const GROUPS = ['batch-a', 'batch-b', 'late', 'interactive'] as const;
export type FleetGroup = (typeof GROUPS)[number];

export interface FleetPlan {
  records: TaskRecord[];
  /** How long the tasks take at the limit with no gap between them: ⌈tasks / limit⌉ × duration. */
  idealMs: number;
  lateAtMs: number;
  killAtMs: number[];
  outageAtMs: number;
}

/** Batch starts, spaced so the dev server takes them in stride (it takes about 100 a second here). */
const START_SPACING_MS = 20;

export function planFleet(stack: BenchStack, settings: FleetSettings): FleetPlan {
  const { tasks, durationMs, limit } = settings;
  const idealMs = Math.ceil(tasks / limit) * durationMs;
  const small = Math.max(3, Math.round(tasks * 0.025));
  const counts: Record<FleetGroup, number> = {
    'batch-a': Math.round(tasks * 0.75),
    late: small,
    interactive: small,
    'batch-b': tasks - Math.round(tasks * 0.75) - 2 * small,
  };
  const lateAtMs = Math.round(idealMs * 0.2);
  const interactiveFromMs = Math.round(idealMs * 0.4);
  const startAt: Record<FleetGroup, (i: number) => number> = {
    'batch-a': (i) => i * START_SPACING_MS,
    'batch-b': (i) => i * START_SPACING_MS,
    late: () => lateAtMs,
    // One at a time over one task's length: each waits for the next free slot, not for each other.
    interactive: (i) => interactiveFromMs + Math.round((i * durationMs) / counts.interactive),
  };
  const records = GROUPS.flatMap((group) =>
    Array.from({ length: counts[group] }, (_, i): TaskRecord => {
      const input = taskInput(stack, {
        text: `Fleet ${group}: read the price list of https://${group}.example.com`,
        durationMs,
        project: `fleet-${group}`,
      });
      return {
        plan: {
          workflowId: `bench-fleet-${group}-${i}`,
          group,
          input: group === 'interactive' ? { ...input, priority: 1 } : input,
          startAtMs: startAt[group](i),
          durationMs,
        },
      };
    }),
  );
  const lastStartMs = Math.max(...records.map((r) => r.plan.startAtMs));
  const killAtMs = Array.from({ length: settings.kills }, (_, k) =>
    Math.round(idealMs * (0.3 + (0.1 * k) / settings.kills)),
  );
  return {
    records,
    idealMs,
    lateAtMs,
    killAtMs,
    outageAtMs: Math.max(Math.round(idealMs * 0.55), lastStartMs + 5_000),
  };
}
