// Temporal's worker metrics and ours on one Prometheus endpoint: the Runtime's exporter (Rust
// core) serves `/metrics` at the bind address. The Runtime that serves it is installed by
// runtime.ts, with the logger.
import type { MetricsExporterConfig } from '@temporalio/worker';
import { HISTOGRAM_BUCKETS } from './names';

/**
 * The `telemetryOptions.metrics` for a Prometheus endpoint at `bindAddress` (`host:port`), with
 * the histogram buckets our metrics need: for a process that installs its Runtime itself.
 */
export function prometheusMetricsOptions(bindAddress: string): MetricsExporterConfig {
  return { prometheus: { bindAddress, histogramBucketOverrides: { ...HISTOGRAM_BUCKETS } } };
}

/** The URL a scraper reads: `http://host:port/metrics` (an unspecified bind address shown as localhost). */
export function metricsUrl(bindAddress: string): string {
  const host = bindAddress.replace(/:\d+$/, '');
  const port = bindAddress.slice(host.length + 1);
  const shown = host === '0.0.0.0' || host === '[::]' ? 'localhost' : host;
  return `http://${shown}:${port}/metrics`;
}
