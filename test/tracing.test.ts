// Traces: one OTP task traced end to end through Temporal's OpenTelemetryPlugin (on the worker and
// the client, as src/telemetry/tracing.ts installs it) into an in-memory exporter. The span tree
// runs from the start call through the workflow and its activities to each BrowserAI request, and
// no span carries the code, the token or an instruction.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { BrowserAIEmulator, emulatorOptionsFromEnv } from '../src/emulator';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { TRACING_PACKAGES, installTracing, tracingSettingsFrom, type Tracing } from '../src/telemetry/tracing';
import { stateQuery } from '../src/contract/messages';
import { startWorkerProcess, type WorkerProcess } from './helpers/secrets';
import { eventually, startStack, startTemporal, taskInput, type Stack } from './helpers/stack';

describe('traces', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let stack: Stack;
  before(async () => {
    tracing = installTracing({
      spanProcessor: new SimpleSpanProcessor(exporter),
      serviceName: 'browserai-temporal-test',
    });
    stack = await startStack({ plugins: [tracing.plugin] });
  });
  after(async () => {
    await stack?.stop();
    await tracing?.shutdown();
  });

  test('one OTP task: start call -> workflow -> activities -> each BrowserAI request, in one trace; no secret in any span', async () => {
    const code = '736251';
    const instruction = 'Log in to the traced portal [needs-code] [duration=1s]';
    const handle = await stack.tasks.start(taskInput({ instructions: [{ action: instruction }] }));
    await eventually('awaiting input', async () => (await handle.query(stateQuery)).awaitingInput);
    await stack.tasks.submitCode(handle.workflowId, code);
    const result = await handle.result();
    assert.equal(result.status, 'finalized');
    // Workflow spans reach the exporter through the worker's sink once their activation completes.
    const spans = await eventually('the workflow span ended', () => {
      const all = exporter.getFinishedSpans();
      return all.some((s) => s.name === 'RunWorkflow:browserTask') ? all : undefined;
    });

    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const parentOf = (s: ReadableSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);
    /** The names from a span up to its root: every parent must have been exported (no broken link). */
    const chain = (s: ReadableSpan): string[] => {
      const names = [s.name];
      for (let p = s.parentSpanId; p;) {
        const parent = byId.get(p);
        assert.ok(parent, `the parent of ${names.at(-1)} was exported`);
        names.push(parent.name);
        p = parent.parentSpanId;
      }
      return names;
    };

    const start = spans.find((s) => s.name === 'StartWorkflow:browserTask');
    assert.ok(start, `a start span; got ${[...new Set(spans.map((s) => s.name))].join(', ')}`);
    assert.equal(start.parentSpanId, undefined, 'the start call opens the trace');
    const traceId = start.spanContext().traceId;
    const inTrace = spans.filter((s) => s.spanContext().traceId === traceId);

    const run = inTrace.find((s) => s.name === 'RunWorkflow:browserTask');
    assert.ok(run, 'the workflow run is in the trace of its start call');
    assert.equal(parentOf(run)?.name, 'StartWorkflow:browserTask');

    // Each activity the task needed: scheduled by the workflow, run by the worker, with its requests under it.
    const requests = (method: string, route: string) => inTrace.filter((s) => s.name === `${method} ${route}`);
    // A GET may come from the poll, or from the create's one look a second after a `queued` answer.
    const expected: [activities: string[], method: string, route: string][] = [
      [['browserAICreateTask'], 'POST', '/tasks'],
      [['browserAIPollTask', 'browserAICreateTask'], 'GET', '/tasks/{id}'],
      [['browserAIAppendInstructions'], 'POST', '/tasks/{id}/instructions'],
    ];
    for (const [activities, method, route] of expected) {
      const sent = requests(method, route);
      assert.ok(sent.length > 0, `${method} ${route} traced`);
      for (const request of sent) {
        const [, runActivity, startActivity, ...rest] = chain(request);
        const activity = runActivity?.replace(/^RunActivity:/, '') ?? '';
        assert.ok(activities.includes(activity), `${method} ${route} under ${runActivity}`);
        assert.deepEqual(
          [runActivity, startActivity, ...rest],
          [
            `RunActivity:${activity}`,
            `StartActivity:${activity}`,
            'RunWorkflow:browserTask',
            'StartWorkflow:browserTask',
          ],
        );
        assert.equal(request.kind, 2 /* SpanKind.CLIENT */);
        assert.equal(request.attributes['http.request.method'], method);
        assert.equal(request.attributes['url.template'], route);
        assert.equal(request.attributes['http.response.status_code'], 200);
        assert.equal(request.attributes['server.address'], new URL(stack.emulator.baseUrl).hostname);
      }
    }
    // Exactly the requests BrowserAI got for this task: none untraced, none traced twice.
    const executionId = result.executionId;
    assert.equal(requests('POST', '/tasks').length, 1);
    assert.equal(
      requests('GET', '/tasks/{id}').length,
      stack.emulator.count('GET', new RegExp(`^/tasks/${executionId}$`)),
    );
    assert.equal(requests('POST', '/tasks/{id}/instructions').length, 1, 'the code was sent once');

    // The signal is its own client call: its span and the workflow's handling of it are linked.
    const signal = spans.find((s) => s.name === 'SignalWorkflow:submitCode');
    const handled = spans.find((s) => s.name === 'HandleSignal:submitCode');
    assert.ok(signal && handled, 'the submitCode signal traced from the client into the workflow');
    assert.equal(parentOf(handled)?.name, 'SignalWorkflow:submitCode');

    // No code, token or instruction in any name, attribute or event. (Temporal's workflow spans
    // carry the workflow's info, search attributes included, so BrowserAIExecutionId shows there as
    // in the UI; the request spans carry route templates, never the path with the execution ID.)
    const text = JSON.stringify(
      spans.map((s) => ({
        name: s.name,
        attributes: s.attributes,
        events: s.events,
        status: s.status,
        resource: s.resource.attributes,
      })),
    );
    for (const [what, secret] of [
      ['the code', code],
      ['the API token', stack.emulator.apiToken],
      ['the instruction', instruction],
    ]) {
      assert.ok(!text.includes(secret), `${what} found in the spans`);
    }
    const requestSpans = inTrace.filter((s) => s.kind === 2 /* SpanKind.CLIENT */);
    assert.ok(
      !JSON.stringify(requestSpans.map((s) => [s.name, s.attributes])).includes(executionId),
      'a request span names the execution ID',
    );
  });

  test('settings: off unless OTEL_* asks; what cannot be honoured is refused with what to write', () => {
    const settings = (env: Record<string, string>) => {
      const problems: string[] = [];
      return { settings: tracingSettingsFrom(env, problems), problems };
    };
    assert.deepEqual(settings({}), { settings: undefined, problems: [] });
    assert.deepEqual(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).settings, { exporter: 'otlp' });
    assert.deepEqual(settings({ OTEL_TRACES_EXPORTER: 'console' }).settings, { exporter: 'console' });
    assert.deepEqual(
      settings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).settings,
      undefined,
    );
    assert.deepEqual(settings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }).settings, undefined);
    const zipkin = settings({ OTEL_TRACES_EXPORTER: 'zipkin' });
    assert.equal(zipkin.settings, undefined);
    assert.match(zipkin.problems[0]!, /use otlp/);
    const grpc = settings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    assert.match(grpc.problems[0]!, /^OTEL_EXPORTER_OTLP_PROTOCOL="grpc".*http\/protobuf/);
    const tracesGrpc = settings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
    });
    assert.match(
      tracesGrpc.problems[0]!,
      /^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="grpc"/,
      'names the variable that set it',
    );
  });

  test('the install command a missing package error gives matches the optional peers of package.json', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- package.json sits outside rootDir's compiled tree
    const { peerDependencies, peerDependenciesMeta } = require('../../package.json') as {
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    // The other optional peers are the Nexus service's (@temporalio/nexus, nexus-rpc: plugin.ts).
    const optional = Object.keys(peerDependenciesMeta).filter(
      (name) => peerDependenciesMeta[name]!.optional && !/nexus/.test(name),
    );
    // `@scope/name@range`: the name ends at the second `@`.
    const parsed = TRACING_PACKAGES.map((spec) => ({
      name: spec.slice(0, spec.indexOf('@', 1)),
      range: spec.slice(spec.indexOf('@', 1) + 1),
    }));
    assert.deepEqual(parsed.map((p) => p.name).sort(), optional.sort());
    for (const { name, range } of parsed) {
      if (!range.startsWith('<')) assert.equal(range, peerDependencies[name], `${name}'s range`);
    }
  });
});

