// The fleet scenario (issue 26 §4): two worker processes share one fleet limit
// (BROWSERAI_FLEET_LIMIT) while two tenants' batches, a late project and interactive tasks run
// (plan.ts); one worker is SIGKILLed and the Temporal server paused mid-run. What the limit did is
// read from the emulator's own record of every session (created, ended) and from the limiter's
// state; its cost from the server's action counter against a baseline run without a limit; its
// ceiling with bench/fleet-limiter.ts.
import os from 'node:os';
import type { Client } from '@temporalio/client';
import { mapLimit, sleep } from '../../../dev/async';
import { limiterStateQuery, type LimiterState } from '../../../src/contract/fleet-messages';
import { measureCeiling } from '../../fleet-limiter';
import { log } from '../../format';
import { taskInput } from '../../plan';
import { runTasks } from '../../run';
import type { TaskRecord } from '../../task';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import { runTargetOf, withStack, type BenchStack } from '../../stack';
import { actionsBetween, readActions, type ActionCounts } from '../../temporal-actions';
import { pauseTemporal } from '../../temporal-outage';
import { buildWorkflowBundle } from '../scale/measure';
import { planFleet } from './plan';
import { renderFleet, type HeldSample, type Session } from './report';

const TASK_QUEUE = 'bench-fleet';
const BASELINE_QUEUE = 'bench-fleet-baseline';
const ACCOUNT = 'bench-fleet';
const LIMITER_ID = `browserai-fleet-limiter-${ACCOUNT}`;
const SAMPLE_MS = 2_000;
const CEILING_CALLERS = 32;

export async function measureFleet(context: ScenarioContext): Promise<ScenarioReport> {
  const settings = context.config.fleet;
  const loadBefore = os.loadavg()[0];
  return withStack({ queueMs: QUEUE_MS }, async (stack) => {
    const client = stack.temporal.client;
    const bundle = { WORKER_WORKFLOW_BUNDLE: buildWorkflowBundle() };
    const baseline = await baselineActionsPerTask(stack, bundle, settings.durationMs, Math.ceil(settings.tasks / 100));
    const limited = { ...bundle, BROWSERAI_FLEET_LIMIT: String(settings.limit), BROWSERAI_FLEET_ACCOUNT: ACCOUNT };
    const startWorker = () => stack.startWorker('default', TASK_QUEUE, limited);
    const workers = [await startWorker(), await startWorker()];
    const plan = planFleet(stack, settings);
    log(
      `fleet: ${plan.records.length} tasks of ${settings.durationMs / 1000} s at limit ${settings.limit} on 2 workers (ideal ${Math.round(plan.idealMs / 1000)} s)`,
    );
    stack.emulator.resetPeakRunning();
    const actionsBefore = await readActions(stack.metricsUrl, 'default');
    const firstStartAt = Date.now();
    const samples: HeldSample[] = [];
    const sampling = setInterval(
      () => void limiterState(client).then((s) => s && samples.push({ at: Date.now(), held: s.held })),
      SAMPLE_MS,
    );
    const faults = { kills: [] as number[], outage: undefined as { from: number; to: number } | undefined };
    const causingFaults = (async () => {
      for (const at of plan.killAtMs) {
        await sleep(firstStartAt + at - Date.now());
        // Never the first worker: the run watches it to tell a crashed bench from a planned kill.
        const victim = workers.splice(1, 1)[0]!;
        victim.kill();
        faults.kills.push(Date.now());
        log('fleet: SIGKILL to a worker; a new one replaces it');
        workers.push(await startWorker());
      }
      if (settings.outageMs <= 0) return;
      await sleep(firstStartAt + plan.outageAtMs - Date.now());
      faults.outage = { from: Date.now(), to: 0 };
      faults.outage.to = await pauseTemporal(settings.outageMs, 'fleet');
    })();
    const deadlineAt = firstStartAt + plan.idealMs * 2 + settings.outageMs + 10 * 60_000;
    const target = runTargetOf(stack, workers[0]!, TASK_QUEUE, 'fleet-batch-a');
    const outcome = await runTasks(plan.records, target, { batch: 50, deadlineAt, label: 'fleet', firstStartAt });
    clearInterval(sampling);
    await causingFaults;
    const limiterAtEnd = await settledLimiter(client);
    await sleep(2_000); // the last counters
    const spent = perTask(
      actionsBetween(actionsBefore, await readActions(stack.metricsUrl, 'default')),
      plan.records.length,
    );
    const loadAfter = os.loadavg()[0];
    log('fleet: reading each task’s BrowserAI session');
    const sessions = await sessionsOf(stack, plan.records);
    const ceiling =
      settings.ceilingMs > 0
        ? await measureCeiling(client, TASK_QUEUE, settings.ceilingMs / 1000, CEILING_CALLERS)
        : undefined;
    return renderFleet({
      context,
      settings,
      plan,
      firstStartAt,
      outcome,
      sessions,
      emulatorPeak: stack.emulator.peakRunning(),
      samples,
      limiterAtEnd,
      faults,
      actions: { perTask: spent, baseline },
      ceiling,
      load: { before: loadBefore, after: loadAfter },
    });
  });
}

