// Temporal's worker metrics and ours on one Prometheus endpoint: the Runtime's exporter (Rust
// core) serves `/metrics` at the bind address. The Runtime is process-wide and must be installed
// before anything creates a connection or a worker (which would create a default one).
import { IllegalStateError } from '@temporalio/common';
import { Runtime, type MetricsExporterConfig, type RuntimeOptions } from '@temporalio/worker';
import { HISTOGRAM_BUCKETS } from './names';

/**
 * The `telemetryOptions.metrics` for a Prometheus endpoint at `bindAddress` (`host:port`), with
 * the histogram buckets our metrics need: for a process that installs its Runtime itself.
 */
export function prometheusMetricsOptions(bindAddress: string): MetricsExporterConfig {
  return { prometheus: { bindAddress, histogramBucketOverrides: { ...HISTOGRAM_BUCKETS } } };
}

/**
 * Installs the Temporal Runtime with a Prometheus endpoint at `bindAddress` (other Runtime
 * options, such as a logger, may be passed along). Returns the URL to scrape. Throws an error
 * that says what to do when the Runtime already exists in this process (installed by the
 * application, or created by a connection or worker made before this call).
 */
export function installPrometheusRuntime(bindAddress: string, options: RuntimeOptions = {}): string {
  try {
    Runtime.install({
      ...options,
      telemetryOptions: { ...options.telemetryOptions, metrics: prometheusMetricsOptions(bindAddress) },
    });
  } catch (err) {
    if (!(err instanceof IllegalStateError)) {
      // e.g. "Failed to start prometheus metrics exporter: Address already in use (os error 98)"
      throw new Error(`Cannot serve worker metrics at ${bindAddress}: ${(err as Error).message}. Set WORKER_METRICS_ADDRESS to a free host:port, or to off.`);
    }
    throw new Error(
      `Cannot serve worker metrics at ${bindAddress}: the Temporal Runtime of this process already exists (${err.message}). ` +
        'Install it before any connection or worker is created, once: if your application installs it, add ' +
        '`telemetryOptions: { metrics: prometheusMetricsOptions(address) }` to its Runtime.install and run BrowserAIPlugin ' +
        '(browserai-temporal/plugin) on a Worker of your own instead of runWorkerFromEnv.',
    );
  }
  return metricsUrl(bindAddress);
}

/** The URL a scraper reads: `http://host:port/metrics` (an unspecified bind address shown as localhost). */
export function metricsUrl(bindAddress: string): string {
  const host = bindAddress.replace(/:\d+$/, '');
  const port = bindAddress.slice(host.length + 1);
  const shown = host === '0.0.0.0' || host === '[::]' ? 'localhost' : host;
  return `http://${shown}:${port}/metrics`;
}
