// Traces for the processes this package runs (the worker, the CLI), opt-in by OpenTelemetry's
// standard variables. One trace runs from a starter's start call through the workflow and its
// activities to each BrowserAI HTTP request:
//   StartWorkflow:browserTask (client) -> RunWorkflow:browserTask -> StartActivity:browserAI...
//   -> RunActivity:browserAI... -> POST /tasks (browserai/request-span.ts); a signal's SignalWorkflow span
//   links its HandleSignal in the workflow the same way.
// Temporal's OpenTelemetryPlugin carries the context through headers and exports the workflow's
// spans from the worker (workflow code cannot export), so it must be on the worker and the client.
//
// The OpenTelemetry SDK packages are optional peer dependencies: a team that traces its own worker
// already has them and adds Temporal's plugin itself (docs/observability.md, "Traces"); nothing here loads them
// unless tracing is on.
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { SimplePlugin } from '@temporalio/plugin';
import { ConfigError } from '../contract/errors';
import { PACKAGE_VERSION } from '../contract/version';

/** Tracing installed in this process: give `plugin` to the Worker and Client; `shutdown` flushes what is buffered. */
export interface Tracing {
  /** Temporal's OpenTelemetryPlugin, bound to this process's span processor and resource. */
  plugin: SimplePlugin;
  /** Where spans go, for a start-up banner (`otlp http/protobuf to ...`, `console`). */
  destination: string;
  /** Exports the spans still buffered and stops; call once, when the process is done. */
  shutdown(): Promise<void>;
}

/** What OTEL_* asks for: undefined when tracing is off (the default). */
export interface TracingSettings {
  exporter: 'otlp' | 'console';
}

type Env = Record<string, string | undefined>;

/**
 * Reads OpenTelemetry's standard variables: tracing is on when `OTEL_TRACES_EXPORTER` is `otlp` or
 * `console`, or when an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) and the exporter is not `none`; `OTEL_SDK_DISABLED=true`
 * turns it off. OTLP goes over http/protobuf only. Problems are pushed, each naming what to write.
 */
export function tracingSettingsFrom(env: Env, problems: string[]): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const named = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const exporter = named || (endpoint ? 'otlp' : 'none');
  if (exporter === 'none') return undefined;
  if (exporter !== 'otlp' && exporter !== 'console') {
    problems.push(
      `OTEL_TRACES_EXPORTER="${env.OTEL_TRACES_EXPORTER}" is not supported: use otlp (to an OpenTelemetry Collector or any OTLP backend: ` +
        'Jaeger, Tempo, Honeycomb, ...), console (spans printed, for debugging) or none. One exporter, not a list.',
    );
    return undefined;
  }
  if (exporter === 'otlp') {
    const variable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim()
      ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
      : 'OTEL_EXPORTER_OTLP_PROTOCOL';
    const protocol = (env[variable]?.trim() || 'http/protobuf').toLowerCase();
    if (protocol !== 'http/protobuf') {
      problems.push(
        `${variable}="${protocol}" is not supported: traces are exported over http/protobuf (the OTLP default; a ` +
          "collector's port 4318, e.g. OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318). Unset it or set http/protobuf.",
      );
      return undefined;
    }
  }
  return { exporter };
}

/**
 * Installs tracing as OTEL_* asks, or returns undefined when it is off. Throws a ConfigError for
 * settings it cannot honour, or when the OpenTelemetry packages are not installed. The OTLP
 * exporter reads its endpoint, headers and timeout (`OTEL_EXPORTER_OTLP_*`), the provider its
 * sampler (`OTEL_TRACES_SAMPLER`) and the resource `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES`
 * from the process environment, as every OpenTelemetry SDK does.
 */
export function tracingFromEnv(env: Env, defaultServiceName: string): Tracing | undefined {
  const problems: string[] = [];
  const settings = tracingSettingsFrom(env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  if (!settings) return undefined;
  const sdk = optionalPeer<typeof import('@opentelemetry/sdk-trace-node')>('@opentelemetry/sdk-trace-node');
  if (settings.exporter === 'console') {
    return installTracing({
      spanProcessor: new sdk.SimpleSpanProcessor(new sdk.ConsoleSpanExporter()),
      serviceName: defaultServiceName,
      destination: 'console',
    });
  }
  const { OTLPTraceExporter } = optionalPeer<typeof import('@opentelemetry/exporter-trace-otlp-proto')>(
    '@opentelemetry/exporter-trace-otlp-proto',
  );
  // The URL from `env` (the spec's rule: /v1/traces is added to the general endpoint only), so the
  // banner and the exporter agree even when `env` is not the process environment.
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() ||
    `${(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`;
  const exporter = new OTLPTraceExporter({ url });
  return installTracing({
    spanProcessor: new sdk.BatchSpanProcessor(exporter),
    serviceName: defaultServiceName,
    destination: `otlp http/protobuf to ${url}`,
  });
}

export interface InstallTracingOptions {
  /** Where finished spans go: a BatchSpanProcessor with an exporter, or (in tests) a SimpleSpanProcessor with an InMemorySpanExporter. */
  spanProcessor: SpanProcessor;
  /** `service.name` unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) says otherwise. */
  serviceName: string;
  /** For the banner; default `custom span processor`. */
  destination?: string;
}

/**
 * Registers a global tracer provider (with the AsyncLocalStorage context manager and the W3C
 * propagator) around `spanProcessor`, and builds Temporal's OpenTelemetryPlugin on the same
 * processor, so the workflow spans the worker exports and the activity and HTTP spans made in
 * this process land in one place. Once per process.
 */
export function installTracing({
  spanProcessor,
  serviceName,
  destination = 'custom span processor',
}: InstallTracingOptions): Tracing {
  const sdk = optionalPeer<typeof import('@opentelemetry/sdk-trace-node')>('@opentelemetry/sdk-trace-node');
  const { OpenTelemetryPlugin } = optionalPeer<typeof import('@temporalio/interceptors-opentelemetry')>(
    '@temporalio/interceptors-opentelemetry',
  );
  const resource = tracingResource(serviceName);
  const provider = new sdk.NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  return {
    plugin: new OpenTelemetryPlugin({ resource, spanProcessor }),
    destination,
    shutdown: () => provider.shutdown(),
  };
}

function tracingResource(serviceName: string): Resource {
  const { Resource, envDetectorSync } =
    optionalPeer<typeof import('@opentelemetry/resources')>('@opentelemetry/resources');
  // Later merges win: the environment's service name and attributes over our defaults.
  return Resource.default()
    .merge(new Resource({ 'service.name': serviceName, 'service.version': PACKAGE_VERSION }))
    .merge(envDetectorSync.detect());
}

/**
 * The packages tracing needs, as the error asks for them; optional peers, so a package user who does
 * not trace installs none of them. Kept in step with package.json's peerDependencies by test/tracing.test.ts.
 */
export const TRACING_PACKAGES = [
  '@temporalio/interceptors-opentelemetry@<your @temporalio/worker version>',
  '@opentelemetry/sdk-trace-node@^1.30.1',
  '@opentelemetry/resources@^1.30.1',
  '@opentelemetry/exporter-trace-otlp-proto@^0.57.2',
];

function optionalPeer<T>(name: string): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, loaded only when tracing is on
    return require(name) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    throw new ConfigError([
      `Tracing is on (OTEL_TRACES_EXPORTER / OTEL_EXPORTER_OTLP_ENDPOINT) but ${name} is not installed: ` +
        `npm install ${TRACING_PACKAGES.join(' ')} (or unset the OTEL_* variables).`,
    ]);
  }
}
