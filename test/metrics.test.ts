// Metrics end to end: a worker with the Prometheus endpoint on, tasks through every outcome, and
// the endpoint scraped over HTTP. The Temporal Runtime is process-wide (node --test runs this file
// in its own process): it is installed here, with the endpoint, before anything creates a
// connection. So this file does not use test/helpers/stack.ts, whose import installs a Runtime
// of its own (a logger only); it builds the same stack from the same parts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { after, before, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { type ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, type Worker } from '@temporalio/worker';
import { BrowserAIClient, type BrowserAIRequestEvent } from '../src/browserai';
import { loadWorkerConfig, metricsAddressFrom } from '../src/config/worker';
import { BrowserTasks } from '../src/starters/tasks';
import { startTemporal } from '../dev/dev-server';
import { BrowserAIEmulator } from '../src/emulator';
import { recordBrowserAIRequest } from '../src/telemetry/activity-metrics';
import { installWorkerRuntime } from '../src/telemetry/runtime';
import { createWorker } from '../src/create-worker';
import { BrowserAIAwaitingInput, BrowserAIExecutionId } from '../src/contract/search-attributes';
import { groupingLabels, metricNames, panelQueries, readDashboard } from './helpers/dashboard';
import type { BrowserTaskInput } from '../src/contract/input';

const PROJECT = 'metrics-secret-project';
const CODE = '739164';

let metricsUrl: string;
let env: TestWorkflowEnvironment;
let emulator: BrowserAIEmulator;
let worker: Worker;
let running: Promise<void>;
let tasks: BrowserTasks;

before(async () => {
  metricsUrl = installWorkerRuntime({
    metricsAddress: `127.0.0.1:${await freePort()}`,
    log: { level: 'ERROR' },
  }).metricsUrl!;
  const workflowCode = bundleWorkflowCode({
    workflowsPath: require.resolve('../src/workflows'),
    logger: quietLogger(),
  });
  [env, emulator] = await Promise.all([
    startTemporal(),
    BrowserAIEmulator.start({ defaultDurationMs: 800, queueMs: 100 }),
  ]);
  const taskQueue = `metrics-${randomUUID()}`;
  worker = await createWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    client: new BrowserAIClient({
      apiToken: emulator.apiToken,
      baseUrl: emulator.baseUrl,
      timeoutMs: 5_000,
      onRequest: recordBrowserAIRequest,
    }),
    workflowBundle: await workflowCode,
    shutdownGraceTime: 1_000,
    // No cache: every workflow task replays the history from the start, so a metric the SDK
    // emitted again on replay would show in the counts below.
    maxCachedWorkflows: 0,
  });
  running = worker.run();
  tasks = new BrowserTasks(env.client, taskQueue);
});

after(async () => {
  worker?.shutdown();
  await running?.catch(() => undefined);
  await emulator?.close();
  await env?.teardown();
});

