// A worker that has seen other jobs: first short tasks of many kinds and long tasks of another
// project, then tasks of kinds it has not seen, then a known 2-s kind one of whose last 8 runs
// took 10 minutes. Every phase's tasks are of kinds of their own (one instruction text each),
// except the 2-s kind, which is one text throughout.
import type { MixedSettings } from '../../config';
import { Random } from '../../../dev/random';
import { PROJECT, taskInput, uniform } from '../../plan';
import type { BenchStack } from '../../stack';
import type { PlannedTask } from '../../task';
import { plannedTwins, type TwinSpec } from '../twins';

/** The project whose long tasks run beside the first phase's short ones. */
export const LONG_PROJECT = 'bench-long';
const SHORT_RANGE_MS = [1_000, 10_000] as const;
const LONG_RANGE_MS = [120_000, 180_000] as const;
const UNSEEN_RANGE_MS = [30_000, 100_000] as const;
const KNOWN_KIND_MS = 2_000;
/** Runs of the 2-s kind before the outlier ends: with it, its last 8 samples. */
const KNOWN_KIND_RUNS = 7;
const KNOWN_KIND_TASKS = 10;
const KNOWN_KIND_TEXT = 'Mixed known job: open https://status.example.com and read the banner';

export interface MixedPlan {
  /** The 2-s kind's long run, started first (its duration is the first the book gives out for the text). */
  outlier: PlannedTask;
  /** Short tasks of project `bench`, long ones of `bench-long`, and the 2-s kind's normal runs: ours only. */
  warmUp: PlannedTask[];
  unseen: { ours: PlannedTask[]; mcp: ReturnType<typeof plannedTwins>['mcp'] };
  known: { ours: PlannedTask[]; mcp: ReturnType<typeof plannedTwins>['mcp'] };
}

export function planMixed(stack: BenchStack, settings: MixedSettings, seed: number): MixedPlan {
  const rng = new Random(seed * 7919 + 17);
  // Ours only: no twin, so the book holds no duration for an MCP task that never comes.
  const own = (spec: TwinSpec): PlannedTask => ({
    workflowId: spec.workflowId,
    group: spec.group,
    input: taskInput(stack, spec.shape),
    startAtMs: spec.startAtMs,
    durationMs: spec.shape.durationMs,
  });
  const outlier = own({
    workflowId: 'bench-mixed-outlier',
    group: 'outlier',
    startAtMs: 0,
    shape: { text: KNOWN_KIND_TEXT, durationMs: settings.outlierMs },
  });
  const warmUp: PlannedTask[] = [];
  for (let i = 0; i < settings.shortTasks; i++)
    warmUp.push(
      own({
        workflowId: `bench-mixed-short-${i}`,
        group: 'short',
        startAtMs: Math.round(uniform(rng, 0, 10_000)),
        shape: {
          text: `Mixed short job ${i}: open https://s${i}.example.com and read the title`,
          durationMs: Math.round(uniform(rng, ...SHORT_RANGE_MS)),
        },
      }),
    );
  for (let i = 0; i < settings.longProjectTasks; i++)
    warmUp.push(
      own({
        workflowId: `bench-mixed-long-${i}`,
        group: 'long project',
        startAtMs: Math.round(uniform(rng, 0, 10_000)),
        shape: {
          text: `Mixed long job ${i}: crawl https://l${i}.example.com and export it`,
          durationMs: Math.round(uniform(rng, ...LONG_RANGE_MS)),
          project: LONG_PROJECT,
        },
      }),
    );
  for (let i = 0; i < KNOWN_KIND_RUNS; i++)
    warmUp.push(
      own({
        workflowId: `bench-mixed-known-warm-${i}`,
        group: 'known kind',
        // After the outlier's create: the book gives the kind's durations out in create order.
        startAtMs: 2_000 + i * 1_500,
        shape: { text: KNOWN_KIND_TEXT, durationMs: Math.round(KNOWN_KIND_MS * (1 + uniform(rng, -0.1, 0.1))) },
      }),
    );
  const unseen = plannedTwins(
    stack,
    Array.from({ length: settings.unseenTasks }, (_, i) => ({
      workflowId: `bench-mixed-unseen-${i}`,
      group: 'unseen',
      startAtMs: Math.round(uniform(rng, 0, 60_000)),
      shape: {
        text: `Mixed new job ${i}: open https://n${i}.example.com, search the catalogue and export the hits`,
        durationMs: Math.round(uniform(rng, ...UNSEEN_RANGE_MS)),
      },
    })),
  );
  const known = plannedTwins(
    stack,
    Array.from({ length: KNOWN_KIND_TASKS }, (_, i) => ({
      workflowId: `bench-mixed-known-${i}`,
      group: 'known kind',
      startAtMs: Math.round(uniform(rng, 0, 5_000)),
      shape: { text: KNOWN_KIND_TEXT, durationMs: Math.round(KNOWN_KIND_MS * (1 + uniform(rng, -0.1, 0.1))) },
    })),
  );
  return { outlier, warmUp, unseen, known };
}

export const MIXED_SHAPE = {
  project: PROJECT,
  shortRangeMs: SHORT_RANGE_MS,
  longRangeMs: LONG_RANGE_MS,
  unseenRangeMs: UNSEEN_RANGE_MS,
  knownKindMs: KNOWN_KIND_MS,
  knownKindRuns: KNOWN_KIND_RUNS,
  knownKindTasks: KNOWN_KIND_TASKS,
};
