// createWorker: BrowserAIPlugin on `Worker.create`, with the defaults a task fleet needs and every
// Worker option passed through (the package's `./plugin` entry). runWorkerFromEnv (worker.ts) is
// this plus the environment.
import { Worker, type WorkerOptions } from '@temporalio/worker';
import type { BrowserAIClient } from './browserai';
import { BrowserAIPlugin, type BrowserAIPluginOptions } from './browserai-plugin';

/**
 * Everything `Worker.create` takes (interceptors, tuner, worker deployment options, plugins, ...),
 * plus the BrowserAI client. Options given here win over the defaults below.
 */
export type BrowserAIWorkerOptions = WorkerOptions & {
  /** The BrowserAI client the activities call. */
  client: BrowserAIClient;
  /** TOTP secrets by name (see `BrowserAIPluginOptions.totpSecrets`). */
  totpSecrets?: BrowserAIPluginOptions['totpSecrets'];
  /** The webhook destination (see `BrowserAIPluginOptions.webhooks`). */
  webhooks?: BrowserAIPluginOptions['webhooks'];
  /** Registers the `browserai` Nexus service, with what its callers may set (see BrowserAIPlugin's `nexusService`). Default: off. */
  nexusService?: BrowserAIPluginOptions['nexusService'];
  /** A fleet-wide limit on running tasks (see BrowserAIPlugin's `fleetLimit`). Default: none. */
  fleetLimit?: BrowserAIPluginOptions['fleetLimit'];
};

/** A worker for BrowserAI tasks: the BrowserAI plugin (our workflows and activities) with the defaults a task fleet needs. */
export function createWorker({
  client,
  totpSecrets,
  webhooks,
  nexusService,
  fleetLimit,
  ...options
}: BrowserAIWorkerOptions): Promise<Worker> {
  return Worker.create({
    // Every running task holds one poll activity for its whole life, and polls sleep most of the
    // time: the slots bound how many tasks one worker follows at once (BENCHMARKS.md, "Scale").
    // A tuner replaces slot counts altogether.
    ...(options.tuner ? {} : { maxConcurrentActivityTaskExecutions: 5_000 }),
    // On a deploy, polls in flight get this long to finish their request before they are
    // handed to another worker (they resume from their last heartbeat; no stop is sent).
    shutdownGraceTime: 10_000,
    // maxCachedWorkflows stays the SDK's unless set: capping it at 500 saved little memory at 2,000
    // concurrent tasks and slowed end -> closed with replays (docs/design/memory.md).
    ...options,
    plugins: [
      new BrowserAIPlugin({
        browserAI: client,
        totpSecrets,
        webhooks,
        nexusService,
        fleetLimit,
      }),
      ...(options.plugins ?? []),
    ],
  });
}
