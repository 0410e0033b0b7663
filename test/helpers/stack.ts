// The real parts every workflow test runs on: a Temporal dev server (the `temporal` CLI),
// the BrowserAI emulator over HTTP, and a real worker with the real activities.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type WorkflowHandle } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { SimplePlugin } from '@temporalio/plugin';
import { type TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, bundleWorkflowCode, type Worker, type WorkflowBundle } from '@temporalio/worker';
import { BrowserAIClient } from '../../src/browserai';
import { BrowserAIEmulator, emulatorOptionsFromEnv, type EmulatorOptions } from '../../src/emulator';
import { BrowserTasks } from '../../src/starters/tasks';
import { createWorker, type BrowserAIWorkerOptions } from '../../src/create-worker';
import { browserAIPreloadModules } from '../../src/workflow-bundle';
import type { BrowserTaskInput, BrowserTaskResult } from '../../src/contract/input';
import { startTemporal, TEST_WORKFLOW_BUNDLE_ENV } from './temporal';

// Workflow failures are what many tests expect; the worker's warnings about them are noise here.
Runtime.install({ logger: new DefaultLogger(process.env.TEST_LOG_LEVEL === 'debug' ? 'DEBUG' : 'ERROR') });

let bundle: Promise<WorkflowBundle> | undefined;
/** Our workflows bundled as the plugin bundles them (our modules preloaded): the run's prebuilt bundle, or once per file. */
export function workflowBundle(): Promise<WorkflowBundle> {
  const prebuilt = process.env[TEST_WORKFLOW_BUNDLE_ENV];
  bundle ??= prebuilt
    ? readFile(prebuilt, 'utf8').then((code) => ({ code }))
    : bundleWorkflowCode({
        workflowsPath: require.resolve('../../src/workflows'),
        preloadModules: browserAIPreloadModules(),
        logger: quietLogger(),
      });
  return bundle;
}

let bundleFile: Promise<string> | undefined;
/**
 * A file holding that bundle, for workers a test starts as processes (WORKER_WORKFLOW_BUNDLE): the
 * run's own file, or this file's bundle written once to a temporary file removed at exit.
 */
export function workflowBundleFile(): Promise<string> {
  const prebuilt = process.env[TEST_WORKFLOW_BUNDLE_ENV];
  bundleFile ??= prebuilt
    ? Promise.resolve(prebuilt)
    : workflowBundle().then(({ code }) => {
        const dir = mkdtempSync(join(tmpdir(), 'workflow-bundle-'));
        process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
        const path = join(dir, 'workflow-bundle.js');
        writeFileSync(path, code);
        return path;
      });
  return bundleFile;
}

function quietLogger() {
  const noop = () => undefined;
  return { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };
}

/** The Temporal server a test runs on: a namespace of the run's shared server, or a dev server of its own. */
export { startTemporal };

export interface Stack {
  env: TestWorkflowEnvironment;
  emulator: BrowserAIEmulator;
  browserai: BrowserAIClient;
  tasks: BrowserTasks;
  taskQueue: string;
  worker: Worker;
  stop(): Promise<void>;
}

export async function startStack(
  options: {
    emulator?: EmulatorOptions;
    temporalArgs?: string[];
    dataConverter?: DataConverter;
    /** Our search attributes registered on the namespace: all (default), none, or only these. */
    searchAttributes?: Parameters<typeof startTemporal>[1];
    /** Given to the worker and the client (e.g. Temporal's OpenTelemetryPlugin); the workflows are then bundled with their interceptors. */
    plugins?: SimplePlugin[];
    /** The worker's TOTP secrets and webhook destination. */
    codeLoop?: Pick<BrowserAIWorkerOptions, 'totpSecrets' | 'webhooks'>;
    /** The worker's fleet limit and Nexus service. */
    serve?: Pick<BrowserAIWorkerOptions, 'fleetLimit' | 'nexusService'>;
  } = {},
): Promise<Stack> {
  const [env, emulator, workflowCode] = await Promise.all([
    startTemporal(options.temporalArgs, options.searchAttributes ?? true),
    // BROWSERAI_EMULATOR_MODE / BROWSERAI_EMULATOR_ENDED_ANSWER run the whole suite against either
    // set of answers; a test that sets `mode` or `endedTaskAnswer` itself keeps its own.
    BrowserAIEmulator.start({
      defaultDurationMs: 800,
      queueMs: 100,
      ...emulatorOptionsFromEnv(process.env),
      ...options.emulator,
    }),
    workflowBundle(),
  ]);
  const taskQueue = `test-${randomUUID()}`;
  const browserai = new BrowserAIClient({ apiToken: emulator.apiToken, baseUrl: emulator.baseUrl, timeoutMs: 5_000 });
  const worker = await createWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    client: browserai,
    // A plugin's workflow interceptors must be in the bundle: the worker bundles with them itself.
    ...(options.plugins
      ? { workflowsPath: require.resolve('../../src/workflows'), plugins: options.plugins }
      : { workflowBundle: workflowCode }),
    shutdownGraceTime: 1_000,
    dataConverter: options.dataConverter,
    ...options.codeLoop,
    ...options.serve,
  });
  const running = worker.run();
  return {
    env,
    emulator,
    browserai,
    taskQueue,
    worker,
    tasks: new BrowserTasks(
      options.dataConverter || options.plugins
        ? new Client({
            connection: env.connection,
            namespace: env.namespace,
            dataConverter: options.dataConverter,
            plugins: options.plugins,
          })
        : env.client,
      taskQueue,
    ),
    async stop() {
      worker.shutdown();
      await running.catch(() => undefined);
      await emulator.close();
      await env.teardown();
    },
  };
}

