// The worker's side of the fleet-wide limit: which limiter workflow this worker's tasks share,
// the acquire a create makes before it sends anything, and the check the limiter runs on its
// holders. Configured per worker (BROWSERAI_FLEET_LIMIT, the plugin's `fleetLimit`); a worker
// without it adds nothing to a task: no acquire, no release, no limiter.
import { Context, log } from '@temporalio/activity';
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  acquireSlotsUpdate,
  releaseSlotSignal,
  type FleetLimits,
  type SlotAnswer,
  type SlotRequest,
} from '../contract/fleet-messages';

/** The fleet-wide limit on BrowserAI tasks running at once, as a worker is configured with it. */
export interface FleetLimitOptions {
  /**
   * At most this many BrowserAI tasks run at once across every worker that shares the limiter
   * (same account, same namespace); a task waits for a slot before its create. 1 to 100,000.
   */
  maxRunning: number;
  /**
   * Lower limits for single projects: `{ shop: 5 }`, and `'*'` for every project not named.
   * Default: none (the account limit alone).
   */
  perProject?: Record<string, number>;
  /**
   * How often the limiter checks that the tasks holding slots still run, in ms: a task terminated
   * by an operator frees its slot within about this long. Default 60 s (1 s to 1 h).
   */
  checkIntervalMs?: number;
  /**
   * Names the limiter (its workflow ID is `browserai-fleet-limiter-<account>`): workers with the
   * same account share one limit. Default: derived from the API token and base URL (a hash; the
   * token itself never leaves the worker), so every worker with the same token shares it.
   */
  account?: string;
  /** Task queue the limiter workflow runs on. Default: the worker's own. */
  taskQueue?: string;
}

export const DEFAULT_CHECK_INTERVAL_MS = 60_000;
const LIMITER_ID_PREFIX = 'browserai-fleet-limiter-';
/** The limiter's workflow type (workflows/fleet/limiter.ts), by name: activities load no workflow code. */
const LIMITER_WORKFLOW_TYPE = 'browserAIFleetLimiter';
/** The most acquires in one update: well under Temporal's 2 MB payload limit. */
const MAX_BATCH = 500;

/** Problems of the options, for the worker to refuse at start. */
export function fleetLimitProblems(options: FleetLimitOptions): string[] {
  const problems: string[] = [];
  const count = (value: unknown) => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 100_000;
  if (!count(options.maxRunning))
    problems.push(`fleet limit maxRunning must be an integer from 1 to 100000 (got ${String(options.maxRunning)})`);
  for (const [project, limit] of Object.entries(options.perProject ?? {})) {
    if (!count(limit))
      problems.push(`fleet limit of project ${project} must be an integer from 1 to 100000 (got ${String(limit)})`);
  }
  const check = options.checkIntervalMs;
  if (check !== undefined && !(Number.isInteger(check) && check >= 1_000 && check <= 3_600_000))
    problems.push(`fleet limit checkIntervalMs must be an integer from 1000 to 3600000 (got ${String(check)})`);
  if (options.account !== undefined && !/^[A-Za-z0-9._-]{1,200}$/.test(options.account))
    problems.push('fleet limit account must be 1-200 letters, digits, dots, dashes or underscores');
  return problems;
}

/** A worker's fleet limit: the limiter it shares and the limits it sends with every acquire. */
export class FleetLimit {
  readonly limiterId: string;
  readonly limits: FleetLimits;
  readonly taskQueue: string | undefined;

  /** `accountKey`: the BrowserAI client's (a hash of its base URL and token), unless `options.account` names one. */
  constructor(options: FleetLimitOptions, accountKey: string) {
    const problems = fleetLimitProblems(options);
    if (problems.length > 0) throw new TypeError(`Invalid fleetLimit: ${problems.join('; ')}`);
    const account = options.account ?? accountKey;
    this.limiterId = LIMITER_ID_PREFIX + account;
    this.limits = {
      maxRunning: options.maxRunning,
      ...(options.perProject ? { perProject: { ...options.perProject } } : {}),
      checkIntervalMs: options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS,
    };
    this.taskQueue = options.taskQueue;
  }

  /**
   * Asks the limiter (starting it if none runs) for a slot: held now, or a place in line. Asking
   * again for a workflow that holds one or waits changes nothing, so a retried create is safe.
   * The creates of this worker that ask at the same time go in one update: Temporal lets a
   * workflow have only 10 updates in flight, so a burst of single acquires would be refused.
   */
  acquire(client: Client, request: SlotRequest, workflowTaskQueue: string): Promise<SlotAnswer> {
    return new Promise<SlotAnswer>((resolve, reject) => {
      this.#asking.push({ request, resolve, reject });
      void this.#send(client, workflowTaskQueue);
    });
  }

  readonly #asking: { request: SlotRequest; resolve: (a: SlotAnswer) => void; reject: (e: unknown) => void }[] = [];
  #sending = false;

  async #send(client: Client, workflowTaskQueue: string): Promise<void> {
    if (this.#sending) return;
    this.#sending = true;
    try {
      while (this.#asking.length > 0) {
        const batch = this.#asking.splice(0, MAX_BATCH);
        try {
          const answers = await client.workflow.executeUpdateWithStart(acquireSlotsUpdate, {
            args: [{ requests: batch.map((asked) => asked.request), limits: this.limits }],
            startWorkflowOperation: new WithStartWorkflowOperation(LIMITER_WORKFLOW_TYPE, {
              workflowId: this.limiterId,
              taskQueue: this.taskQueue ?? workflowTaskQueue,
              workflowIdConflictPolicy: 'USE_EXISTING',
              args: [this.limits],
              staticSummary: 'BrowserAI fleet limiter: how many BrowserAI tasks run at once',
            }),
          });
          batch.forEach((asked, i) => asked.resolve(answers[i]!));
        } catch (err) {
          // Each create's activity retries on its own.
          for (const asked of batch) asked.reject(err);
        }
      }
    } finally {
      this.#sending = false;
    }
  }

  /** Frees a slot a create took but will never use (the create was refused for good). */
  async release(client: Client, holderId: string): Promise<void> {
    try {
      await client.workflow.getHandle(this.limiterId).signal(releaseSlotSignal, { holderId });
    } catch (err) {
      // The limiter's check frees it within checkIntervalMs anyway, once the workflow has ended.
      log.warn('Could not release the fleet slot of a refused create', { holderId, error: String(err) });
    }
  }
}

/** The IDs of the holders that no longer run: closed, or their workflow ID now names another workflow. */
export async function holdersGone(
  client: Client,
  holders: { holderId: string; workflowId: string; runId: string }[],
): Promise<string[]> {
  const gone: string[] = [];
  const queue = [...holders];
  const check = async () => {
    for (let holder = queue.shift(); holder; holder = queue.shift()) {
      Context.current().heartbeat();
      try {
        const described = await client.workflow.getHandle(holder.workflowId).describe();
        const firstRunId = described.raw.workflowExecutionInfo?.firstRunId;
        const sameWorkflow = !firstRunId || `${holder.workflowId}/${firstRunId}` === holder.holderId;
        if (described.status.name !== 'RUNNING' || !sameWorkflow) gone.push(holder.holderId);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) gone.push(holder.holderId);
        else throw err;
      }
    }
  };
  // A few at a time: a limiter with thousands of holders must not flood the frontend.
  await Promise.all(Array.from({ length: Math.min(8, holders.length) }, check));
  return gone;
}
