// The line scenario (docs/fleet.md, docs/design/fleet-limit.md): 10,000 tasks started directly with
// `tasks.start` (not a batch) under one fleet limit on two worker processes, so the limiter holds a
// line of thousands while it grants. It measures what a backlog of that size asks of the limiter: the
// limit held at every instant, every task completed, the limiter's workflow tasks (scheduled ->
// started, started -> completed, any that failed), how long each of its runs takes to replay, the
// slots' utilisation while work waits, the actions per task and the wall time.
import { readFileSync } from 'node:fs';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { mapLimit } from '../../dev/async';
import { limiterStateQuery } from '../../src/contract/fleet-messages';
import type { ScenarioSettings } from '../config';
import { fmt, fmtMs, log } from '../format';
import { taskInput } from '../plan';
import { distributions, row } from '../report/markdown';
import { runTasks } from '../run';
import { scenario } from '../scenario';
import { runTargetOf, type BenchStack } from '../stack';
import { stats } from '../statistics';
import { countActions } from '../temporal-actions';
import { meanOver, openSteps } from '../time-series';
import type { TaskRecord } from '../task';
import { buildWorkflowBundle } from './scale';

const TASK_QUEUE = 'bench-line';
const PROJECT = 'fleet-line';
const ACCOUNT = 'bench-line';
const LIMITER_ID = `browserai-fleet-limiter-${ACCOUNT}`;

function planLine(stack: BenchStack, { tasks, durationMs, limit }: ScenarioSettings<'line'>) {
  const records: TaskRecord[] = Array.from({ length: tasks }, (_, i) => {
    const input = taskInput(stack, { text: 'Fleet line: read a price list', durationMs, project: PROJECT });
    return { plan: { workflowId: `bench-line-${i}`, group: 'line', input, startAtMs: 0, durationMs } };
  });
  return { records, idealMs: Math.ceil(tasks / limit) * durationMs };
}

