// Three groups of plain tasks, each counted in its own namespace: one-minute tasks (what a task
// costs at least), long tasks (what every further hour adds: the slope), and tasks with a short
// polling span (what every further span adds; at the default 1-h span a 3-h task has 2 more).
import type { ActionsSettings } from '../../config';
import { taskInput } from '../../plan';
import type { BenchStack } from '../../stack';
import type { PlannedTask } from '../../task';

export type ActionsGroupName = 'short' | 'long' | 'span';

export interface ActionsGroup {
  name: ActionsGroupName;
  namespace: string;
  taskQueue: string;
  durationMs: number;
  /** Non-default polling.maxSpanMs (the span group only). */
  maxSpanMs?: number;
  tasks: PlannedTask[];
}

export function actionsNamespaces(settings: ActionsSettings): string[] {
  return ['bench-short', 'bench-long', ...(settings.spanTasks > 0 ? ['bench-span'] : [])];
}

export function planActions(stack: BenchStack, settings: ActionsSettings): ActionsGroup[] {
  const group = (name: ActionsGroupName, count: number, durationMs: number, maxSpanMs?: number): ActionsGroup => ({
    name,
    namespace: `bench-${name}`,
    taskQueue: `bench-actions-${name}`,
    durationMs,
    maxSpanMs,
    tasks: Array.from({ length: count }, (_, i) => ({
      workflowId: `bench-actions-${name}-${i}`,
      group: name,
      startAtMs: 0,
      durationMs,
      input: taskInput(stack, {
        text: `Actions job #a${name}${i}: open https://site${i}.example.com and summarise the front page`,
        durationMs,
        polling: maxSpanMs ? { maxSpanMs } : undefined,
      }),
    })),
  });
  return [
    group('short', settings.shortTasks, settings.shortDurationMs),
    group('long', settings.longTasks, settings.longDurationMs),
    ...(settings.spanTasks > 0
      ? [group('span', settings.spanTasks, settings.spanTaskDurationMs, settings.spanMs)]
      : []),
  ];
}
