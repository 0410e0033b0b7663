// Where a latency goes, step by step, for the typical task and for the slowest 1 %: a tail is a
// few tasks, and the median of each step says nothing about what held those back. The steps come
// from history event times and the emulator's arrivals (one clock: all on this machine).
import { fmt, fmtMs } from '../format';
import { stats, type Stats } from '../statistics';
import type { TaskRecord, WorkflowTaskMoments } from '../task';
import type { Bound } from './markdown';

type Moment = (record: TaskRecord) => number | undefined;
/** A step: its label and the moments it lies between. */
export type Step = readonly [label: string, from: Moment, to: Moment];

const workflowTasks = (r: TaskRecord) => r.facts?.history?.workflowTasks ?? [];
/** The first workflow task started at or after `at` that completed: the one that took what happened then. */
const taskAfter = (r: TaskRecord, at: number | undefined): WorkflowTaskMoments | undefined =>
  at === undefined
    ? undefined
    : workflowTasks(r).find((t) => !t.lost && t.startedAt !== undefined && t.startedAt >= at);
/** Not before `floor`: a workflow task scheduled before the signal came took it when it started. */
const notBefore = (floor: number | undefined, at: number | undefined) =>
  floor === undefined || at === undefined ? undefined : Math.max(floor, at);

const signaled: Moment = (r) => r.facts?.history?.signaledAt;
const signalTask = (r: TaskRecord) => taskAfter(r, signaled(r));
const closeTask = (r: TaskRecord) => taskAfter(r, r.facts?.history?.lastPollCompletedAt);

/** Message sent (`submitCode` or `appendInstructions`) → `POST …/instructions` arrives, in its steps. */
export function messageSteps(sent: Moment): { total: Step; steps: Step[] } {
  const scheduled: Moment = (r) => notBefore(signaled(r), signalTask(r)?.scheduledAt);
  // prettier-ignore
  return {
    total: ['Message sent → `POST …/instructions` arrives', sent, (r) => r.facts?.appendAt],
    steps: [
      ['Sent → WorkflowExecutionSignaled (client call, server)', sent, signaled],
      ['Signaled → its workflow task scheduled (another one in flight first)', signaled, scheduled],
      ['… scheduled → started (waiting for the worker to take it)', scheduled, (r) => signalTask(r)?.startedAt],
      ['… started → completed (the worker runs it)', (r) => signalTask(r)?.startedAt, (r) => signalTask(r)?.closedAt],
      ['Completed → append activity started (dispatch)', (r) => signalTask(r)?.closedAt, (r) => r.facts?.history?.appendStartedAt],
      ['Activity started → `POST …/instructions` arrives', (r) => r.facts?.history?.appendStartedAt, (r) => r.facts?.appendAt],
    ],
  };
}

/** Task end (the emulator's) → workflow closed, in its steps. */
export function closeSteps(): { total: Step; steps: Step[] } {
  const pollCompleted: Moment = (r) => r.facts?.history?.lastPollCompletedAt;
  // prettier-ignore
  return {
    total: ['Task end → workflow closed', (r) => r.facts?.endedAt, (r) => r.facts?.closeTime],
    steps: [
      ['Task end → last `GET /tasks` (polling schedule)', (r) => r.facts?.endedAt, (r) => r.facts?.lastGetAt],
      ['Last `GET /tasks` → pollTask completed (results read, completion)', (r) => r.facts?.lastGetAt, pollCompleted],
      ['pollTask completed → workflow task started (waiting for the worker)', pollCompleted, (r) => closeTask(r)?.startedAt],
      ['… started → completed (the worker runs it)', (r) => closeTask(r)?.startedAt, (r) => closeTask(r)?.closedAt],
      ['Completed → workflow closed (more workflow tasks)', (r) => closeTask(r)?.closedAt, (r) => r.facts?.closeTime],
    ],
  };
}

type Steps = ReturnType<typeof closeSteps>;

const gap =
  ([, from, to]: Step) =>
  (r: TaskRecord): number | undefined => {
    const [a, b] = [from(r), to(r)];
    return a === undefined || b === undefined ? undefined : b - a;
  };

