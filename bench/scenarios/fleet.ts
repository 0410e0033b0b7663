// The fleet scenario (docs/fleet.md): two workers share one BROWSERAI_FLEET_LIMIT while two tenants'
// batches, a late project and interactive priority-1 tasks run, through a SIGKILL and an outage; then
// the limiter's cost, its ceiling and a CLI batch. How each figure is computed: docs/benchmarks-method.md.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { mapLimit, sleep } from '../../dev/async';
import { FleetLimit } from '../../src/activities/fleet';
import { limiterStateQuery, releaseSlotSignal, type LimiterState } from '../../src/contract/fleet-messages';
import { DEFAULTS } from '../../src/contract/input';
import type { ScenarioSettings } from '../config';
import { fmt, fmtMs, log } from '../format';
import { PROJECT, taskInput } from '../plan';
import { distributions, row } from '../report/markdown';
import { runTasks } from '../run';
import { scenario } from '../scenario';
import { runTargetOf, type BenchStack } from '../stack';
import { between, mean, stats, sum } from '../statistics';
import { meanOver, openSteps, type Steps } from '../time-series';
import type { TaskRecord } from '../task';
import { countActions, type ActionCounts } from '../temporal-actions';
import { cliBatchReport, runCliBatch } from './fleet-batch';
import { buildWorkflowBundle } from './scale';

const GROUPS = ['batch-a', 'batch-b', 'late', 'interactive'] as const;
const TASK_QUEUE = 'bench-fleet';
/** An acquire the bench never cancels. */
const NEVER = new AbortController().signal;
const ACCOUNT = 'bench-fleet';
const COST_LIMITS = [undefined, 100, 2] as const;
/** Batch starts, spaced so the dev server takes them in stride (about 100 a second here). */
const START_SPACING_MS = 20;
type Span = { from: number; to: number };
type Faults = { kills: number[]; outage?: Span };

function planFleet(stack: BenchStack, { tasks, durationMs, limit, kills }: ScenarioSettings<'fleet'>) {
  const idealMs = Math.ceil(tasks / limit) * durationMs;
  const [small, batchA] = [Math.max(3, Math.round(tasks * 0.025)), Math.round(tasks * 0.75)];
  const count = { 'batch-a': batchA, 'batch-b': tasks - batchA - 2 * small, late: small, interactive: small };
  const lateAtMs = Math.round(idealMs * 0.2);
  const startAt = (group: (typeof GROUPS)[number], i: number) =>
    group === 'late'
      ? lateAtMs
      : group === 'interactive' // one at a time over one task's length, mid-batch
        ? Math.round(idealMs * 0.4 + (i * durationMs) / count.interactive)
        : i * START_SPACING_MS;
  const records = GROUPS.flatMap((group) =>
    Array.from({ length: count[group] }, (_, i) => fleetTask(stack, group, i, durationMs, startAt(group, i))),
  );
  const killAtMs = Array.from({ length: kills }, (_, k) => Math.round(idealMs * (0.3 + (0.1 * k) / kills)));
  const outageAtMs = Math.max(Math.round(idealMs * 0.55), ...records.map((r) => r.plan.startAtMs + 5_000));
  return { records, count, idealMs, lateAtMs, killAtMs, outageAtMs, baselineTasks: Math.ceil(tasks / 100) };
}

/** Task `i` of `group`, in a project of its own (the fairness key); the interactive ones at priority 1. */
function fleetTask(stack: BenchStack, group: string, i: number, durationMs: number, startAtMs = 0): TaskRecord {
  const input = taskInput(stack, { text: `Fleet ${group}: read a price list`, durationMs, project: `fleet-${group}` });
  const plan = { workflowId: `bench-fleet-${group}-${i}`, group, input, startAtMs, durationMs };
  return { plan: group === 'interactive' ? { ...plan, input: { ...input, priority: 1 } } : plan };
}

