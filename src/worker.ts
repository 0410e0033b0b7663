// Wires the parts together: BrowserAI client -> activities, workflows bundle -> one Worker.
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from './activities';
import { BrowserAIClient } from './browserai';
import { payloadCodecFromEnv } from './codec/encryption-codec';
import { ConfigError, connectionOptions, loadWorkerConfig } from './config';

export interface BrowserAIWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  client: BrowserAIClient;
  shutdownGraceMs?: number;
  maxConcurrentActivities?: number;
  /** Workflows kept in memory between their activations; the others are replayed from history when they wake. */
  maxCachedWorkflows?: number;
  /** Set with a payload codec to encrypt history (see src/codec); starters must use the same. */
  dataConverter?: DataConverter;
  /** A prebuilt bundle (see `bundleWorkflowCode`) saves a few seconds per worker in tests. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

export function createWorker(options: BrowserAIWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: require.resolve('./workflows') }),
    activities: createActivities(options.client),
    dataConverter: options.dataConverter,
    // Every running task holds one poll activity for its whole life, and polls sleep most of the
    // time: the slots bound how many tasks one worker follows at once (2,000 measured, BENCHMARKS.md).
    maxConcurrentActivityTaskExecutions: options.maxConcurrentActivities ?? 5_000,
    // The SDK's default unless set: capping it at 500 cut 2,000 concurrent tasks' RSS only from
    // 1.17 GB to 1.10 GB and doubled end -> closed with replays (BENCHMARKS.md, scale).
    ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
    // On a deploy, polls in flight get this long to finish their request before they are
    // handed to another worker (they resume from their last heartbeat; no stop is sent).
    shutdownGraceTime: options.shutdownGraceMs ?? 10_000,
  });
}

export async function runWorkerFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadWorkerConfig(env);
  const client = new BrowserAIClient({
    apiToken: config.browserai.apiToken,
    baseUrl: config.browserai.baseUrl,
    timeoutMs: config.browserai.requestTimeoutMs,
    maxRequestsPerSecond: config.browserai.maxRequestsPerSecond,
  });
  const connection = await NativeConnection.connect(connectionOptions(config.temporal));
  const profile = config.temporal.profile; // the temporal.toml profile in use, if any
  try {
    const worker = await createWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      client,
      shutdownGraceMs: config.shutdownGraceMs,
      maxConcurrentActivities: config.maxConcurrentActivities,
      maxCachedWorkflows: config.maxCachedWorkflows,
      dataConverter: dataConverterFromEnv(env),
    });
    console.log(
      `browserai-temporal worker: task queue "${config.temporal.taskQueue}" on ${config.temporal.address} ` +
        `(namespace "${config.temporal.namespace}"${profile ? `, profile "${profile.name}" of ${profile.file}` : ''}), BrowserAI at ${client.baseUrl}`,
    );
    // Worker.run() handles SIGINT/SIGTERM itself: it stops polling, lets activities finish
    // within shutdownGraceTime, then resolves.
    await worker.run();
  } finally {
    await connection.close();
  }
}

/** Payload encryption when TEMPORAL_PAYLOAD_KEY is set; Temporal's default converter otherwise. */
export function dataConverterFromEnv(env: NodeJS.ProcessEnv = process.env): DataConverter | undefined {
  const codec = payloadCodecFromEnv(env);
  return codec ? { payloadCodecs: [codec] } : undefined;
}

if (require.main === module) {
  runWorkerFromEnv().catch((err) => {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  });
}
