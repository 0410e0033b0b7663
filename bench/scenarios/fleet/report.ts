// The fleet section: what the limit did, as the emulator saw the sessions and the limiter its
// slots; its order (fairness, priority), its cost in actions and its ceiling.
import type { FleetSettings } from '../../config';
import type { LimiterCeiling } from '../../fleet-limiter';
import { fmt, fmtMs } from '../../format';
import { environmentLines } from '../../report/environment';
import {
  DISTRIBUTION_HEADER,
  distributionRow,
  missLines,
  quickBanner,
  targetTable,
  type TargetRow,
} from '../../report/markdown';
import type { RunOutcome } from '../../run';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import { stats } from '../../statistics';
import type { ActionCounts } from '../../temporal-actions';
import type { LimiterState } from '../../../src/contract/fleet-messages';
import { DEFAULTS } from '../../../src/contract/input';
import { GROUPS, type FleetPlan } from './plan';

export const FLEET_HEADING = '## Fleet limit: two workers, one limit, a kill and an outage';

export interface Session {
  createdAt: number;
  endedAt?: number;
  /** The first request about it after its end (a poll that could see the end). */
  endSeenAt?: number;
}

export interface HeldSample {
  at: number;
  held: number;
}

interface FleetInputs {
  context: ScenarioContext;
  settings: FleetSettings;
  plan: FleetPlan;
  firstStartAt: number;
  outcome: RunOutcome;
  sessions: { all: Session[]; byWorkflow: Map<string, Session> };
  emulatorPeak: number;
  samples: HeldSample[];
  limiterAtEnd?: LimiterState;
  faults: { kills: number[]; outage?: { from: number; to: number } };
  /** Per task, this run's and the baseline's (no limit). */
  actions: { perTask: ActionCounts; baseline: ActionCounts };
  ceiling?: LimiterCeiling;
  load: { before?: number; after?: number };
}

/** Sessions running at each change, in time order: the emulator's count at every instant. */
function runningSteps(sessions: Session[], now: number): { at: number; running: number }[] {
  const changes = sessions.flatMap((s) => [
    { at: s.createdAt, by: 1 },
    { at: s.endedAt ?? now, by: -1 },
  ]);
  // An end and a create at the same millisecond: the end first, as the emulator counts.
  changes.sort((a, b) => a.at - b.at || a.by - b.by);
  let running = 0;
  return changes.map((c) => ({ at: c.at, running: (running += c.by) }));
}

/** The mean of a step function over [from, to]. */
function meanOver(steps: { at: number; running: number }[], from: number, to: number): number {
  let area = 0;
  let level = 0;
  let last = from;
  for (const step of steps) {
    if (step.at > to) break;
    if (step.at > from) area += level * (step.at - last);
    if (step.at >= from) last = step.at;
    level = step.running;
  }
  return (area + level * (to - Math.max(last, from))) / (to - from);
}

/** Utilisation over the window minus the fault periods (a kill until its polls time out, an outage and its recovery). */
function steadyUtilisation(
  steps: { at: number; running: number }[],
  window: { from: number; to: number },
  faults: FleetInputs['faults'],
  limit: number,
): number | undefined {
  const cuts = [
    ...faults.kills.map((at) => [at, at + DEFAULTS.heartbeatTimeoutMs]),
    ...(faults.outage ? [[faults.outage.from, faults.outage.to + 30_000]] : []),
  ].sort((a, b) => a[0]! - b[0]!);
  let from = window.from;
  let area = 0;
  let length = 0;
  for (const [cutFrom, cutTo] of [...cuts, [window.to, window.to]]) {
    const to = Math.min(cutFrom!, window.to);
    if (to > from) {
      area += meanOver(steps, from, to) * (to - from);
      length += to - from;
    }
    from = Math.max(from, cutTo!);
  }
  return length > 0 ? area / length / limit : undefined;
}