/** Actions per task of a few tasks of the same length on a worker without a limit, before the run. */
async function baselineActionsPerTask(
  stack: BenchStack,
  extra: Record<string, string>,
  durationMs: number,
  count: number,
): Promise<ActionCounts> {
  const worker = await stack.startWorker('default', BASELINE_QUEUE, extra);
  const target = runTargetOf(stack, worker, BASELINE_QUEUE, 'fleet-baseline');
  const before = await readActions(stack.metricsUrl, 'default');
  const records = Array.from({ length: count }, (_, i) => ({
    plan: {
      workflowId: `bench-fleet-baseline-${i}`,
      group: 'baseline',
      input: taskInput(stack, { text: 'Fleet baseline: read a price list', durationMs, project: 'fleet-baseline' }),
      startAtMs: 0,
      durationMs,
    },
  }));
  await runTasks(records, target, {
    batch: 50,
    deadlineAt: Date.now() + durationMs + 5 * 60_000,
    label: 'fleet baseline',
  });
  await sleep(2_000);
  const spent = actionsBetween(before, await readActions(stack.metricsUrl, 'default'));
  await worker.stop();
  return perTask(spent, count);
}

/** Per task, without the bench's own queries of the limiter. */
function perTask(spent: ActionCounts, tasks: number): ActionCounts {
  const byType = Object.fromEntries(
    Object.entries(spent.byType)
      .filter(([type]) => !/Query/.test(type))
      .map(([type, n]) => [type, n / tasks]),
  );
  return { byType, total: Object.values(byType).reduce((a, b) => a + b, 0) };
}

function limiterState(client: Client): Promise<LimiterState | undefined> {
  return client.workflow
    .getHandle(LIMITER_ID)
    .query(limiterStateQuery)
    .catch(() => undefined);
}

/** The limiter once its last releases have landed (at most 30 s after the last close). */
async function settledLimiter(client: Client): Promise<LimiterState | undefined> {
  let state: LimiterState | undefined;
  for (const until = Date.now() + 30_000; Date.now() < until; await sleep(500)) {
    state = (await limiterState(client)) ?? state;
    if (state?.held === 0 && state.waiting === 0) break;
  }
  return state;
}

/**
 * Every session of the run as the emulator recorded it (created, ended; a create whose answer was
 * lost counts too), and each workflow's own, by workflow ID.
 */
async function sessionsOf(
  stack: BenchStack,
  records: TaskRecord[],
): Promise<{ all: Session[]; byWorkflow: Map<string, Session> }> {
  const tasks = stack.emulator
    .listTasks()
    .filter((t) => t.project.startsWith('fleet-') && t.project !== 'fleet-baseline');
  // When a poll first asked about each session after its end: the moment the end could be seen.
  const seen = new Map<string, number>();
  const ends = new Map(tasks.map((t) => [t.executionId, t.endedAt ?? Infinity]));
  for (const request of stack.emulator.requests) {
    const id = /^\/tasks\/([^/]+)/.exec(request.path)?.[1];
    if (id && !seen.has(id) && request.at >= (ends.get(id) ?? Infinity)) seen.set(id, request.at);
  }
  const session = (t: (typeof tasks)[number]): Session => ({
    createdAt: Date.parse(t.createdAt),
    endedAt: t.endedAt ?? undefined,
    endSeenAt: seen.get(t.executionId),
  });
  const byExecution = new Map(tasks.map((t) => [t.executionId, t]));
  const sessions = new Map<string, Session>();
  await mapLimit(records, 16, async ({ plan: { workflowId } }) => {
    const result = await stack.temporal.client.workflow
      .getHandle(workflowId)
      .result()
      .catch(() => undefined);
    const task = result?.executionId ? byExecution.get(result.executionId) : undefined;
    if (task) sessions.set(workflowId, session(task));
  });
  return { all: tasks.map(session), byWorkflow: sessions };
}