export const measureLine = scenario({
  heading: '## Fleet line: 10,000 tasks started at once under one limit',
  plan: (stack, { config }) => planLine(stack, config.line),
  async measure(stack, plan, { config: { line: settings } }) {
    const bundlePath = buildWorkflowBundle();
    const env = {
      WORKER_WORKFLOW_BUNDLE: bundlePath,
      BROWSERAI_FLEET_LIMIT: String(settings.limit),
      BROWSERAI_FLEET_ACCOUNT: ACCOUNT,
    };
    const workers = [
      await stack.startWorker('default', TASK_QUEUE, env),
      await stack.startWorker('default', TASK_QUEUE, env),
    ];
    log(`line: ${plan.records.length} tasks at limit ${settings.limit} on 2 workers (ideal ${fmtMs(plan.idealMs)})`);
    stack.emulator.resetPeakRunning();
    const target = runTargetOf(stack, workers[0]!, TASK_QUEUE, PROJECT);
    const firstStartAt = Date.now();
    const deadlineAt = firstStartAt + plan.idealMs * 2 + 20 * 60_000;
    const { result: outcome, actions } = await countActions(stack.metricsUrl, 'default', () =>
      // Started as a service would start them: 200 calls at a time, as fast as the server takes them.
      runTasks(plan.records, target, { deadlineAt, label: 'line', firstStartAt, batch: 200 }),
    );
    const limiter = stack.temporal.client.workflow.getHandle(LIMITER_ID);
    const end = await limiter.query(limiterStateQuery).catch(() => undefined);
    log('line: reading the sessions and the limiter’s runs');
    const sessions = stack.emulator
      .listTasks()
      .filter((t) => t.project === PROJECT)
      .map((t) => [Date.parse(t.createdAt), t.endedAt ?? Date.now()] as const);
    const completed = await countCompleted(stack, plan.records);
    const runs = await limiterRuns(stack);
    const replayMs = await replayTimes(bundlePath, runs);
    return { plan, outcome, firstStartAt, actions, end, sessions, completed, runs, replayMs };
  },
  report(m, _stack, { config: { line: settings } }) {
    const { limit, durationMs } = settings;
    const steps = openSteps(m.sessions);
    const peak = Math.max(0, ...steps.map((s) => s.open));
    const busyFrom = steps.find((s) => s.open >= limit)?.at ?? Infinity;
    const lastCreate = Math.max(...m.sessions.map(([from]) => from));
    const window = lastCreate > busyFrom ? { from: busyFrom, to: lastCreate } : undefined;
    const utilisation = window && meanOver(steps, window.from, window.to) / limit;
    const tasks = m.runs.flatMap((run) => run.tasks);
    const latency = stats(tasks.map((t) => t.latencyMs));
    const processing = stats(tasks.map((t) => t.durationMs));
    const failed = m.runs.reduce((n, run) => n + run.causes.length, 0);
    const why = lineReasons(m.runs, m.sessions, window, limit);
    const longestReplay = Math.max(0, ...m.replayMs);
    const total = m.plan.records.length;
    const wallMs = m.outcome.endedAt - m.firstStartAt;
    const perTask = m.actions.total / total;
    // prettier-ignore
    return {
      rows: [
        row('Most sessions running at once, as the emulator saw them (every create and end; its own peak counter)', `≤ ${limit}`, `${peak}`, peak <= limit),
        row('Tasks completed', `${total}`, `${m.completed}`, m.completed === total),
        row("The limiter's workflow tasks, scheduled → started", 'p99 ≤ 1 s', `p50 ${fmtMs(latency?.p50)}, p99 ${fmtMs(latency?.p99)}, max ${fmtMs(latency?.max)} (${latency?.n ?? 0} tasks)`, (latency?.p99 ?? Infinity) <= 1_000),
        row("The limiter's workflow tasks, started → completed", '≤ 1 s each', `p50 ${fmtMs(processing?.p50)}, p99 ${fmtMs(processing?.p99)}, max ${fmtMs(processing?.max)}`, (processing?.max ?? Infinity) <= 1_000, why.slowest),
        row("The limiter's workflow tasks failed or timed out", '0', `${failed}`, failed === 0, why.failed),
        row("Replay of the limiter's longest run (every run replayed in this process)", '≤ 5 s', `${fmtMs(longestReplay)} (${m.runs.length} runs, the longest ${Math.max(0, ...m.runs.map((r) => r.events))} events)`, longestReplay <= 5_000),
        row('Utilisation while work waits: mean sessions running ÷ limit, from the limit first reached to the last create', '≥ 90 %', window ? `${fmt(utilisation! * 100)} % over ${fmtMs(window.to - window.from)}` : 'n/a', (utilisation ?? 0) >= 0.9, why.idle),
        row('Slots held at the end (the limiter’s state)', '0', m.end ? `${m.end.held} held, ${m.end.waiting} waiting (granted ${m.end.granted}, released ${m.end.released}, reclaimed ${m.end.reclaimed})` : 'n/a', m.end?.held === 0 && m.end.waiting === 0),
        row('Wall time, first start to last close', `ideal ${fmtMs(m.plan.idealMs)}`, `${fmtMs(wallMs)}${m.outcome.deadlineHit ? ' (**deadline hit**)' : ''}`),
        row('Temporal actions per task (the waits, the asks again and the limiter’s own included)', '—', `${fmt(perTask, 2)}`),
      ],
      setup: [
        `- **Tasks:** ${total} tasks of ${fmtMs(durationMs)} in one project, started at once with \`tasks.start\` (200 calls at a time), on two worker processes at their defaults with \`BROWSERAI_FLEET_LIMIT=${limit}\` (each also serves the limiter's own task queue). At the limit with no gap they would take ${fmtMs(m.plan.idealMs)}. The limiter's figures come from its histories (every run): the time between each workflow task's scheduled, started and completed events; replay with \`Worker.runReplayHistories\` in the bench's process, one run at a time.`,
      ],
      details: distributions([
        ["Limiter workflow task, scheduled → started (ms)", latency, (v: number) => fmt(v, 0)],
        ["Limiter workflow task, started → completed (ms)", processing, (v: number) => fmt(v, 0)],
        ['Replay of a limiter run (ms)', stats(m.replayMs), (v: number) => fmt(v, 0)],
      ]),
      raw: { end: m.end, runs: m.runs.map(({ runId, events, causes }) => ({ runId, events, failed: causes.length, causes })), replayMs: m.replayMs, actions: m.actions },
    };
  },
});

/**
 * Reasons for the misses the line can explain from what it recorded: the slowest limiter workflow
 * task and how far into its run it came (a long run is a large replay and a large state), the failed
 * ones' causes, and how long a slot stood empty between one session's end and the next create.
 */
function lineReasons(
  runs: LimiterRun[],
  sessions: Array<readonly [createdAt: number, endedAt: number]>,
  window: { from: number; to: number } | undefined,
  limit: number,
) {
  const slowest = runs
    .flatMap((run) => run.tasks.map((task) => ({ task, events: run.events })))
    .sort((a, b) => (b.task.durationMs ?? 0) - (a.task.durationMs ?? 0))[0];
  const causes = new Map<string, number>();
  for (const cause of runs.flatMap((run) => run.causes)) causes.set(cause, (causes.get(cause) ?? 0) + 1);
  const byCause = [...causes].sort((a, b) => b[1] - a[1]).map(([cause, n]) => `${n} × ${cause}`);
  // Creates inside the window: each is a slot turned over; the slot-time left empty spread over them.
  const creates = window ? sessions.filter(([at]) => at > window.from && at <= window.to).length : 0;
  const idleMs = window
    ? (limit - meanOver(openSteps(sessions), window.from, window.to)) * (window.to - window.from)
    : 0;
  return {
    slowest:
      slowest &&
      `the slowest (${fmtMs(slowest.task.durationMs)}) started at event ${slowest.task.atEvent} of a run of ${slowest.events} events.`,
    failed: byCause.length ? `by cause: ${byCause.join('; ')}.` : undefined,
    idle: creates
      ? `a slot stood empty a mean ${fmtMs(idleMs / creates)} per turnover (${creates} creates): a session's end is seen by a poll, released, granted to the next waiter by a signal, and only then created.`
      : undefined,
  };
}