/** Fast polling, so tests finish in seconds; everything else at its default. */
export function taskInput(overrides: Partial<BrowserTaskInput> = {}): BrowserTaskInput {
  return {
    instructions: [{ action: 'Open https://example.com and read the title' }],
    type: 'crawler_automation',
    project: 'test-project',
    geoLocation: { country: 'US' },
    polling: { initialIntervalMs: 250, maxIntervalMs: 1_000, heartbeatTimeoutMs: 5_000 },
    ...overrides,
  };
}

/** Polls a condition (the state query, the emulator) until it holds; fails with `what` after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** How the workflow ended within `withinMs`. A workflow still open then is terminated (cleanup) and fails the test. */
export async function ending(
  handle: WorkflowHandle,
  withinMs: number,
  what = 'the workflow',
): Promise<{ result?: BrowserTaskResult; failure?: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const open = new Promise<'open'>((resolve) => {
    timer = setTimeout(() => resolve('open'), withinMs);
  });
  try {
    const outcome = await Promise.race([
      handle.result().then(
        (result: BrowserTaskResult) => ({ result }),
        (failure: unknown) => ({ failure }),
      ),
      open,
    ]);
    if (outcome === 'open') {
      await handle.terminate('test cleanup: the workflow did not end in time').catch(() => undefined);
      assert.fail(`${what} (${handle.workflowId}) was still open ${withinMs} ms later`);
    }
    return outcome;
  } finally {
    clearTimeout(timer);
  }
}

/** One run of a workflow ID and its history as the server stores it. */
export interface StoredRun {
  runId: string;
  /** Start time, epoch milliseconds (0 when unknown): runs are returned oldest first. */
  startedAtMs: number;
  history: temporal.api.history.v1.IHistory;
}

/**
 * Every run of a workflow ID (continued as new, reset, retried), oldest first, each with its
 * full history. Visibility may lag behind a run that has just started, so the runs it lists are
 * completed with the continue-as-new chain from the first run and with the current run.
 */
export async function storedRuns(client: Client, workflowId: string): Promise<StoredRun[]> {
  const runs = new Map<string, StoredRun>();
  const add = async (runId: string, startedAtMs = 0): Promise<StoredRun> => {
    const known = runs.get(runId);
    if (known) {
      if (!known.startedAtMs) known.startedAtMs = startedAtMs;
      return known;
    }
    const history = await pagedHistory(client, workflowId, runId);
    const run: StoredRun = { runId, startedAtMs: startedAtMs || eventTimeMs(history.events?.[0]), history };
    runs.set(runId, run);
    return run;
  };
  for await (const listed of client.workflow.list({ query: `WorkflowId = '${workflowId.replace(/'/g, "\\'")}'` })) {
    await add(listed.runId, listed.startTime.getTime());
  }
  const current = await client.workflow.getHandle(workflowId).describe();
  const firstRunId = current.raw.workflowExecutionInfo?.firstRunId;
  await add(current.runId, current.startTime.getTime());
  // Forward along continue-as-new from the first run: runs visibility has not listed yet.
  let next: string | null | undefined = firstRunId || undefined;
  while (next) {
    const run = await add(next);
    const last = run.history.events?.at(-1);
    next = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
  }
  return [...runs.values()].sort((a, b) => a.startedAtMs - b.startedAtMs);
}

/**
 * A run's history, fetched 10 events a page: the client's default page can pass gRPC's 4 MB
 * message limit when events carry large payloads (a fleet limiter's acquires of 500 requests).
 */
async function pagedHistory(
  client: Client,
  workflowId: string,
  runId: string,
): Promise<temporal.api.history.v1.IHistory> {
  const events: temporal.api.history.v1.IHistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, runId },
      maximumPageSize: 10,
      nextPageToken,
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return { events };
}

function eventTimeMs(event: temporal.api.history.v1.IHistoryEvent | undefined): number {
  const time = event?.eventTime;
  if (!time) return 0;
  return Number(time.seconds ?? 0) * 1_000 + Math.floor((time.nanos ?? 0) / 1_000_000);
}

/** A workflow's history as the server stores it (every run of the workflow ID), as text: for "never in history" checks. */
export async function storedHistory(client: Client, workflowId: string): Promise<string> {
  const runs = await storedRuns(client, workflowId);
  return runs
    .map((run) => Buffer.from(temporal.api.history.v1.History.encode(run.history).finish()).toString('latin1'))
    .join('\n');
}

/** A worker (in this process) on a task queue of the test's choosing, e.g. one started late on purpose. */
export async function startWorkerOn(
  stack: Pick<Stack, 'env' | 'browserai'>,
  taskQueue: string,
  codeLoop?: Pick<BrowserAIWorkerOptions, 'totpSecrets' | 'webhooks'>,
): Promise<{ worker: Worker; stop(): Promise<void> }> {
  const worker = await createWorker({
    connection: stack.env.nativeConnection,
    namespace: stack.env.namespace ?? 'default',
    taskQueue,
    client: stack.browserai,
    workflowBundle: await workflowBundle(),
    shutdownGraceTime: 1_000,
    ...codeLoop,
  });
  const running = worker.run();
  return {
    worker,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
    },
  };
}