test('the Prometheus endpoint shows requests, outcomes, codes, stops and waits, with no task data in any label', async () => {
  const executionIds: string[] = [];
  const workflowIds: string[] = [];
  const started = async (input: Partial<BrowserTaskInput>) => {
    const handle = await tasks.start(taskInput(input));
    workflowIds.push(handle.workflowId);
    return handle;
  };
  // Read from the search attributes, not the `state` query: on a worker without a cache, a query
  // that meets a workflow task in flight replays it with the SDK's replay flag off, so the
  // workflow metrics of that task would be emitted twice (seen with @temporalio/* 1.24.0).
  const executionIdOf = async (handle: Awaited<ReturnType<typeof started>>, awaitingInput = false) => {
    const executionId = await eventually('the task to be ready', async () => {
      const attributes = (await handle.describe()).typedSearchAttributes;
      return (!awaitingInput || attributes.get(BrowserAIAwaitingInput)) && attributes.get(BrowserAIExecutionId);
    });
    executionIds.push(executionId);
    return executionId;
  };

  const completed = await started({});
  const failed = await started({ instructions: [{ action: 'Open a page that does not exist [fail]' }] });
  const cancelled = await started({ instructions: [{ action: 'Crawl everything [duration=60s]' }] });
  const otp = await started({ instructions: [{ action: 'Log in to the portal [needs-code] [duration=2s]' }] });
  const timedOut = await started({ instructions: [{ action: 'Long crawl [duration=60s]' }], timeoutMs: 3_000 });

  const cancelledId = await executionIdOf(cancelled);
  await eventually('running', () => emulator.task(cancelledId)?.status === 'running');
  await cancelled.cancel();
  await executionIdOf(otp, true);
  await eventually('one task awaiting input', async () => {
    const m = await scrape();
    return value(m, 'browserai_awaiting_input_entered_total') - value(m, 'browserai_awaiting_input_left_total') === 1;
  });
  await tasks.submitCode(otp.workflowId, CODE);

  assert.equal((await completed.result()).status, 'finalized');
  assert.equal((await otp.result()).status, 'finalized');
  assert.equal(((await failureOf(failed.result())) as ApplicationFailure).type, 'BrowserAITaskFailed');
  assert.ok((await failureOf(cancelled.result())) instanceof CancelledFailure);
  assert.equal(((await failureOf(timedOut.result())) as ApplicationFailure).type, 'TaskTimeout');
  for (const handle of [completed, failed, timedOut]) executionIds.push(await executionIdOf(handle));

  // The exporter may lag the last workflow task by a moment.
  const metrics = await eventually('the last metrics', async () => {
    const m = await scrape();
    return value(m, 'browserai_tasks_ended_total') >= 5 && value(m, 'browserai_stops_ended_total') >= 2 ? m : undefined;
  });

  const ended = metrics
    .filter((m) => m.name === 'browserai_tasks_ended_total')
    .map((m) => `${m.labels.outcome}/${m.labels.failure_type ?? ''}=${m.value}`);
  assert.equal(value(metrics, 'browserai_tasks_ended_total'), 5, ended.join(' '));
  assert.equal(value(metrics, 'browserai_tasks_ended_total', { outcome: 'completed' }), 2);
  assert.equal(value(metrics, 'browserai_tasks_ended_total', { outcome: 'failed' }), 1);
  assert.equal(value(metrics, 'browserai_tasks_ended_total', { outcome: 'cancelled' }), 1);
  assert.equal(value(metrics, 'browserai_tasks_ended_total', { outcome: 'timed_out', failure_type: 'TaskTimeout' }), 1);
  assert.equal(value(metrics, 'browserai_codes_typed_total'), 1);
  assert.equal(value(metrics, 'browserai_stops_sent_total'), 2);
  assert.equal(value(metrics, 'browserai_stops_ended_total', { result: 'confirmed' }), 2);
  // The wait for input is counted once, although every later workflow task replayed it (no cache), and left once.
  assert.equal(value(metrics, 'browserai_awaiting_input_entered_total'), 1);
  assert.equal(value(metrics, 'browserai_awaiting_input_left_total'), 1);
  assert.equal(value(metrics, 'browserai_task_polls_count'), 5);
  assert.ok(value(metrics, 'browserai_task_polls_sum') >= 5);

  assert.equal(value(metrics, 'browserai_requests_total', { endpoint: 'POST /tasks', status_class: '2xx' }), 5);
  assert.ok(value(metrics, 'browserai_requests_total', { endpoint: 'GET /tasks/{id}', status_class: '2xx' }) > 0);
  assert.equal(
    value(metrics, 'browserai_requests_total', { endpoint: 'POST /tasks/{id}/command', status_class: '2xx' }),
    2,
  );
  assert.equal(
    value(metrics, 'browserai_requests_total', { endpoint: 'POST /tasks/{id}/instructions', status_class: '2xx' }),
    1,
  );
  assert.equal(value(metrics, 'browserai_request_duration_seconds_count'), value(metrics, 'browserai_requests_total'));
  assert.ok(value(metrics, 'browserai_request_duration_seconds_sum') > 0);
  // Temporal's own worker metrics are on the same endpoint.
  assert.ok(
    metrics.some((s) => s.name.startsWith('temporal_')),
    'Temporal worker metrics are served too',
  );

  // No label carries task data.
  const secrets = [PROJECT, CODE, ...executionIds, ...workflowIds];
  for (const sample of metrics.filter((s) => s.name.startsWith('browserai_'))) {
    for (const [label, labelValue] of Object.entries(sample.labels)) {
      for (const secret of secrets)
        assert.ok(!labelValue.includes(secret), `${sample.name}{${label}} carries ${secret}`);
    }
  }
  const text = await (await fetch(metricsUrl)).text();
  for (const secret of secrets) assert.ok(!text.includes(secret), `the endpoint shows ${secret}`);
});