/** How many of the tasks completed (their workflow's result), 32 at a time. */
async function countCompleted(stack: BenchStack, records: TaskRecord[]): Promise<number> {
  let completed = 0;
  await mapLimit(records, 32, async ({ plan: { workflowId } }) => {
    const result = await stack.temporal.client.workflow
      .getHandle(workflowId)
      .result()
      .catch(() => undefined);
    if (result?.status === 'finalized') completed++;
  });
  return completed;
}

interface LimiterRun {
  runId: string;
  history: temporal.api.history.v1.IHistory;
  events: number;
  /** Each failed or timed-out workflow task's cause. */
  causes: string[];
  /** Each workflow task: scheduled → started, started → completed, and its started event's ID (how far into the run). */
  tasks: { latencyMs?: number; durationMs?: number; atEvent: number }[];
}

/** Every run of the limiter, with its workflow tasks' times (history fetched 10 events a page: acquires are large). */
async function limiterRuns(stack: BenchStack): Promise<LimiterRun[]> {
  const client = stack.temporal.client;
  const runs: LimiterRun[] = [];
  for await (const { runId } of client.workflow.list({ query: `WorkflowId = '${LIMITER_ID}'` })) {
    const events: temporal.api.history.v1.IHistoryEvent[] = [];
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await client.workflowService.getWorkflowExecutionHistory({
        namespace: 'default',
        execution: { workflowId: LIMITER_ID, runId },
        maximumPageSize: 10,
        nextPageToken,
      });
      events.push(...(page.history?.events ?? []));
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken);
    runs.push({ runId, history: { events }, events: events.length, ...workflowTasks(events) });
  }
  return runs;
}

function workflowTasks(events: temporal.api.history.v1.IHistoryEvent[]) {
  const at = (e: temporal.api.history.v1.IHistoryEvent) =>
    Number(e.eventTime?.seconds ?? 0) * 1_000 + (e.eventTime?.nanos ?? 0) / 1e6;
  const scheduled = new Map<string, number>();
  const started = new Map<string, number>();
  const tasks: LimiterRun['tasks'] = [];
  const causes: string[] = [];
  for (const e of events) {
    if (e.workflowTaskScheduledEventAttributes) scheduled.set(String(e.eventId), at(e));
    const s = e.workflowTaskStartedEventAttributes;
    if (s) started.set(String(e.eventId), at(e));
    if (s)
      tasks.push({
        latencyMs: at(e) - (scheduled.get(String(s.scheduledEventId)) ?? at(e)),
        atEvent: Number(e.eventId),
      });
    const c = e.workflowTaskCompletedEventAttributes;
    if (c) tasks.at(-1)!.durationMs = at(e) - (started.get(String(c.startedEventId)) ?? at(e));
    const f = e.workflowTaskFailedEventAttributes;
    // The cause's enum name (e.g. WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE) and the first words of its message.
    if (f)
      causes.push(
        `${temporal.api.enums.v1.WorkflowTaskFailedCause[f.cause ?? 0]}: ${(f.failure?.message ?? '').slice(0, 80)}`,
      );
    if (e.workflowTaskTimedOutEventAttributes) causes.push('timed out');
  }
  return { tasks, causes };
}

/**
 * Each run's replay time, one replay worker for all: the first run is replayed once more first, so
 * the worker's start (loading the bundle) is in no run's time.
 */
async function replayTimes(bundlePath: string, runs: LimiterRun[]): Promise<number[]> {
  if (runs.length === 0) return [];
  const workflowBundle = { code: readFileSync(bundlePath, 'utf8') };
  const histories = [runs[0]!, ...runs].map((run) => ({ workflowId: LIMITER_ID, history: run.history }));
  const times: number[] = [];
  let from = Date.now();
  for await (const replay of Worker.runReplayHistories({ workflowBundle }, histories)) {
    if (replay.error) log(`line: run ${replay.runId} did not replay: ${String(replay.error)}`);
    times.push(Date.now() - from);
    from = Date.now();
  }
  return times.slice(1);
}
