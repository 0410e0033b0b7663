// BrowserAIPlugin: everything a team's own worker (or client) needs to run BrowserAI tasks, in
// one `plugins: [...]` entry (the package's `./plugin` entry, src/plugin.ts). On a worker it registers the BrowserAI activities (named
// `browserAI*`, so they cannot collide with the team's own) bound to their client, and our
// workflows when the worker has none of its own; with a payload codec it encrypts on workers and
// clients alike. The team's workflows file can re-export ours (`browserai-temporal/workflows`).
import type { PayloadCodec } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import { Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from './activities';
import {
  DEFAULT_LIMITER_TASK_QUEUE,
  FleetLimit,
  fleetLimiterActivities,
  type FleetLimitOptions,
} from './activities/fleet';
import { TaskDurations } from './activities/task-durations';
import { keepReadingDurations } from './activities/visibility-durations';
import { TotpKeys, type TotpSecrets } from './activities/totp';
import { WebhookSender, type WebhookDestination } from './activities/webhooks';
import { BrowserAIClient, type BrowserAIClientOptions } from './browserai';
import { encryptedFailureConverterPath } from './codec/encryption-codec';
import type { NexusServiceOptions } from './nexus/options';
import { warnOfMissingSearchAttributes } from './search-attributes-check';
import { recordBrowserAIRequest } from './telemetry/activity-metrics';
import { browserAIPreloadModules } from './workflow-bundle';

/**
 * Options of `BrowserAIPlugin`: the BrowserAI client, payload encryption, and the one-time-code loop's TOTP secrets
 * and webhooks.
 */
export interface BrowserAIPluginOptions {
  /**
   * The BrowserAI client the activities call, or the options to build one (`apiToken` at least).
   * Needed on a worker; a plugin given to a Client (for the codec) needs none.
   */
  browserAI?: BrowserAIClient | BrowserAIClientOptions;
  /**
   * Encrypts every payload (inputs, instructions, codes, results) in workflow history. Give the same
   * codec to the workers' and the clients' plugin; see `payloadCodecFromEnv` in
   * `browserai-temporal/codec`. Default: none. Added after any codec the worker already has.
   */
  payloadCodec?: PayloadCodec;
  /**
   * What the worker has learned of how long tasks of each kind run, which makes its polls cheap.
   * Default: a new one per plugin, so per worker process. Share one to share the learning.
   */
  durations?: TaskDurations;
  /**
   * Read what other workers learned (and this one, before a restart) from closed workflows in
   * visibility: at start, then every minute. Needs the search attributes BrowserAIKind and
   * BrowserAIEndMs registered. Default: true.
   */
  learnFromVisibility?: boolean;
  /**
   * TOTP secrets by name, for tasks that name one (`totpSecretName`): the worker types their codes
   * itself. Kept in the worker only; never put one in workflow input. Default: none (and
   * `runWorkerFromEnv` reads BROWSERAI_TOTP_SECRET_<NAME> and BROWSERAI_TOTP_SECRETS_FILE).
   */
  totpSecrets?: TotpSecrets;
  /**
   * Where this worker sends the webhook events tasks ask for (`webhook`), and how it signs them.
   * Default: none (events are dropped with a warning; `runWorkerFromEnv` reads BROWSERAI_WEBHOOK_*).
   */
  webhooks?: WebhookDestination;
  /**
   * Registers the `browserai` Nexus service (`browserai-temporal/nexus`) on the worker, so workflows
   * in other namespaces run tasks through a Nexus endpoint that targets this worker's namespace and
   * task queue: `runTask` (a `browserTask` workflow behind it: durable, and cancelling the operation
   * stops the task once), `submitCode` and `state`. Needs `@temporalio/nexus` (the version of your
   * `@temporalio/worker`). Default: off. `true` serves it with the defaults of
   * {@link NexusServiceOptions}: callers reach only the tasks they started, and may set none of the
   * task options that reach past their own task (TOTP secrets, code templates, webhooks, workflows to
   * notify, activity queues, their place in line, timeouts above 2 h); an object allows those it
   * names. Their tasks queue under the fairness key `nexus:<endpoint>`.
   */
  nexusService?: boolean | NexusServiceOptions;
  /**
   * A fleet-wide limit on BrowserAI tasks running at once (docs/fleet.md): each task waits for a
   * slot before its create, in order of its `priority` and `fairnessKey`, and frees it however it
   * ends. Held in a limiter workflow on this worker's namespace, shared by every worker with the
   * same account, on a task queue of its own that this worker serves too (a second, small worker
   * beside it). Give every worker of the fleet the same setting. Default: none (no limiter, and
   * nothing added to a task).
   */
  fleetLimit?: FleetLimitOptions;
}

/**
 * Everything a team's own worker (or client) needs to run BrowserAI tasks, in one `plugins: [...]` entry: the
 * BrowserAI activities (named `browserAI*`) bound to their client, our workflows when the worker has none, and payload
 * encryption on workers and clients alike.
 */
export class BrowserAIPlugin extends SimplePlugin {
  readonly #durations: TaskDurations;
  readonly #learnFromVisibility: boolean;
  readonly #fleetLimit: FleetLimitOptions | undefined;

  constructor(options: BrowserAIPluginOptions = {}) {
    const { payloadCodec } = options;
    const durations = options.durations ?? new TaskDurations();
    // Checked now, so a bad secret or URL stops the worker at start (messages name them, never show a secret).
    const codeLoop = {
      totp: new TotpKeys(options.totpSecrets),
      webhooks: options.webhooks ? new WebhookSender(options.webhooks) : undefined,
    };
    // `true` is the defaults: the service, with nothing beyond their own tasks allowed to its callers.
    const nexusService = options.nexusService === true ? {} : options.nexusService || undefined;
    super({
      name: 'browserai-temporal',
      // Built when a worker is configured, so a Client's plugin needs no BrowserAI token.
      activities: (existing) => {
        const client = browserAIClient(options.browserAI);
        const fleet = options.fleetLimit ? new FleetLimit(options.fleetLimit, client.accountKey) : undefined;
        return { ...existing, ...createActivities(client, durations, { ...codeLoop, fleet }) };
      },
      ...(nexusService
        ? {
            nexusServices: (existing) => [
              ...(existing ?? []),
              loadNexusHandler().browserAIServiceHandler(nexusService),
            ],
          }
        : {}),
      // With a codec, failure messages and stack traces are encrypted too (unless the worker already chose a failure converter).
      ...(payloadCodec
        ? {
            dataConverter: (existing) => ({
              ...existing,
              failureConverterPath: existing?.failureConverterPath ?? encryptedFailureConverterPath(),
              payloadCodecs: [...(existing?.payloadCodecs ?? []), payloadCodec],
            }),
          }
        : {}),
    });
    this.#durations = durations;
    this.#learnFromVisibility = options.learnFromVisibility ?? true;
    this.#fleetLimit = options.fleetLimit;
  }

  /**
   * At start, a warning if the namespace lacks any of our search attributes; while the worker runs,
   * its durations learn from what every worker's closed workflows published.
   */
  override async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    if (worker.client)
      void warnOfMissingSearchAttributes(worker.client.workflow, worker.options.namespace, Runtime.instance().logger);
    const client = this.#learnFromVisibility ? worker.client : undefined;
    const stop = new AbortController();
    const reading =
      client && keepReadingDurations(client.workflow, this.#durations, stop.signal, Runtime.instance().logger);
    const limiter = await this.#limiterWorkerBeside(worker);
    const limiterRun = limiter?.run().catch((err: unknown) => {
      // The tasks cannot start without their limiter: stop this worker too, so it is seen and restarted.
      Runtime.instance().logger.error('The fleet limiter worker stopped; stopping the task worker', {
        error: String(err),
      });
      if (worker.getState() === 'RUNNING') worker.shutdown();
      throw err;
    });
    try {
      return await super.runWorker(worker, next);
    } finally {
      stop.abort();
      await reading;
      if (limiter?.getState() === 'RUNNING') limiter.shutdown();
      await limiterRun;
    }
  }

  /**
   * Under a fleet limit, a small worker on the limiter's own task queue beside the task worker, so
   * the limiter's workflow tasks never wait behind the tasks' own (docs/design/fleet-limit.md). It
   * runs the limiter from the task worker's bundle when it has one (ours exports the limiter), and
   * otherwise bundles the limiter's own small entry.
   */
  async #limiterWorkerBeside(worker: Worker): Promise<Worker | undefined> {
    const fleet = this.#fleetLimit;
    const queue = fleet?.taskQueue ?? DEFAULT_LIMITER_TASK_QUEUE;
    if (!fleet || fleet.serveLimiter === false || queue === worker.options.taskQueue || !worker.connection) return;
    const { namespace, dataConverter, workflowBundle, workerDeploymentOptions } = worker.options;
    return Worker.create({
      connection: worker.connection,
      namespace,
      taskQueue: queue,
      dataConverter,
      ...(workflowBundle ? { workflowBundle } : { workflowsPath: require.resolve('./workflows/fleet') }),
      activities: fleetLimiterActivities(),
      // One limiter per account: a handful of workflows at most.
      maxCachedWorkflows: 10,
      shutdownGraceTime: worker.options.shutdownGraceTimeMs,
      ...(workerDeploymentOptions ? { workerDeploymentOptions } : {}),
    });
  }

  /** A worker with no workflows of its own runs ours: `browserTask`, `runSavedTask` and the saved-task calls. */
  override configureWorker(options: WorkerOptions): WorkerOptions {
    const configured = super.configureWorker(options);
    if (configured.workflowsPath || configured.workflowBundle) return configured;
    const preloadModules = [...(configured.bundlerOptions?.preloadModules ?? []), ...browserAIPreloadModules()];
    return {
      ...configured,
      workflowsPath: require.resolve('./workflows'),
      bundlerOptions: { ...configured.bundlerOptions, preloadModules },
    };
  }
}