export function renderFleet(inputs: FleetInputs): ScenarioReport {
  const { settings, plan, sessions, faults } = inputs;
  const { limit, durationMs } = settings;
  const now = Date.now();
  const records = plan.records;
  const waitOf = (id: string, startedAt?: number) => {
    const created = sessions.byWorkflow.get(id)?.createdAt;
    return created !== undefined && startedAt !== undefined ? created - startedAt : undefined;
  };
  const waits = (group: string) =>
    records.filter((r) => r.plan.group === group).map((r) => waitOf(r.plan.workflowId, r.startCalledAt));
  const steps = runningSteps(sessions.all, now);
  const peak = Math.max(0, ...steps.map((s) => s.running));
  // Work waits from the first moment the limit is reached until the last session is created.
  const busyFrom = steps.find((s) => s.running >= limit)?.at;
  const lastCreate = Math.max(...[...sessions.byWorkflow.values()].map((s) => s.createdAt));
  const window = busyFrom !== undefined && lastCreate > busyFrom ? { from: busyFrom, to: lastCreate } : undefined;
  const utilisation = window ? meanOver(steps, window.from, window.to) / limit : undefined;
  const inWindow = inputs.samples.filter((s) => window && s.at >= window.from && s.at <= window.to);
  const heldMean = inWindow.length ? inWindow.reduce((a, s) => a + s.held, 0) / inWindow.length / limit : undefined;

  // Fairness: the late project's share is 1/k of the grants (k keys in line at priority 3 when it came).
  const lateAt = inputs.firstStartAt + plan.lateAtMs;
  const inLineAt = (r: (typeof records)[number]) =>
    (r.startCalledAt ?? Infinity) < lateAt && (sessions.byWorkflow.get(r.plan.workflowId)?.createdAt ?? 0) > lateAt;
  const keys =
    1 + new Set(records.filter((r) => r.plan.group.startsWith('batch') && inLineAt(r)).map((r) => r.plan.group)).size;
  const ahead = records.filter(inLineAt).length;
  const lateWaits = stats(waits('late'));
  const lateCount = records.filter((r) => r.plan.group === 'late').length;
  const fairP50 = stats(Array.from({ length: lateCount }, (_, i) => ((i + 1) * keys * durationMs) / limit))!.p50;
  const interactiveWaits = stats(waits('interactive'));

  const { perTask, baseline } = inputs.actions;
  const added = perTask.total - baseline.total;
  // Where the slot time went: lost slot-time per create while work waited, and the part of it
  // before a poll could see the session's end.
  const creates = window ? sessions.all.filter((s) => s.createdAt > window.from && s.createdAt <= window.to).length : 0;
  const lostPerCreate =
    window && utilisation !== undefined ? ((1 - utilisation) * limit * (window.to - window.from)) / creates : undefined;
  const steady = window ? steadyUtilisation(steps, window, faults, limit) : undefined;
  const seenAfter = stats(sessions.all.map((s) => (s.endSeenAt && s.endedAt ? s.endSeenAt - s.endedAt : undefined)));
  const need = limit / (durationMs / 1000);
  const end = inputs.limiterAtEnd;
  const rows: TargetRow[] = [
    {
      measure: `Most sessions running at once, as the emulator saw them (sweep of every session's create and end; its own peak counter)`,
      target: `≤ ${limit}`,
      measured: `${peak} (counter ${inputs.emulatorPeak})`,
      met: peak <= limit && inputs.emulatorPeak <= limit,
    },
    {
      measure:
        'Utilisation while work waits: mean sessions running ÷ limit, from the limit first reached to the last create',
      target: '≥ 90 %',
      measured:
        utilisation === undefined
          ? 'n/a'
          : `${fmt(utilisation * 100)} % over ${fmtMs(window!.to - window!.from)} (slots held by the limiter: ${fmt((heldMean ?? NaN) * 100)} %)`,
      met: utilisation === undefined ? false : utilisation >= 0.9,
    },
    {
      measure: 'Slots held at the end (the limiter’s state)',
      target: '0',
      measured: end
        ? `${end.held} held, ${end.waiting} waiting (granted ${end.granted}, released ${end.released}, reclaimed ${end.reclaimed})`
        : 'n/a',
      met: end ? end.held === 0 && end.waiting === 0 : false,
    },
    {
      measure: `Fairness: ${lateCount} items of a project started after ${fmtMs(plan.lateAtMs)}, ${ahead} items of ${keys - 1} batch(es) in line: p50 wait for a slot`,
      target: `≤ 2 × fair share (${fmtMs(fairP50)}) = ${fmtMs(2 * fairP50)}`,
      measured: `p50 ${fmtMs(lateWaits?.p50)}, max ${fmtMs(lateWaits?.max)} (first in, first out would be ≈ ${fmtMs((ahead * durationMs) / limit)})`,
      met: lateWaits ? lateWaits.p50 <= 2 * fairP50 : false,
    },
    {
      measure: `Priority: interactive priority-1 tasks started one by one mid-batch: p50 wait for a slot`,
      target: `≤ one task's length (${fmtMs(durationMs)})`,
      measured: `p50 ${fmtMs(interactiveWaits?.p50)}, max ${fmtMs(interactiveWaits?.max)}`,
      met: interactiveWaits ? interactiveWaits.p50 <= durationMs : false,
    },
    {
      measure: 'Temporal actions per task added by the limiter (this run − a run without a limit, same task length)',
      target: '—',
      measured: `${fmt(added, 2)} (${fmt(perTask.total, 2)} − ${fmt(baseline.total, 2)}), the kill's and outage's retries included`,
      met: undefined,
    },
    {
      measure: `The limiter's ceiling: acquire+release pairs per second, ${inputs.ceiling?.callers ?? 0} callers, nobody waiting`,
      target: `≥ this run's need: limit ÷ task length = ${fmt(need)}/s`,
      measured: inputs.ceiling
        ? `${fmt(inputs.ceiling.pairsPerSecond)}/s (pair p50 ${fmtMs(inputs.ceiling.pairP50Ms)}, p99 ${fmtMs(inputs.ceiling.pairP99Ms)}): keeps ≈ ${Math.floor(inputs.ceiling.pairsPerSecond * (durationMs / 1000))} busy with tasks this long`
        : 'not measured',
      met: inputs.ceiling ? inputs.ceiling.pairsPerSecond >= need : undefined,
    },
  ];
  const byType = Object.entries(perTask.byType)
    .map(([type, n]): [string, number] => [type, n - (baseline.byType[type] ?? 0)])
    .filter(([, n]) => Math.abs(n) >= 0.005)
    .sort((a, b) => b[1] - a[1])
    .map(([type, n]) => `${type.replace(/^(grpc|command)_/, '')} ${n > 0 ? '+' : ''}${fmt(n, 2)}`)
    .join(', ');
  const at = (t: number) => fmtMs(t - inputs.firstStartAt);
  const lines = [
    FLEET_HEADING,
    '',
    ...quickBanner(inputs.context.config.quick),
    ...environmentLines(inputs.context.env, inputs.load),
    `- **Setup:** two worker processes at their defaults with \`BROWSERAI_FLEET_LIMIT=${limit}\` (one limiter workflow, holder check every 60 s) on one task queue; emulator queued ${QUEUE_MS} ms. ${records.length} tasks of ${fmtMs(durationMs)}: ${GROUPS.map((g) => `${records.filter((r) => r.plan.group === g).length} ${g}`).join(', ')}; each group its own project (the fairness key). The batches start together (50 a second each), the late project's items together at ${fmtMs(plan.lateAtMs)}, the interactive ones (priority 1, the rest 3) one by one over ${fmtMs(durationMs)} from ${fmtMs(plan.idealMs * 0.4)}. At the limit with no gap they would take ${fmtMs(plan.idealMs)}.`,
    `- **Faults:** ${faults.kills.length ? `SIGKILL of a worker at ${faults.kills.map(at).join(', ')} (a new one started at once)` : 'no kill'}; ${faults.outage ? `dev server paused (SIGSTOP) from ${at(faults.outage.from)} for ${fmtMs(faults.outage.to - faults.outage.from)}` : 'no outage'}. Run: ${fmtMs(inputs.outcome.endedAt - inputs.firstStartAt)}${inputs.outcome.deadlineHit ? ' (**deadline hit**)' : ''}; ${sessions.byWorkflow.size} of ${records.length} tasks finished with their session found.`,
    `- **Wait for a slot** of a task: its session's create at the emulator − the bench's start call (so it includes the start and the create's round trips). **Fair share** of the late project: with k keys in line at priority 3 (k = ${keys}: the batches still waiting and itself) it gets every k-th grant, and grants come at limit ÷ task length a second, so its i-th item's fair wait is i × k × task length ÷ limit; the target compares the p50s.`,
    '',
    ...targetTable(rows),
    '',
    ...missLines(rows),
    '',
    ...DISTRIBUTION_HEADER,
    ...GROUPS.map((g) => distributionRow(`Wait for a slot, ${g} (ms)`, stats(waits(g)), (v) => fmt(v, 0))),
    '',
    distributionRow('Session end → first request about it (a poll that can see the end) (ms)', seenAfter, (v) =>
      fmt(v, 0),
    ),
    '',
    `**Where the slot time goes** while work waits: ${fmtMs(lostPerCreate)} of slot time is lost per session created (limit × window × (1 − utilisation) ÷ creates); of it, a poll sees the end after p50 ${fmtMs(seenAfter?.p50)} (mean ${fmtMs(seenAfter?.mean)}); the rest is the workflow closing its session, the release signal, the grant signal and the next task's create. Outside the faults (the kill and the ${fmtMs(DEFAULTS.heartbeatTimeoutMs)} heartbeat timeout after it, the outage and 30 s after it) utilisation is ${fmt((steady ?? NaN) * 100)} %.`,
    '',
    `Actions per task, this run − the run without a limit, by type: ${byType || 'none'}. The ceiling's limiter: ${inputs.ceiling?.historyEvents ?? 'n/a'} history events.`,
  ];
  return {
    heading: FLEET_HEADING,
    markdown: lines.join('\n'),
    rows,
    raw: { faults, samples: inputs.samples, limiterAtEnd: end, ceiling: inputs.ceiling, actions: inputs.actions },
  };
}