export const measureFleet = scenario({
  heading: '## Fleet limit: two workers, one limit, a kill and an outage',
  plan: (stack, { config }) => planFleet(stack, config.fleet),
  async measure(stack, plan, { config: { fleet: settings } }) {
    const bundle = { WORKER_WORKFLOW_BUNDLE: buildWorkflowBundle() };
    const limited = { ...bundle, BROWSERAI_FLEET_LIMIT: String(settings.limit), BROWSERAI_FLEET_ACCOUNT: ACCOUNT };
    // The limit's cost on one-second tasks: without one, under one nobody reaches, under 2 (the others wait).
    const costs = [];
    for (const limit of COST_LIMITS) {
      const env = limit ? { BROWSERAI_FLEET_LIMIT: String(limit), BROWSERAI_FLEET_ACCOUNT: randomUUID() } : undefined;
      const name = `limit-${limit ?? 'none'}`;
      costs.push({ limit, ...(await actionsPerTask(stack, env, 1_000, settings.costTasks, name)) });
    }
    // This run's baseline: tasks as long as its own, without a limit.
    const noLimit = await actionsPerTask(stack, bundle, settings.durationMs, plan.baselineTasks, 'baseline');
    const startWorker = () => stack.startWorker('default', TASK_QUEUE, limited);
    const workers = [await startWorker(), await startWorker()];
    log(`fleet: ${plan.records.length} tasks at limit ${settings.limit} on 2 workers (ideal ${fmtMs(plan.idealMs)})`);
    stack.emulator.resetPeakRunning();
    const limiter = stack.temporal.client.workflow.getHandle(`browserai-fleet-limiter-${ACCOUNT}`);
    const limiterState = () => limiter.query(limiterStateQuery).catch(() => undefined);
    const samples: { at: number; held: number }[] = [];
    const faults: Faults = { kills: [] };
    const { result: run, actions: spent } = await countActions(stack.metricsUrl, 'default', async () => {
      const firstStartAt = Date.now();
      const sample = () => void limiterState().then((s) => s && samples.push({ at: Date.now(), held: s.held }));
      const sampling = setInterval(sample, 2_000);
      const causingFaults = (async () => {
        for (const at of plan.killAtMs) {
          await sleep(firstStartAt + at - Date.now());
          // Never the first worker: the run watches it to tell a crashed bench from a planned kill.
          workers.splice(1, 1)[0]!.kill();
          faults.kills.push(Date.now());
          log('fleet: SIGKILL to a worker; a new one replaces it');
          workers.push(await startWorker());
        }
        if (settings.outageMs <= 0) return;
        await sleep(firstStartAt + plan.outageAtMs - Date.now());
        faults.outage = { from: Date.now(), to: await stack.pauseTemporal(settings.outageMs, 'fleet') };
      })();
      const deadlineAt = firstStartAt + plan.idealMs * 2 + settings.outageMs + 10 * 60_000;
      const target = runTargetOf(stack, workers[0]!, TASK_QUEUE, 'fleet-batch-a');
      const outcome = await runTasks(plan.records, target, { deadlineAt, label: 'fleet', firstStartAt });
      clearInterval(sampling);
      await causingFaults;
      return { firstStartAt, outcome, limiterAtEnd: await settledLimiter(limiterState) };
    });
    log('fleet: reading each task’s BrowserAI session');
    const sessions = await sessionsOf(stack, plan.records);
    const emulatorPeak = stack.emulator.peakRunning();
    const ceiling = await measureCeiling(stack.temporal.client, settings.ceilingMs, settings.callers);
    const batch = settings.batchItems > 0 ? await runCliBatch(stack, settings, TASK_QUEUE) : undefined;
    const batchEnd = batch && (await settledLimiter(limiterState));
    const actions = { noLimit, run: perTask(spent, plan.records.length), costs };
    return { plan, ...run, sessions, emulatorPeak, samples, faults, actions, ceiling, batch, batchEnd };
  },
  report(m, _stack, { config: { fleet: settings } }) {
    const { limit, durationMs, costTasks, callers, ceilingMs } = settings;
    const { records, count, lateAtMs, idealMs, baselineTasks } = m.plan;
    const { sessions, faults, actions, ceiling, limiterAtEnd: end } = m;
    const createdOf = (r: TaskRecord) => sessions.createdAt.get(r.plan.workflowId);
    const ofGroup = (group: string) => records.filter((r) => r.plan.group === group);
    const waits = (group: string) => between(ofGroup(group), (r) => r.startCalledAt, createdOf);
    const steps = openSteps(sessions.all.map((s) => [s.createdAt, s.endedAt ?? Date.now()] as const));
    const peak = Math.max(0, ...steps.map((s) => s.open));
    // Work waits from the first moment the limit is reached until the last session is created.
    const busyFrom = steps.find((s) => s.open >= limit)?.at ?? Infinity;
    const lastCreate = Math.max(...sessions.createdAt.values());
    const window = lastCreate > busyFrom ? { from: busyFrom, to: lastCreate } : undefined;
    const utilisation = window && meanOver(steps, window.from, window.to) / limit;
    const held = m.samples.filter((s) => window && s.at >= window.from && s.at <= window.to).map((s) => s.held);
    // Fairness: the late project gets every k-th grant (k keys in line at priority 3 when it came).
    const lateAt = m.firstStartAt + lateAtMs;
    const inLine = records.filter((r) => (r.startCalledAt ?? Infinity) < lateAt && (createdOf(r) ?? 0) > lateAt);
    const keys = 1 + new Set(inLine.filter((r) => r.plan.group.startsWith('batch')).map((r) => r.plan.group)).size;
    const fairP50 = stats(Array.from({ length: count.late }, (_, i) => ((i + 1) * keys * durationMs) / limit))!.p50;
    const [late, interactive] = [waits('late'), waits('interactive')];
    const creates = sessions.all.filter((s) => window && s.createdAt > window.from && s.createdAt <= window.to);
    const lostPerCreate = window && ((1 - utilisation!) * limit * (window.to - window.from)) / creates.length;
    const seenAfter = stats(sessions.all.map((s) => (s.endSeenAt && s.endedAt ? s.endSeenAt - s.endedAt : undefined)));
    const need = limit / (durationMs / 1000);
    const at = (t: number) => fmtMs(t - m.firstStartAt);
    const cliBatch = m.batch && cliBatchReport(m.batch, limit, m.batchEnd);
    const byType = (a: ActionCounts, b?: ActionCounts) =>
      Object.entries(a.byType)
        .map(([type, n]) => [type.replace(/^(grpc|command)_/, ''), n - (b?.byType[type] ?? 0)] as const)
        .filter(([, n]) => Math.abs(n) >= 0.005)
        .sort((x, y) => y[1] - x[1])
        .map(([type, n]) => `${type} ${b && n > 0 ? '+' : ''}${fmt(n, 2)}`)
        .join(', ');
    return {
      // prettier-ignore
      rows: [
        row("Most sessions running at once, as the emulator saw them (every session's create and end; its own peak counter)", `≤ ${limit}`, `${peak} (counter ${m.emulatorPeak})`, peak <= limit && m.emulatorPeak <= limit),
        row('Utilisation while work waits: mean sessions running ÷ limit, from the limit first reached to the last create', '≥ 90 %',
          window ? `${fmt(utilisation! * 100)} % over ${fmtMs(window.to - window.from)} (slots held by the limiter: ${fmt(((mean(held) ?? NaN) * 100) / limit)} %)` : 'n/a', (utilisation ?? 0) >= 0.9),
        row('Slots held at the end (the limiter’s state)', '0', end ? `${end.held} held, ${end.waiting} waiting (granted ${end.granted}, released ${end.released}, reclaimed ${end.reclaimed})` : 'n/a', end?.held === 0 && end.waiting === 0),
        row(`Fairness: ${count.late} items of a project started after ${fmtMs(lateAtMs)}, ${inLine.length} items of ${keys - 1} batch(es) in line: p50 wait for a slot`, `≤ 2 × fair share (${fmtMs(fairP50)}) = ${fmtMs(2 * fairP50)}`,
          `p50 ${fmtMs(late?.p50)}, max ${fmtMs(late?.max)} (first in, first out would be ≈ ${fmtMs((inLine.length * durationMs) / limit)})`, late ? late.p50 <= 2 * fairP50 : false),
        row('Priority: interactive priority-1 tasks started one by one mid-batch: p50 wait for a slot', `≤ one task's length (${fmtMs(durationMs)})`, `p50 ${fmtMs(interactive?.p50)}, max ${fmtMs(interactive?.max)}`, interactive ? interactive.p50 <= durationMs : false),
        ...actions.costs.map((c) => row(`Temporal actions per one-second task, ${c.limit === undefined ? 'no limit' : `limit ${c.limit}`} (${costTasks} tasks)`, '—', `${fmt(c.total, 2)} (${byType(c)})`)),
        row('Temporal actions per task added by the limiter in this run (this run − no limit; tasks wait, the kill and the outage included)', '—', `${fmt(actions.run.total - actions.noLimit.total, 2)} (${fmt(actions.run.total, 2)} − ${fmt(actions.noLimit.total, 2)}: ${byType(actions.run, actions.noLimit) || 'none'})`),
        row(`The limiter's ceiling: acquire+release pairs per second, ${callers} callers for ${fmtMs(ceilingMs)}, nobody waiting`, `≥ this run's need: limit ÷ task length = ${fmt(need)}/s`,
          `${fmt(ceiling.pairsPerSecond)}/s (pair p50 ${fmtMs(ceiling.latencies?.p50)}, p99 ${fmtMs(ceiling.latencies?.p99)}): keeps ≈ ${Math.floor(ceiling.pairsPerSecond * (durationMs / 1000))} busy with tasks this long`, ceiling.pairsPerSecond >= need),
        ...(cliBatch?.rows ?? []),
      ],
      // prettier-ignore
      setup: [
        `- **Tasks:** two worker processes at their defaults with \`BROWSERAI_FLEET_LIMIT=${limit}\` (one limiter workflow) on one task queue. ${records.length} tasks of ${fmtMs(durationMs)}: ${GROUPS.map((g) => `${count[g]} ${g}`).join(', ')}; each group its own project (the fairness key). The batches start together, the late items at ${fmtMs(lateAtMs)}, the interactive ones (priority 1, the rest 3) one by one over ${fmtMs(durationMs)} from ${fmtMs(idealMs * 0.4)}. At the limit with no gap they would take ${fmtMs(idealMs)}. How each figure is computed: [docs/benchmarks-method.md](docs/benchmarks-method.md#fleet).`,
        `- **Faults:** ${faults.kills.length ? `SIGKILL of a worker at ${faults.kills.map(at).join(', ')} (a new one started at once)` : 'no kill'}; ${faults.outage ? `dev server paused from ${at(faults.outage.from)} for ${fmtMs(faults.outage.to - faults.outage.from)}` : 'no outage'}. Run: ${fmtMs(m.outcome.endedAt - m.firstStartAt)}${m.outcome.deadlineHit ? ' (**deadline hit**)' : ''}; ${sessions.createdAt.size} of ${records.length} tasks finished with their session found.`,
        ...(cliBatch ? [cliBatch.setup] : []),
        `- **Cost and ceiling:** before the run, ${costTasks} one-second tasks started at once on a worker without a limit, under ${COST_LIMITS[1]} and under ${COST_LIMITS[2]}, and ${baselineTasks} of ${fmtMs(durationMs)} without a limit (this run's baseline); the ceiling on the run's workers after it (at the end its limiter held ${ceiling.state.held}, granted ${ceiling.state.granted}, released ${ceiling.state.released}; history ${ceiling.historyLength} events).`,
      ],
      details: [
        ...distributions([
          ...GROUPS.map((g) => [`Wait for a slot, ${g} (ms)`, waits(g), (v: number) => fmt(v, 0)] as const),
          ['Session end → first request about it (ms)', seenAfter, (v: number) => fmt(v, 0)],
        ]),
        '',
        `**Where the slot time goes** while work waits: ${fmtMs(lostPerCreate)} of slot time lost per session created; a poll sees the end after p50 ${fmtMs(seenAfter?.p50)} (mean ${fmtMs(seenAfter?.mean)}). Outside the faults utilisation is ${fmt((window ? steadyUtilisation(steps, window, faults) / limit : NaN) * 100)} %.`,
      ],
      raw: { faults, samples: m.samples, limiterAtEnd: end, ceiling, actions, batch: m.batch },
    };
  },
});

