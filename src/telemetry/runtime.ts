// The worker process's Temporal Runtime, installed once, before any connection or worker exists
// (either would create a default Runtime): our logger (text or JSON, at a level, secrets masked)
// with the core's (Rust) logs forwarded into it, so every line comes out in one format, and the
// Prometheus endpoint when an address is given.
import { IllegalStateError, type LogMetadata } from '@temporalio/common';
import { Runtime, type RuntimeOptions } from '@temporalio/worker';
import { createWorkerLogger, logFatal, type LogLevel, type WorkerLogger, type WorkerLogOptions } from './logging';
import { metricsUrl as metricsUrlOf, prometheusMetricsOptions } from './prometheus';

export interface WorkerRuntimeOptions {
  /** `host:port` for the Prometheus endpoint (`/metrics`); none when unset. */
  metricsAddress?: string;
  /** Format (text, json), level, and secrets to mask. */
  log?: WorkerLogOptions;
}

export interface WorkerRuntime {
  /** The URL to scrape, when an endpoint was asked for. */
  metricsUrl?: string;
  /** The logger every line goes through (`addSecrets` to mask more). */
  logger: WorkerLogger;
  /**
   * A start-up line of the entry point. Text: printed on stdout as it always was (scripts wait
   * for the banner there); JSON: an INFO line with `attributes`, like any other.
   */
  announce(message: string, attributes?: LogMetadata): void;
}

/**
 * The core's log filter for a level: the SDK's crates (temporalio_sdk_core, temporalio_client,
 * temporalio_common) at that level; the crates under them (HTTP/2, gRPC, connections) at INFO
 * for DEBUG (their DEBUG is a line per HTTP/2 frame) and at DEBUG for TRACE.
 */
export function coreLogFilter(level: LogLevel): { core: LogLevel; other: LogLevel } {
  return { core: level, other: level === 'TRACE' ? 'DEBUG' : level === 'DEBUG' ? 'INFO' : level };
}

/** The Runtime options for a logger: it, and the core's logs forwarded into it. */
export function loggingRuntimeOptions(logger: WorkerLogger): RuntimeOptions {
  return { logger, telemetryOptions: { logging: { filter: coreLogFilter(logger.level), forward: {} } } };
}

/**
 * Installs the process's Runtime with the worker's logger (core logs forwarded) and, when
 * `metricsAddress` is set, the Prometheus endpoint. Throws an error that says what to do when
 * the Runtime already exists (made by a connection or worker created earlier, or installed by
 * the application).
 */
export function installWorkerRuntime({ metricsAddress, log = {} }: WorkerRuntimeOptions = {}): WorkerRuntime {
  const logger = createWorkerLogger(log);
  const options = loggingRuntimeOptions(logger);
  if (metricsAddress)
    options.telemetryOptions = { ...options.telemetryOptions, metrics: prometheusMetricsOptions(metricsAddress) };
  try {
    Runtime.install(options);
  } catch (err) {
    if (!(err instanceof IllegalStateError)) {
      // e.g. "Failed to start prometheus metrics exporter: Address already in use (os error 98)"
      if (metricsAddress)
        throw new Error(
          `Cannot serve worker metrics at ${metricsAddress}: ${(err as Error).message}. Set WORKER_METRICS_ADDRESS to a free host:port, or to off.`,
          { cause: err },
        );
      throw err;
    }
    throw new Error(
      `Cannot install the worker's Runtime (its logger${metricsAddress ? ` and metrics at ${metricsAddress}` : ''}): the Temporal Runtime of this ` +
        `process already exists (${err.message}). Install it before any connection or worker is created, once: call runWorkerFromEnv ` +
        '(or installWorkerRuntime) first. If your application installs the Runtime itself, run BrowserAIPlugin (browserai-temporal/plugin) ' +
        'on a Worker of your own instead of runWorkerFromEnv, and add `telemetryOptions: { metrics: prometheusMetricsOptions(address) }` ' +
        'to its Runtime.install for the metrics.',
      { cause: err },
    );
  }
  const metricsUrl = metricsAddress ? metricsUrlOf(metricsAddress) : undefined;
  if (logger.format === 'json') routeProcessWarnings(logger);
  // The Runtime's logger: with the core's logs forwarded, a buffer that writes lines in time order.
  const runtimeLogger = Runtime.instance().logger;
  installed = {
    metricsUrl,
    logger,
    announce(message, attributes) {
      if (logger.format === 'json') runtimeLogger.info(message, attributes);
      else console.log(logger.mask(message));
    },
  };
  return installed;
}

let installed: WorkerRuntime | undefined;

/**
 * A start-up line of an entry point, through the worker Runtime installed in this process
 * ({@link WorkerRuntime.announce}); on stdout as it is when none was installed.
 */
export function announce(message: string, attributes?: LogMetadata): void {
  if (installed) installed.announce(message, attributes);
  else console.log(message);
}

/**
 * A fatal error's last words, after the lines the Runtime still holds (with the core's logs
 * forwarded it buffers them briefly, to write them in time order): nothing logged before the
 * failure is lost to the `process.exit` that follows, nor written after it.
 */
export function logFatalAfterFlush(...args: Parameters<typeof logFatal>): void {
  if (installed) {
    try {
      Runtime.instance().flushLogs();
    } catch {
      // the last words matter more than the lines before them
    }
  }
  logFatal(...args);
}

/** Node's own warnings (deprecations, experimental features) as log lines rather than raw text on stderr. */
function routeProcessWarnings(logger: WorkerLogger): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning) => logger.warn(`${warning.name}: ${warning.message}`, { warning }));
}
