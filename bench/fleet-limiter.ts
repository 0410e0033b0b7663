// `node lib/bench/fleet-limiter.js [SECONDS] [CONCURRENCY] [ceiling]`: what the fleet limiter (docs/fleet.md)
// costs and how far it goes, on a dev server of its own with one in-process worker.
// 1. Its ceiling: callers acquire a slot (the update-with-start a create makes) and release it
//    (the signal an ending sends) as fast as they can, for SECONDS (default 20) with CONCURRENCY
//    (default 32) callers; no one waits, so this is the limiter's own throughput (`ceiling`: only this).
// 2. Its cost: the Temporal actions of 6 one-second tasks on the emulator without a limit, with a
//    limit nobody reaches, and with a limit of 2 (four of them wait), per task.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { FleetLimit } from '../src/activities/fleet';
import { BrowserAIClient } from '../src/browserai';
import { BrowserAIEmulator } from '../src/emulator';
import { BrowserTasks } from '../src/starters/tasks';
import { createWorker } from '../src/worker';
import { limiterStateQuery } from '../src/contract/fleet-messages';
import { startTemporal } from '../dev/dev-server';
import { freePort } from './stack';
import { actionsBetween, readActions, type ActionCounts } from './temporal-actions';

const SECONDS = Number(process.argv[2] ?? 20);
const CONCURRENCY = Number(process.argv[3] ?? 32);
const TASKS = 6;

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const metricsPort = await freePort();
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const env = await startTemporal(['--metrics-port', String(metricsPort)]);
  const emulator = await BrowserAIEmulator.start({ queueMs: 100 });
  try {
    console.log(await ceiling(env.client, env.nativeConnection));
    if (process.argv[4] !== 'ceiling') {
      for (const limit of [undefined, 100, 2]) console.log(await actionsPerTask(env, emulator, metricsUrl, limit));
    }
  } finally {
    await emulator.close();
    await env.teardown();
  }
}

type Env = Awaited<ReturnType<typeof startTemporal>>;

/** What `measureCeiling` found: the limiter's own throughput with no one waiting. */
export interface LimiterCeiling {
  pairsPerSecond: number;
  callers: number;
  seconds: number;
  pairP50Ms: number;
  pairP99Ms: number;
  /** Held at the end, by the limiter's count: 0 unless a slot leaked. */
  heldAtEnd: number;
  historyEvents: number;
}

/**
 * Acquire + release pairs per second through one new limiter (its own account), run by whatever
 * worker polls `taskQueue`: `callers` acquire and release as fast as they can for `seconds`.
 */
export async function measureCeiling(
  client: Client,
  taskQueue: string,
  seconds: number,
  callers: number,
): Promise<LimiterCeiling> {
  const fleet = new FleetLimit(
    { maxRunning: 100_000, checkIntervalMs: 3_600_000, account: `ceiling-${randomUUID()}` },
    '',
  );
  const place = { priority: 3, fairnessKey: 'bench', fairnessWeight: 1, project: 'bench', runId: 'r' };
  // The first acquire starts the limiter; the clock starts after it.
  await fleet.acquire(client, { ...place, holderId: 'warm-up', workflowId: 'warm-up' }, taskQueue);
  const limiter = client.workflow.getHandle(fleet.limiterId);
  await limiter.signal('browserAIReleaseSlot', { holderId: 'warm-up' });
  let pairs = 0;
  const latencies: number[] = [];
  const until = Date.now() + seconds * 1000;
  const caller = async () => {
    while (Date.now() < until) {
      const holderId = randomUUID();
      const started = Date.now();
      // Refused while the limiter continues as new: retried, as a create's activity would.
      for (let attempt = 1; ; attempt++) {
        try {
          await fleet.acquire(client, { ...place, holderId, workflowId: holderId }, taskQueue);
          break;
        } catch (err) {
          if (attempt >= 5) throw err;
          await new Promise((r) => setTimeout(r, 200 * attempt));
        }
      }
      await limiter.signal('browserAIReleaseSlot', { holderId });
      latencies.push(Date.now() - started);
      pairs++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: callers }, caller));
  const elapsed = (Date.now() - started) / 1000;
  const state = await limiter.query(limiterStateQuery);
  const described = await limiter.describe();
  await limiter.terminate('ceiling measured');
  latencies.sort((a, b) => a - b);
  const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return {
    pairsPerSecond: pairs / elapsed,
    callers,
    seconds: elapsed,
    pairP50Ms: p(0.5),
    pairP99Ms: p(0.99),
    heldAtEnd: state.held,
    historyEvents: described.historyLength,
  };
}

/** The ceiling through an in-process worker of its own, as one line. */
async function ceiling(client: Client, connection: Env['nativeConnection']): Promise<string> {
  const taskQueue = `ceiling-${randomUUID()}`;
  const worker = await createWorker({
    connection,
    taskQueue,
    client: new BrowserAIClient({ apiToken: 'unused', baseUrl: 'http://127.0.0.1:9' }),
  });
  const running = worker.run();
  try {
    const c = await measureCeiling(client, taskQueue, SECONDS, CONCURRENCY);
    return (
      `ceiling: ${c.pairsPerSecond.toFixed(1)} acquire+release pairs/s (${c.callers} callers, ${c.seconds.toFixed(0)} s; ` +
      `pair p50 ${c.pairP50Ms} ms, p99 ${c.pairP99Ms} ms); held at the end ${c.heldAtEnd}; limiter history ${c.historyEvents} events`
    );
  } finally {
    worker.shutdown();
    await running;
  }
}

/** Temporal actions per task for TASKS one-second tasks, under `limit` (undefined: no limit). */
async function actionsPerTask(
  env: Env,
  emulator: BrowserAIEmulator,
  metricsUrl: string,
  limit: number | undefined,
): Promise<string> {
  const taskQueue = `actions-${randomUUID()}`;
  const account = `actions-${randomUUID()}`;
  const worker = await createWorker({
    connection: env.nativeConnection,
    taskQueue,
    client: new BrowserAIClient({ apiToken: emulator.apiToken, baseUrl: emulator.baseUrl }),
    ...(limit ? { fleetLimit: { maxRunning: limit, account } } : {}),
  });
  const running = worker.run();
  try {
    const tasks = new BrowserTasks(env.client, taskQueue);
    const before = await readActions(metricsUrl, 'default');
    const handles = await Promise.all(
      Array.from({ length: TASKS }, () =>
        tasks.start({
          instructions: [{ action: 'Read the title [duration=1s]' }],
          type: 'crawler_automation',
          project: 'bench',
          geoLocation: { country: 'US' },
        }),
      ),
    );
    await Promise.all(handles.map((h) => h.result()));
    // Late counters (the last releases, the limiter's answers) settle within a moment.
    await new Promise((r) => setTimeout(r, 2_000));
    const spent: ActionCounts = actionsBetween(before, await readActions(metricsUrl, 'default'));
    const byType = Object.entries(spent.byType)
      .map(([type, n]) => `${type.replace(/^(grpc|command)_/, '')} ${(n / TASKS).toFixed(2)}`)
      .join(', ');
    return `limit ${limit ?? 'none'}: ${(spent.total / TASKS).toFixed(2)} actions per task (${byType})`;
  } finally {
    worker.shutdown();
    await running;
  }
}

// Also a module: the bench's `fleet` scenario measures the ceiling with `measureCeiling`.
if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