/** Actions per task of `count` tasks on a worker of their own (`extra` its environment). */
// prettier-ignore
async function actionsPerTask(stack: BenchStack, extra: Record<string, string> | undefined, durationMs: number, count: number, name: string) {
  const taskQueue = `bench-fleet-cost-${name}`;
  const worker = await stack.startWorker('default', taskQueue, extra);
  const records = Array.from({ length: count }, (_, i) => fleetTask(stack, `cost-${name}`, i, durationMs));
  const target = runTargetOf(stack, worker, taskQueue, `fleet-cost-${name}`);
  const options = { deadlineAt: Date.now() + durationMs + 5 * 60_000, label: `fleet ${name}` };
  const { actions } = await countActions(stack.metricsUrl, 'default', () => runTasks(records, target, options));
  await worker.stop();
  return perTask(actions, count);
}

/** Per task, without the bench's own queries of the limiter. */
function perTask(spent: ActionCounts, tasks: number): ActionCounts {
  const kept = Object.entries(spent.byType).filter(([type]) => !/Query/.test(type));
  const byType = Object.fromEntries(kept.map(([type, n]) => [type, n / tasks]));
  return { byType, total: sum(Object.values(byType)) };
}

/** Acquire + release pairs per second through a new limiter (its own account), run by the fleet's workers. */
async function measureCeiling(client: Client, durationMs: number, callers: number) {
  const account = `ceiling-${randomUUID()}`;
  const fleet = new FleetLimit({ maxRunning: 100_000, checkIntervalMs: 3_600_000, account }, '');
  const place = { priority: 3, fairnessKey: 'bench', fairnessWeight: 1, project: PROJECT, runId: 'r' };
  // Refused while the limiter continues as new: retried, as a create's activity would.
  const acquire = (holderId: string, attempt = 1): Promise<unknown> =>
    fleet
      .acquire(client, { request: { ...place, holderId, workflowId: holderId } }, Date.now() + 60_000, NEVER)
      .catch(async (err: unknown) => {
        if (attempt >= 5) throw err;
        await sleep(200 * attempt);
        return acquire(holderId, attempt + 1);
      });
  const limiter = client.workflow.getHandle(fleet.limiterId);
  const pair = (holderId: string = randomUUID()) =>
    acquire(holderId).then(() => limiter.signal(releaseSlotSignal, { holderId }));
  // The first pair starts the limiter; the clock starts after it.
  await pair('warm-up');
  log(`fleet: ${callers} callers acquire and release for ${durationMs / 1000} s`);
  const latencies: number[] = [];
  const startedAt = Date.now();
  const caller = async () => {
    while (Date.now() < startedAt + durationMs) {
      const pairStartedAt = Date.now();
      await pair();
      latencies.push(Date.now() - pairStartedAt);
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
  const pairsPerSecond = latencies.length / ((Date.now() - startedAt) / 1000);
  const [state, { historyLength }] = await Promise.all([limiter.query(limiterStateQuery), limiter.describe()]);
  await limiter.terminate('ceiling measured');
  return { pairsPerSecond, latencies: stats(latencies), state, historyLength };
}

/** The limiter once its last releases have landed (at most 30 s after the last close). */
async function settledLimiter(limiterState: () => Promise<LimiterState | undefined>) {
  let state: LimiterState | undefined;
  for (const until = Date.now() + 30_000; Date.now() < until; await sleep(500)) {
    state = (await limiterState()) ?? state;
    if (state?.held === 0 && state.waiting === 0) break;
  }
  return state;
}

/** Every session of the run as the emulator recorded it (a create whose answer was lost too), and each workflow's create. */
async function sessionsOf(stack: BenchStack, records: TaskRecord[]) {
  const tasks = stack.emulator.listTasks().filter((t) => GROUPS.some((g) => t.project === `fleet-${g}`));
  const sessions = new Map<string, { createdAt: number; endedAt: number | null; endSeenAt?: number }>();
  for (const t of tasks) sessions.set(t.executionId, { createdAt: Date.parse(t.createdAt), endedAt: t.endedAt });
  // When a poll first asked about each session after its end: the moment the end could be seen.
  for (const { path, at } of stack.emulator.requests) {
    const session = sessions.get(/^\/tasks\/([^/]+)/.exec(path)?.[1] ?? '');
    if (session && at >= (session.endedAt ?? Infinity)) session.endSeenAt ??= at;
  }
  const createdAt = new Map<string, number>();
  await mapLimit(records, 16, async ({ plan: { workflowId } }) => {
    const handle = stack.temporal.client.workflow.getHandle(workflowId);
    const session = sessions.get((await handle.result().catch(() => undefined))?.executionId ?? '');
    if (session) createdAt.set(workflowId, session.createdAt);
  });
  return { all: [...sessions.values()], createdAt };
}

/** Mean sessions running over the window minus the faults (a kill until its polls time out, an outage and 30 s after it). */
function steadyUtilisation(steps: Steps, window: Span, faults: Faults) {
  const outage = faults.outage ? [[faults.outage.from, faults.outage.to + 30_000] as const] : [];
  // In time order, as they happened: the kills come before the outage.
  const cuts = [...faults.kills.map((at) => [at, at + DEFAULTS.heartbeatTimeoutMs] as const), ...outage];
  let [from, area, length] = [window.from, 0, 0];
  for (const [cutFrom, cutTo] of [...cuts, [window.to, window.to] as const]) {
    const to = Math.min(cutFrom, window.to);
    if (to > from) [area, length] = [area + meanOver(steps, from, to) * (to - from), length + to - from];
    from = Math.max(from, cutTo);
  }
  return area / length;
}
