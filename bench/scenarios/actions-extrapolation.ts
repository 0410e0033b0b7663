// From the three groups to a 3-hour task at the default settings, for any per-task measure
// (actions of a type, history events):
//   cost(3 h) = cost(short) + slope × (3 h − short duration) + 2 × cost of one more span
// The slope (per hour) is long minus short over their difference in duration: what keeping a
// task polled costs over time (heartbeats, mostly). Neither group crosses a span boundary (1 h
// by default), so a further span is measured apart: the span group's tasks cross several; what
// they cost beyond a default task of their length, divided by the poll activities they have
// beyond a short task, is the cost of one span. A 3-h task at the 1-h span has 2 more than a
// 1-minute task (its poll activity reports back at 1 h and 2 h).
import { mean } from '../statistics';
import type { RunOutcome } from '../run';
import { completedOk, type PlannedTask, type TaskRecord } from '../task';
import type { ActionCounts } from '../temporal-actions';
import type { WorkerProcess } from '../worker-process';

export interface ActionsGroup {
  name: 'short' | 'long' | 'span';
  namespace: string;
  taskQueue: string;
  durationMs: number;
  /** Non-default polling.maxSpanMs (the span group only). */
  maxSpanMs?: number;
  tasks: PlannedTask[];
}

export interface MeasuredGroup {
  group: ActionsGroup;
  records: TaskRecord[];
  actions: ActionCounts;
  outcome: RunOutcome;
  worker: WorkerProcess;
}

export const HOUR_MS = 3_600_000;
export const THREE_HOURS_MS = 3 * HOUR_MS;
/** At the default maxSpanMs (1 h): poll activities of a 3-h task beyond a short one's. */
export const EXTRA_SPANS_3H = 2;

/** Per task at the short and long lengths, per hour of task, per further span, and at 1 h and 3 h. */
export type Extrapolation = NonNullable<ReturnType<typeof extrapolate>>;

/** `perTask` gives a group's mean per task of the measure (e.g. heartbeats per task). */
export function extrapolate(groups: MeasuredGroup[], perTask: (group: MeasuredGroup) => number | undefined) {
  const short = groups.find((g) => g.group.name === 'short');
  const long = groups.find((g) => g.group.name === 'long');
  const span = groups.find((g) => g.group.name === 'span');
  const a = short && perTask(short);
  const b = long && perTask(long);
  if (!short || !long || a === undefined || b === undefined) return undefined;
  const slopePerHour = (b - a) / ((long.group.durationMs - short.group.durationMs) / HOUR_MS);
  const atLength = (durationMs: number) => a + slopePerHour * ((durationMs - short.group.durationMs) / HOUR_MS);
  let perSpan: number | undefined;
  const c = span && perTask(span);
  const extraPolls = span && (meanPollActivities(span) ?? 0) - (meanPollActivities(short) ?? 0);
  if (span && c !== undefined && extraPolls && extraPolls > 0)
    perSpan = (c - atLength(span.group.durationMs)) / extraPolls;
  // A 1-hour task crosses no span boundary at the default 1-h span; a 3-hour one crosses two.
  const threeHours = atLength(THREE_HOURS_MS) + EXTRA_SPANS_3H * (perSpan ?? 0);
  return { short: a, long: b, slopePerHour, perSpan, threeHours, oneHour: atLength(HOUR_MS) };
}

export function meanPollActivities(group: MeasuredGroup): number | undefined {
  return mean(completed(group).map((r) => r.facts!.history?.pollActivities ?? 0));
}

export function completed(group: MeasuredGroup): TaskRecord[] {
  return group.records.filter(completedOk);
}

/** Actions per task of the group, all types or those `match` picks. */
export function actionsPerTask(group: MeasuredGroup, match: (type: string) => boolean = () => true) {
  const tasks = group.records.filter((r) => r.firstRunId).length;
  if (tasks === 0) return undefined;
  const total = Object.entries(group.actions.byType).reduce((sum, [type, n]) => sum + (match(type) ? n : 0), 0);
  return total / tasks;
}

export function eventsPerTask(group: MeasuredGroup): number | undefined {
  return mean(completed(group).map((r) => r.facts!.history?.events ?? 0));
}
