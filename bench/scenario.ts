// The shape every scenario has: plan (the tasks, their durations registered with the emulator),
// measure (drive them on a fresh stack and collect what happened), report (the targets judged,
// the setup described, the details). `scenario()` runs the three on a stack of its own and lays
// the section out as every section is: heading, targets table, misses, setup, details.
import os from 'node:os';
import { busyLine, startCpuHogs } from './busy';
import type { BenchConfig } from './config';
import { environmentLines, type RunEnvironment } from './report/environment';
import { missLines, QUICK_BANNER, targetTable, type TargetRow } from './report/markdown';
import { describeFeatures, withStack, type BenchStack, type StackOptions } from './stack';

/** `hogs`: CPU hogs the bench runs beside the stack (0: the machine as it is; see busy.ts). */
export type ScenarioContext = { config: BenchConfig; env: RunEnvironment; hogs: number };

/** `heading`: the section's `## ` heading, which `markdown` starts with. */
export type ScenarioReport = { heading: string; markdown: string; rows: TargetRow[]; raw: unknown };

/** What a scenario's report step gives; `scenario()` puts it in the order every section has. */
interface ScenarioSection {
  rows: TargetRow[];
  /** `- **Tasks:** …` lines: what ran, on what. */
  setup: string[];
  /** Tables and checks after the setup. */
  details: string[];
  raw: unknown;
}

export interface Scenario<Plan, Measured> {
  heading: string;
  /** The stack it runs on; default: the emulator's default mode, queued QUEUE_MS. */
  stack?: (context: ScenarioContext) => StackOptions;
  plan(stack: BenchStack, context: ScenarioContext): Plan;
  measure(stack: BenchStack, plan: Plan, context: ScenarioContext): Promise<Measured>;
  report(measured: Measured, stack: BenchStack, context: ScenarioContext): ScenarioSection;
}

/** Emulator queue time of every scenario: a task reports `queued` this long after its create (as the old bench). */
export const QUEUE_MS = 500;

export function scenario<Plan, Measured>(
  shape: Scenario<Plan, Measured>,
): (context: ScenarioContext) => Promise<ScenarioReport> {
  return async (context) => {
    const before = os.loadavg()[0];
    const options = shape.stack?.(context) ?? { queueMs: QUEUE_MS };
    const heading = context.hogs ? `${shape.heading}, on a busy machine` : shape.heading;
    return withStack(options, async (stack) => {
      const stopHogs = startCpuHogs(context.hogs);
      const measured = await shape.measure(stack, shape.plan(stack, context), context).finally(stopHogs);
      const { rows, setup, details, raw } = shape.report(measured, stack, context);
      const busyPercent = stack.machine.busyPercent(context.env.startedAt, Date.now(), os.cpus().length);
      const markdown = [
        heading,
        '',
        ...(context.config.quick ? [QUICK_BANNER, ''] : []),
        ...targetTable(rows),
        '',
        ...missLines(rows),
        '',
        ...environmentLines(context.env, { before, after: os.loadavg()[0], busyPercent }),
        `- **Emulator:** ${describeFeatures(stack.features)}; queued ${options.queueMs} ms, default awaiting lag.`,
        ...(context.hogs ? [busyLine(context.hogs)] : []),
        ...setup,
        '',
        ...details,
      ];
      return { heading, markdown: markdown.join('\n').replace(/\n{3,}/g, '\n\n'), rows, raw };
    });
  };
}
