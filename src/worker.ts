// Wires the parts together: BrowserAI client -> activities, workflows bundle -> one Worker.
import type { DataConverter } from '@temporalio/common';
import { Runtime, type WorkerDeploymentOptions, type WorkerOptions } from '@temporalio/worker';
import { createWorker } from './create-worker';
import type { NexusServiceOptions } from './nexus/options';
import { workflowBundleFromEnv } from './workflow-bundle';
import { BrowserAIClient } from './browserai';
import { encryptedDataConverterFromEnv } from './codec/encryption-codec';
import { connectionOptions } from './config/temporal';
import { loadWorkerConfig, type WorkerDeploymentVersionConfig } from './config/worker';
import { codeLoopSecrets, describeCodeLoop } from './config/code-loop';
import { connectWhenReachable } from './connect-when-reachable';
import { announce, installWorkerRuntime, logFatalAfterFlush } from './telemetry/runtime';
import { recordBrowserAIRequest } from './telemetry/activity-metrics';
import { tracingFromEnv, type Tracing } from './telemetry/tracing';

export async function runWorkerFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadWorkerConfig(env);
  // Before anything creates a connection (which would create a default Runtime: default logger, no endpoint).
  const { metricsUrl } = installWorkerRuntime({
    metricsAddress: config.metricsAddress,
    log: { ...config.log, secrets: [config.browserai.apiToken, ...codeLoopSecrets(config.codeLoop)] },
  });
  const client = new BrowserAIClient({
    apiToken: config.browserai.apiToken,
    baseUrl: config.browserai.baseUrl,
    timeoutMs: config.browserai.requestTimeoutMs,
    maxResponseBytes: config.browserai.maxResponseBytes,
    maxRequestsPerSecond: config.browserai.maxRequestsPerSecond,
    onRequest: recordBrowserAIRequest,
  });
  const dataConverter = encryptedDataConverterFromEnv(env);
  // Opt-in by OTEL_*: Temporal's OpenTelemetryPlugin, with the BrowserAI request spans under its activity spans.
  const tracing = tracingFromEnv(env, 'browserai-temporal-worker');
  const workflowBundle = prebuiltBundle(env, dataConverter, tracing);
  const connection = await connectWhenReachable(connectionOptions(config.temporal));
  if (!connection) {
    announce('Stopped (SIGINT or SIGTERM) before Temporal could be reached; nothing to drain.');
    // The Runtime's signal handlers keep the process alive, with no worker for them to stop.
    Runtime.instance().flushLogs();
    process.exit(0);
  }
  const profile = config.temporal.profile; // the temporal.toml profile in use, if any
  try {
    const worker = await createWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      client,
      shutdownGraceTime: config.shutdownGraceMs,
      maxConcurrentActivityTaskExecutions: config.maxConcurrentActivities,
      ...(config.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: config.maxCachedWorkflows } : {}),
      dataConverter,
      workflowBundle,
      plugins: tracing ? [tracing.plugin] : [],
      totpSecrets: config.codeLoop.totpSecrets,
      webhooks: config.codeLoop.webhooks,
      nexusService: config.nexusService && config.nexusAllow,
      fleetLimit: config.fleetLimit,
      ...(config.deployment ? { workerDeploymentOptions: versionedAs(config.deployment) } : {}),
    });
    // The line scripts wait for: on stdout in text, an INFO line in JSON.
    announce(
      `browserai-temporal worker: task queue "${config.temporal.taskQueue}" on ${config.temporal.address} ` +
        `(namespace "${config.temporal.namespace}"${profile ? `, profile "${profile.name}" of ${profile.file}` : ''}), BrowserAI at ${client.baseUrl}` +
        (config.deployment
          ? `, deployment version ${config.deployment.deploymentName}.${config.deployment.buildId}`
          : '') +
        (config.nexusService ? `, Nexus service "browserai"${describeNexusAllow(config.nexusAllow)}` : '') +
        (config.fleetLimit ? `, fleet limit ${config.fleetLimit.maxRunning} running tasks` : '') +
        (metricsUrl ? `, metrics at ${metricsUrl}` : '') +
        describeCodeLoop(config.codeLoop) +
        (tracing ? `, traces: ${tracing.destination}` : ''),
      {
        taskQueue: config.temporal.taskQueue,
        namespace: config.temporal.namespace,
        temporalAddress: config.temporal.address,
        browserAIBaseUrl: client.baseUrl,
        metricsUrl,
        ...(config.deployment ?? {}),
      },
    );
    // Worker.run() handles SIGINT/SIGTERM itself: it stops polling, lets activities finish
    // within shutdownGraceTime, then resolves.
    await worker.run();
  } finally {
    try {
      await connection.close();
    } finally {
      await tracing?.shutdown(); // exports the spans still buffered
    }
  }
}

/**
 * Worker Deployment Versioning: the worker polls as this version, and the server routes each
 * workflow by its versioning behaviour. Every workflow of ours declares its own (browserTask and
 * runSavedTask AUTO_UPGRADE, the short saved-task calls PINNED; docs/design/versioning.md says why);
 * PINNED is the default only for a workflow that declares none, so it never meets code it did not
 * start on.
 */
function versionedAs(version: WorkerDeploymentVersionConfig): WorkerDeploymentOptions {
  return { useWorkerVersioning: true, version, defaultVersioningBehavior: 'PINNED' };
}

/**
 * The bundle built with the image (Dockerfile), so start-up does not bundle. Not with encryption
 * or tracing: the encrypting failure converter and the tracing workflow interceptors must be
 * bundled into the workflow code, which only a bundle made at start-up with them has.
 */
function prebuiltBundle(
  env: NodeJS.ProcessEnv,
  dataConverter: DataConverter | undefined,
  tracing: Tracing | undefined,
): WorkerOptions['workflowBundle'] {
  const bundle = workflowBundleFromEnv(env);
  const needs = [
    dataConverter && 'the encrypting failure converter (TEMPORAL_PAYLOAD_KEY)',
    tracing && 'the tracing interceptors (OTEL_*)',
  ].filter(Boolean);
  if (bundle && needs.length > 0) {
    announce(`Bundling the workflows with ${needs.join(' and ')} instead of loading WORKER_WORKFLOW_BUNDLE.`);
    return undefined;
  }
  return bundle;
}

if (require.main === module) {
  runWorkerFromEnv().catch((err) => {
    // In the format the worker logs in (a configuration error as its list of problems), token masked.
    logFatalAfterFlush(err);
    process.exit(1);
  });
}

/** What the Nexus service's callers may set, for the start line: names and flags, never a secret (there are none here). */
function describeNexusAllow(allowed: NexusServiceOptions): string {
  const parts = Object.entries(allowed).map(([option, value]) =>
    Array.isArray(value) ? `${option} ${value.join(' ')}` : option,
  );
  return parts.length > 0
    ? ` (callers may set: ${parts.join(', ')})`
    : ' (callers reach only their own tasks, no options beyond them)';
}