describe('traces from OTEL_* in the worker and the CLI', () => {
  /** A stand-in OTLP/HTTP collector on loopback: keeps each export's protobuf body. */
  const exports: Buffer[] = [];
  let collector: Server;
  let env: TestWorkflowEnvironment;
  let emulator: BrowserAIEmulator;
  let worker: WorkerProcess | undefined;
  before(async () => {
    collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/v1/traces') exports.push(Buffer.concat(chunks));
        // An empty ExportTraceServiceResponse: everything accepted.
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    }).listen(0, '127.0.0.1');
    await once(collector, 'listening');
    [env, emulator] = await Promise.all([
      startTemporal(),
      BrowserAIEmulator.start({ queueMs: 100, defaultDurationMs: 800, ...emulatorOptionsFromEnv(process.env) }),
    ]);
  });
  after(async () => {
    worker?.kill();
    collector?.close();
    await emulator?.close();
    await env?.teardown();
  });

  test('OTEL_EXPORTER_OTLP_ENDPOINT alone turns tracing on: the CLI exports its start span, the worker the workflow, activity and request spans', async () => {
    const otel = {
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace,
      TEMPORAL_TASK_QUEUE: `traced-${Date.now()}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      OTEL_BSP_SCHEDULE_DELAY: '200',
    };
    worker = await startWorkerProcess({
      ...otel,
      BROWSERAI_BASE_URL: emulator.baseUrl,
      BROWSERAI_API_TOKEN: emulator.apiToken,
      WORKER_SHUTDOWN_GRACE_MS: '1000',
    });
    assert.match(
      worker.stdout,
      new RegExp(`traces: otlp http/protobuf to ${otel.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`),
    );

    const cli = require.resolve('../src/cli/main');
    const args = ['start', '--instruction', 'Read the traced title', '--project', 'demo', '--country', 'US', '--wait'];
    const { stdout } = await promisify(execFile)(process.execPath, [cli, ...args], {
      env: { ...process.env, ...otel },
    });
    assert.match(stdout, /finalized/);
    await worker.stop(); // exports what its batch processor still holds

    // Spans are protobuf-encoded; their names and the resources' service names are plain UTF-8 in it.
    const sent = (service: string) =>
      exports
        .filter((body) => body.includes(service))
        .map((body) => body.toString('latin1'))
        .join('');
    const fromCli = sent('browserai-temporal-cli');
    const fromWorker = sent('browserai-temporal-worker');
    assert.ok(fromCli.includes('StartWorkflow:browserTask'), 'the CLI exported its start span before exiting');
    for (const name of [
      'RunWorkflow:browserTask',
      'RunActivity:browserAICreateTask',
      'POST /tasks',
      'RunActivity:browserAIPollTask',
      'GET /tasks/{id}',
    ]) {
      assert.ok(fromWorker.includes(name), `the worker exported ${name}`);
    }
  });
});