test('every metric and grouping label the Grafana dashboard queries is one the worker serves', async () => {
  // A 429 and a lost answer, so that the metrics only those create are served too.
  emulator.inject({ method: 'POST', path: /^\/tasks$/, dropAfterHandling: true });
  const ambiguous = await tasks.start(taskInput({}));
  assert.equal(((await failureOf(ambiguous.result())) as ApplicationFailure).type, 'AmbiguousRequest');
  emulator.inject({ method: 'GET', path: /^\/tasks\/[^/]+$/, status: 429, retryAfterSeconds: 1 });
  assert.equal((await (await tasks.start(taskInput({}))).result()).status, 'finalized');
  const metrics = await eventually('the 429 and the ambiguous request', async () => {
    const m = await scrape();
    return value(m, 'browserai_rate_limited_total') >= 1 && value(m, 'browserai_ambiguous_requests_total') >= 1
      ? m
      : undefined;
  });

  // Histograms are served as their _bucket, _sum and _count series, the names PromQL uses.
  const served = new Set(metrics.map((s) => s.name));
  const queries = panelQueries(readDashboard());
  assert.ok(queries.length >= 15, `${queries.length} queries`);
  const missing: string[] = [];
  for (const { panel, expr } of queries) {
    const names = metricNames(expr);
    for (const name of names) if (!served.has(name)) missing.push(`${panel}: ${name}`);
    // The labels it groups by are on the metrics it reads.
    for (const label of groupingLabels(expr)) {
      if (!metrics.some((s) => names.has(s.name) && label in s.labels))
        missing.push(`${panel}: label ${label} of ${[...names].join(', ')}`);
    }
  }
  assert.deepEqual(missing, [], 'the dashboard queries metrics or labels the worker does not serve');
});

