// The fleet limiter (docs/fleet.md): how far it goes and what it costs, on real worker processes.
// 1. Its ceiling: callers acquire a slot (the update-with-start a create makes) and release it
//    (the signal an ending sends) as fast as they can; no one waits, so this is the limiter's
//    own throughput.
// 2. Its cost: the Temporal actions of one-second tasks without a limit, with a limit nobody
//    reaches, and with a limit of 2 (the others wait), per task.
import { randomUUID } from 'node:crypto';
import { sleep } from '../../dev/async';
import { FleetLimit } from '../../src/activities/fleet';
import { BrowserTasks } from '../../src/starters/tasks';
import { limiterStateQuery } from '../../src/workflows/fleet/messages';
import { fmt, fmtMs, log } from '../format';
import { PROJECT, taskInput } from '../plan';
import { row } from '../report/markdown';
import { scenario } from '../scenario';
import type { BenchStack } from '../stack';
import { stats } from '../statistics';
import { actionsBetween, readActions } from '../temporal-actions';

/** Without a limit, a limit nobody reaches, and a limit of 2. */
const LIMITS = [undefined, 100, 2] as const;
const TASK_MS = 1_000;
const TEXT = 'Limiter job: read the title';

export const measureLimiter = scenario({
  heading: '## Fleet limiter: its ceiling and its cost per task',
  stack: () => ({ queueMs: 100 }),
  plan: (stack, { config: { limiter: settings } }) =>
    LIMITS.map((limit) => ({
      limit,
      inputs: Array.from({ length: settings.tasks }, () => taskInput(stack, { text: TEXT, durationMs: TASK_MS })),
    })),
  async measure(stack, runs, { config: { limiter: settings } }) {
    const ceiling = await measureCeiling(stack, settings.ceilingMs, settings.callers);
    const costs = [];
    for (const { limit, inputs } of runs) costs.push({ limit, ...(await actionsPerTask(stack, inputs, limit)) });
    return { ceiling, costs };
  },
  report({ ceiling, costs }, _stack, { config: { limiter: settings } }) {
    const { latencies } = ceiling;
    return {
      // prettier-ignore
      rows: [
        row(`Acquire + release pairs per second, ${settings.callers} callers for ${fmtMs(settings.ceilingMs)}`, '—', `${fmt(ceiling.pairsPerSecond, 1)} (pair p50 ${fmtMs(latencies?.p50)}, p99 ${fmtMs(latencies?.p99)})`),
        ...costs.map((c) => row(`Temporal actions per task, ${c.limit === undefined ? 'no limit' : `limit ${c.limit}`}`, '—', `${fmt(c.total, 2)} (${c.byType})`)),
      ],
      setup: [
        `- **Ceiling:** one worker process at its defaults; ${settings.callers} callers each acquire a slot through the limiter's update-with-start and release it by signal, as fast as they can, for ${fmtMs(settings.ceilingMs)} (the first acquire, which starts the limiter, before the clock). At the end the limiter held ${ceiling.state.held} slots, had granted ${ceiling.state.granted} and released ${ceiling.state.released}; its history had ${ceiling.historyLength} events.`,
        `- **Cost:** ${settings.tasks} tasks of ${fmtMs(TASK_MS)} started at once, on a worker process with \`BROWSERAI_FLEET_LIMIT\` unset, 100 and 2; the dev server's \`action\` counter in the namespace (the limiter's actions included), from before the first start to 2 s after the last result, per task.`,
      ],
      details: [],
      raw: { ceiling, costs },
    };
  },
});

/** Acquire + release pairs per second through one limiter. */
async function measureCeiling(stack: BenchStack, durationMs: number, callers: number) {
  const taskQueue = `bench-limiter-ceiling-${randomUUID()}`;
  const worker = await stack.startWorker('default', taskQueue);
  const client = stack.temporal.client;
  const account = `ceiling-${randomUUID()}`;
  const fleet = new FleetLimit({ maxRunning: 100_000, checkIntervalMs: 3_600_000, account }, '');
  const place = { priority: 3, fairnessKey: 'bench', fairnessWeight: 1, project: PROJECT, runId: 'r' };
  // The first acquire starts the limiter; the clock starts after it.
  await fleet.acquire(client, { ...place, holderId: 'warm-up', workflowId: 'warm-up' }, taskQueue);
  const limiter = client.workflow.getHandle(fleet.limiterId);
  await limiter.signal('browserAIReleaseSlot', { holderId: 'warm-up' });
  log(`limiter: ${callers} callers acquire and release for ${durationMs / 1000} s`);
  const latencies: number[] = [];
  const startedAt = Date.now();
  const caller = async () => {
    while (Date.now() < startedAt + durationMs) {
      const holderId = randomUUID();
      const pairStartedAt = Date.now();
      await fleet.acquire(client, { ...place, holderId, workflowId: holderId }, taskQueue);
      await limiter.signal('browserAIReleaseSlot', { holderId });
      latencies.push(Date.now() - pairStartedAt);
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
  const pairsPerSecond = latencies.length / ((Date.now() - startedAt) / 1000);
  const state = await limiter.query(limiterStateQuery);
  const { historyLength } = await limiter.describe();
  await worker.stop();
  return { pairsPerSecond, latencies: stats(latencies), state, historyLength };
}

/** Temporal actions per task for the tasks, under `limit` (undefined: no limit). */
async function actionsPerTask(stack: BenchStack, inputs: ReturnType<typeof taskInput>[], limit: number | undefined) {
  const taskQueue = `bench-limiter-${limit ?? 'none'}`;
  const fleetEnv = { BROWSERAI_FLEET_LIMIT: String(limit), BROWSERAI_FLEET_ACCOUNT: `bench-${randomUUID()}` };
  const worker = await stack.startWorker('default', taskQueue, limit ? fleetEnv : {});
  const tasks = new BrowserTasks(stack.temporal.client, taskQueue);
  const before = await readActions(stack.metricsUrl, 'default');
  const handles = await Promise.all(inputs.map((input) => tasks.start(input)));
  await Promise.all(handles.map((h) => h.result()));
  // Late counters (the last releases, the limiter's answers) settle within a moment.
  await sleep(2_000);
  const spent = actionsBetween(before, await readActions(stack.metricsUrl, 'default'));
  await worker.stop();
  const byType = Object.entries(spent.byType)
    .map(([type, n]) => `${type.replace(/^(grpc|command)_/, '')} ${fmt(n / inputs.length, 2)}`)
    .join(', ');
  return { total: spent.total / inputs.length, byType };
}