function browserAIClient(given: BrowserAIPluginOptions['browserAI']): BrowserAIClient {
  if (given instanceof BrowserAIClient) return given;
  // Request metrics (browserai_requests_total, ...) unless the caller chose their own hook.
  if (given?.apiToken) return new BrowserAIClient({ onRequest: recordBrowserAIRequest, ...given });
  throw new TypeError(
    'BrowserAIPlugin on a worker needs `browserAI`: a BrowserAIClient, or options with your BrowserAI `apiToken` ' +
      '(e.g. `new BrowserAIPlugin({ browserAI: { apiToken: process.env.BROWSERAI_API_TOKEN! } })`).',
  );
}

/** The Nexus handler loads @temporalio/nexus, an optional peer: only a plugin with `nexusService` needs it. */
function loadNexusHandler(): typeof import('./nexus/handler') {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, loaded only for the Nexus service
    return require('./nexus/handler') as typeof import('./nexus/handler');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && /@temporalio\/nexus|nexus-rpc/.test(String(err)))
      throw new Error(
        'BrowserAIPlugin `nexusService: true` needs @temporalio/nexus: install the version of your @temporalio/worker ' +
          '(e.g. `npm install @temporalio/nexus@1.24.0`).',
        { cause: err },
      );
    throw err;
  }
}