test('onRequest sees route templates (no IDs), status classes, 429 Retry-After and requests that got no answer', async () => {
  const server = createHttpServer((req, res) => {
    if (req.url?.startsWith('/tasks/busy')) {
      res
        .writeHead(429, { 'retry-after': '7', 'content-type': 'application/json' })
        .end('{"error":"Too many requests"}');
    } else if (req.url?.startsWith('/saved_tasks/name/')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Saved task not found"}');
    } else {
      res.writeHead(500).end('oops');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const events: BrowserAIRequestEvent[] = [];
  const { port } = server.address() as { port: number };
  const client = new BrowserAIClient({
    apiToken: 'test-token',
    baseUrl: `http://127.0.0.1:${port}`,
    proxy: false,
    onRequest: (e) => events.push(e),
  });
  try {
    await assert.rejects(client.getTask('busy-f00d'));
    await assert.rejects(client.getSavedTask('my secret task'));
    await assert.rejects(client.stopTask('exec-123'));
    await assert.rejects(client.getResults('../../x')); // refused before sending: no event
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  const refused = new BrowserAIClient({
    apiToken: 'test-token',
    baseUrl: `http://127.0.0.1:${await freePort()}`,
    proxy: false,
    onRequest: (e) => events.push(e),
  });
  await assert.rejects(
    refused.createTask({
      instructions: [{ action: 'x' }],
      type: 'crawler_automation',
      project: 'p',
      geoLocation: { country: 'US' },
    } as never),
  );
  const shown = events.map(({ method, route, status, failure, retryAfterMs }) => ({
    method,
    route,
    status,
    failure,
    retryAfterMs,
  }));
  assert.deepEqual(shown, [
    { method: 'GET', route: '/tasks/{id}', status: 429, failure: undefined, retryAfterMs: 7_000 },
    { method: 'GET', route: '/saved_tasks/name/{name}', status: 404, failure: undefined, retryAfterMs: undefined },
    { method: 'POST', route: '/tasks/{id}/command', status: 500, failure: undefined, retryAfterMs: undefined },
    { method: 'POST', route: '/tasks', status: undefined, failure: 'network', retryAfterMs: undefined },
  ]);
  assert.ok(events.every((e) => e.durationMs >= 0));
  // Outside an activity the recorder records nothing and never throws.
  recordBrowserAIRequest(events[0]);
});

test('WORKER_METRICS_ADDRESS: host:port, off, or a problem that says what to set', () => {
  const problems: string[] = [];
  assert.equal(metricsAddressFrom({}, problems), undefined);
  assert.equal(metricsAddressFrom({ WORKER_METRICS_ADDRESS: '0.0.0.0:9464' }, problems), '0.0.0.0:9464');
  assert.equal(metricsAddressFrom({ WORKER_METRICS_ADDRESS: '[::1]:9464' }, problems), '[::1]:9464');
  assert.equal(metricsAddressFrom({ WORKER_METRICS_ADDRESS: 'OFF' }, problems), null);
  assert.deepEqual(problems, []);
  assert.equal(metricsAddressFrom({ WORKER_METRICS_ADDRESS: '9464' }, problems), undefined);
  assert.equal(metricsAddressFrom({ WORKER_METRICS_ADDRESS: 'localhost:99999' }, problems), undefined);
  assert.equal(problems.length, 2);
  assert.match(problems[0], /WORKER_METRICS_ADDRESS must be host:port/);
  const base = { BROWSERAI_API_TOKEN: 't' }; // no HOME: no temporal.toml is read
  assert.equal(loadWorkerConfig(base).metricsAddress, undefined);
  assert.equal(
    loadWorkerConfig({ ...base, WORKER_METRICS_ADDRESS: '127.0.0.1:9464' }).metricsAddress,
    '127.0.0.1:9464',
  );
  assert.throws(() => loadWorkerConfig({ ...base, WORKER_METRICS_ADDRESS: 'nope' }), /WORKER_METRICS_ADDRESS/);
});

test("a second install says what to do instead of the SDK's bare IllegalStateError", () => {
  assert.throws(
    () => installWorkerRuntime({ metricsAddress: '127.0.0.1:1' }),
    /already exists.*prometheusMetricsOptions/s,
  );
});

/** Fast polling, so the test finishes in seconds. */
function taskInput(overrides: Partial<BrowserTaskInput>): BrowserTaskInput {
  return {
    instructions: [{ action: 'Open https://example.com and read the title' }],
    type: 'crawler_automation',
    project: PROJECT,
    geoLocation: { country: 'US' },
    polling: { initialIntervalMs: 250, maxIntervalMs: 1_000, heartbeatTimeoutMs: 5_000 },
    ...overrides,
  };
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

async function scrape(): Promise<Sample[]> {
  const response = await fetch(metricsUrl);
  assert.equal(response.status, 200);
  const samples: Sample[] = [];
  for (const line of (await response.text()).split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[key] = raw.replace(/\\(.)/g, '$1');
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of a metric's samples whose labels include `labels`. */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  const err = await promise.then(
    () => assert.fail('expected the workflow to fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${err}`);
  return err.cause;
}

async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await probe();
    if (result) return result;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function quietLogger() {
  const noop = () => undefined;
  return { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };
}