/** The tasks `total` was measured on, and the slowest 1 % of them by it (at least one). */
function measuredAndSlowest(records: TaskRecord[], total: Step) {
  const measured = records.filter((r) => gap(total)(r) !== undefined);
  const slowest = [...measured]
    .sort((a, b) => gap(total)(b)! - gap(total)(a)!)
    .slice(0, Math.ceil(measured.length / 100));
  return { measured, slowest };
}

const lostTasks = (rs: TaskRecord[]) => rs.flatMap((r) => workflowTasks(r).filter((t) => t.lost));

/**
 * A table of `total` and its steps: each step's p50, p99 and max over every task, and its mean and
 * max over the slowest 1 % by `total` (at least one task), with the workflow tasks they lost.
 */
export function latencyTable(title: string, records: TaskRecord[], { total, steps }: Steps) {
  const { measured, slowest } = measuredAndSlowest(records, total);
  if (measured.length === 0) return [`${title}: nothing measured.`];
  const ms = (v: number | undefined) => fmt(v, 0);
  const line = (step: Step, bold = false) => {
    const [all, tail]: Array<Stats | undefined> = [measured, slowest].map((rs) => stats(rs.map(gap(step))));
    const label = bold ? `**${step[0]}**` : step[0];
    return `| ${label} | ${all?.n ?? 0} | ${ms(all?.p50)} | ${ms(all?.p99)} | ${ms(all?.max)} | ${ms(tail?.mean)} | ${ms(tail?.max)} |`;
  };
  const lostLine = `Workflow tasks timed out or failed (and tried again): ${lostTasks(measured).length} over all ${measured.length} tasks, ${lostTasks(slowest).length} in the slowest ${slowest.length}.`;
  return [
    `${title} (ms; the slowest 1 %: the ${slowest.length} slowest of ${measured.length}, ${ms(gap(total)(slowest.at(-1)!))} ms and more):`,
    '',
    '| Step | n | p50 | p99 | max | slowest 1 %: mean | slowest 1 %: max |',
    '|---|---|---|---|---|---|---|',
    line(total, true),
    ...steps.map((step) => line(step)),
    '',
    lostLine,
  ];
}

/**
 * Why a latency broke its bounds, from its steps: how many of `records` it was never measured on
 * (their message or close never came), then for a p50 over its bound the step with the largest
 * median, for a p99 or max over theirs the step that took the slowest 1 % longest on average (with
 * the workflow tasks they lost). The first place to look, not a proof: steps overlap no time, but
 * one step can wait because of another.
 */
export function missReason(records: TaskRecord[], { total, steps }: Steps, over: readonly Bound[]): string | undefined {
  const { measured, slowest } = measuredAndSlowest(records, total);
  const reasons: string[] = [];
  const unmeasured = records.length - measured.length;
  if (unmeasured) reasons.push(`${unmeasured} of the ${records.length} never got there ("${total[0]}")`);
  const largest = (rs: TaskRecord[], of: (s: Stats) => number) =>
    steps
      .map((step) => ({ label: step[0], stats: stats(rs.map(gap(step))) }))
      .filter((s): s is { label: string; stats: Stats } => s.stats !== undefined)
      .sort((a, b) => of(b.stats) - of(a.stats))[0];
  const median = over.includes('p50') && largest(measured, (s) => s.p50);
  if (median) reasons.push(`at the median, the largest step is "${median.label}" (p50 ${fmtMs(median.stats.p50)})`);
  const tail = over.some((b) => b !== 'p50') && largest(slowest, (s) => s.mean);
  if (tail) {
    const whole = stats(slowest.map(gap(total)))!;
    const lost = lostTasks(slowest).length;
    const [who, mean] = slowest.length === 1 ? ['the slowest task', ''] : [`the slowest ${slowest.length}`, 'mean '];
    reasons.push(
      `${who} (${mean}${fmtMs(whole.mean)}) spent most in "${tail.label}" (${mean}${fmtMs(tail.stats.mean)})` +
        (lost ? `; they lost ${lost} workflow task(s) to a timeout or failure` : ''),
    );
  }
  return reasons.length ? `${reasons.join('; ')}.` : undefined;
}
