// The worker's side of the fleet-wide limit: which limiter workflow this worker's tasks share and
// where it runs, the acquire a create makes before it sends anything, and the activities the limiter
// runs (its check of its holders, its census). Configured per worker (BROWSERAI_FLEET_LIMIT, the
// plugin's `fleetLimit`); a worker without it adds nothing to a task: no acquire, no release, no limiter.
import { CancelledFailure, Context, log } from '@temporalio/activity';
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { BrowserAIStatus } from '../contract/search-attributes';
import {
  acquireSlotsUpdate,
  fleetLimitsProblems,
  fleetSlotQuery,
  type Census,
  releaseSlotSignal,
  WAITING_FOR_SLOT,
  type FleetLimits,
  type SlotAnswer,
  type SlotAsk,
  type SlotHolder,
} from '../contract/fleet-messages';

/** The fleet-wide limit on BrowserAI tasks running at once, as a worker is configured with it. */
export interface FleetLimitOptions {
  /**
   * At most this many BrowserAI tasks run at once across every worker that shares the limiter
   * (same account, same namespace); a task waits for a slot before its create. 1 to 100,000. A
   * limiter that runs already keeps its own limits: change them with its `browserAISetFleetLimits`
   * update (docs/fleet.md, "Changing the limit").
   */
  maxRunning: number;
  /**
   * Lower limits for single projects: `{ shop: 5 }`, and `'*'` for every project not named.
   * Default: none (the account limit alone).
   */
  perProject?: Record<string, number>;
  /**
   * How often the limiter checks that the tasks holding slots still run (a task terminated by an
   * operator frees its slot within about this long), and how soon a waiting task that heard nothing
   * asks again, in ms. Default 60 s (1 s to 1 h).
   */
  checkIntervalMs?: number;
  /**
   * Names the limiter (its workflow ID is `browserai-fleet-limiter-<account>`): workers with the
   * same account share one limit. Default: derived from the API token and base URL (a hash; the
   * token itself never leaves the worker), so every worker with the same token shares it.
   */
  account?: string;
  /**
   * The task queue the limiter workflow and its activities run on. Default `browserai-fleet-limiter`,
   * a queue of its own, so the limiter's workflow tasks never wait behind the tasks' own.
   */
  taskQueue?: string;
  /**
   * Whether this worker also serves the limiter's task queue (the plugin runs a second, small worker
   * on it beside this one). Default true: every worker with a fleet limit serves it, so the limiter
   * runs wherever tasks run. Set false for workers that must not, and serve the queue elsewhere.
   */
  serveLimiter?: boolean;
}

export const DEFAULT_CHECK_INTERVAL_MS = 60_000;
/** The limiter's own task queue, shared by every worker with a fleet limit. */
export const DEFAULT_LIMITER_TASK_QUEUE = 'browserai-fleet-limiter';
const LIMITER_ID_PREFIX = 'browserai-fleet-limiter-';
/** The limiter's workflow type (workflows/fleet/limiter.ts), by name: activities load no workflow code. */
const LIMITER_WORKFLOW_TYPE = 'browserAIFleetLimiter';
/** The workflows that hold slots (they run a task session): a new limiter's census asks them. */
const TASK_WORKFLOW_TYPES = ['browserTask', 'runSavedTask'];
/** The most acquires in one update: well under Temporal's 2 MB payload limit. */
const MAX_BATCH = 500;
/** Queries (and describes) a census or a holder check sends at once: it must not flood the frontend. */
const AT_ONCE = 8;

/** Problems of the options, for the worker to refuse at start. */
export function fleetLimitProblems(options: FleetLimitOptions): string[] {
  const problems = fleetLimitsProblems(options);
  if (options.account !== undefined && !/^[A-Za-z0-9._-]{1,200}$/.test(options.account))
    problems.push('fleet limit account must be 1-200 letters, digits, dots, dashes or underscores');
  if (options.taskQueue !== undefined && !/^\S{1,1000}$/.test(options.taskQueue))
    problems.push('fleet limit taskQueue must be 1-1000 characters without spaces');
  return problems;
}

/** One worker's acquire that has not been sent yet, and how its caller hears the answer. */
interface Asking {
  ask: SlotAsk;
  resolve: (a: SlotAnswer) => void;
  reject: (e: unknown) => void;
}

/** A worker's fleet limit: the limiter it shares, where it runs, and the limits this worker was given. */
export class FleetLimit {
  readonly limiterId: string;
  readonly limits: FleetLimits;
  readonly taskQueue: string;
  readonly serveLimiter: boolean;

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
    this.taskQueue = options.taskQueue ?? DEFAULT_LIMITER_TASK_QUEUE;
    this.serveLimiter = options.serveLimiter ?? true;
  }

  /**
   * Asks the limiter (starting it if none runs) for a slot: held now, or a place in line. Asking
   * again for a workflow that holds one or waits changes nothing, so a retried create is safe.
   * The creates of this worker that ask at the same time go in one update: Temporal lets a
   * workflow have only 10 updates in flight, so a burst of single acquires would be refused.
   *
   * Gives up at `deadlineMs` (this worker's clock) or when `signal` aborts. An acquire given up
   * before its update was sent is never sent; one already on its way may still be granted, and
   * the caller's next ask finds the slot held.
   */
  acquire(client: Client, ask: SlotAsk, deadlineMs: number, signal: AbortSignal): Promise<SlotAnswer> {
    return new Promise<SlotAnswer>((resolve, reject) => {
      const asking: Asking = { ask, resolve, reject };
      const giveUp = (reason: unknown) => {
        const queued = this.#asking.indexOf(asking);
        if (queued >= 0) this.#asking.splice(queued, 1);
        reject(reason);
      };
      const timer = setTimeout(
        () =>
          giveUp(
            new Error(
              `The fleet limiter ${this.limiterId} did not answer the acquire in time: is a worker serving its task queue "${this.taskQueue}"?`,
            ),
          ),
        Math.max(0, deadlineMs - Date.now()),
      );
      const onAbort = () => giveUp(new CancelledFailure('The acquire was cancelled with its activity'));
      signal.addEventListener('abort', onAbort, { once: true });
      const settle =
        <T>(fn: (value: T) => void) =>
        (value: T) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          fn(value);
        };
      asking.resolve = settle(resolve);
      asking.reject = settle(reject);
      if (signal.aborted) return onAbort();
      this.#asking.push(asking);
      void this.#send(client);
    });
  }

  readonly #asking: Asking[] = [];
  #sending = false;
  /** Limits in force that differ from this worker's, warned of once each. */
  readonly #mismatchesWarned = new Set<string>();

  async #send(client: Client): Promise<void> {
    if (this.#sending) return;
    this.#sending = true;
    try {
      while (this.#asking.length > 0) {
        const batch = this.#asking.splice(0, MAX_BATCH);
        try {
          const { answers, limits } = await client.workflow.executeUpdateWithStart(acquireSlotsUpdate, {
            args: [{ asks: batch.map((asking) => asking.ask), limits: this.limits }],
            startWorkflowOperation: new WithStartWorkflowOperation(LIMITER_WORKFLOW_TYPE, {
              workflowId: this.limiterId,
              taskQueue: this.taskQueue,
              workflowIdConflictPolicy: 'USE_EXISTING',
              args: [this.limits],
              staticSummary: 'BrowserAI fleet limiter: how many BrowserAI tasks run at once',
            }),
          });
          this.#warnOfMismatch(limits);
          batch.forEach((asking, i) => asking.resolve(answers[i]!));
        } catch (err) {
          // Each create's activity retries on its own.
          for (const asking of batch) asking.reject(err);
        }
      }
    } finally {
      this.#sending = false;
    }
  }

  #warnOfMismatch(inForce: FleetLimits): void {
    const key = JSON.stringify(inForce);
    if (key === JSON.stringify(this.limits) || this.#mismatchesWarned.has(key)) return;
    this.#mismatchesWarned.add(key);
    log.warn(
      "This worker is configured with other fleet limits than the limiter enforces; the limiter's hold. " +
        'Change them with the limiter\'s browserAISetFleetLimits update (docs/fleet.md, "Changing the limit"), ' +
        'and configure every worker alike',
      { limiterId: this.limiterId, inForce, configured: this.limits },
    );
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

/**
 * The IDs of the holders that no longer run: closed, or their workflow ID now names another
 * workflow. A paused workflow still runs, and keeps its slot.
 */
export async function holdersGone(
  client: Client,
  holders: { holderId: string; workflowId: string; runId: string }[],
): Promise<string[]> {
  const gone: string[] = [];
  await eachAtOnce(holders, async (holder) => {
    try {
      const described = await client.workflow.getHandle(holder.workflowId).describe();
      const firstRunId = described.raw.workflowExecutionInfo?.firstRunId;
      const sameWorkflow = !firstRunId || `${holder.workflowId}/${firstRunId}` === holder.holderId;
      if (CLOSED.has(described.status.name) || !sameWorkflow) gone.push(holder.holderId);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) gone.push(holder.holderId);
      else throw err;
    }
  });
  return gone;
}

const CLOSED = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TERMINATED', 'CONTINUED_AS_NEW', 'TIMED_OUT']);

/**
 * A new limiter's census: the tasks that hold a slot of `limiterId` although it has just started,
 * and those waiting in its line. Only after another limiter under that ID was lost (terminated,
 * cancelled, failed: any other run under its ID) can any exist; then every running task is asked (a
 * query each). A task whose create is on its way counts provisionally (the lost limiter may have
 * granted it a moment before), and one that cannot answer counts as holding: one too many only
 * delays a grant until it ends. The waiters go back in line at once, so that none has to ask again
 * before its turn (a waiter far back asks rarely: limiter.ts).
 */
export async function censusOf(client: Client, limiterId: string, runId: string): Promise<Census> {
  // Any other run under the limiter's ID: a lineage before this one (`runId`, the census's own, has
  // none). Not "a closed run": the close of a run terminated a moment ago may not be visible yet.
  let before = false;
  for await (const run of client.workflow.list({ query: `WorkflowId = '${limiterId}'` })) {
    if (run.runId !== runId) {
      before = true;
      break;
    }
  }
  if (!before) return { holders: [], waiters: [] };
  const running = await runningTasks(client);
  const holders: SlotHolder[] = [];
  const waiters: Census['waiters'] = [];
  const now = Date.now();
  await eachAtOnce(running, async ({ workflowId, runId }) => {
    const counted = { workflowId, runId, sinceMs: now, waitedMs: 0 };
    try {
      const slot = await client.workflow.getHandle(workflowId, runId).query(fleetSlotQuery);
      if (slot.held && slot.limiterId === limiterId)
        holders.push({ ...counted, holderId: slot.holderId, project: slot.project });
      else if (slot.creating && !slot.held)
        holders.push({ ...counted, holderId: slot.holderId, project: slot.project, provisional: true });
      else if (slot.waiting && slot.limiterId === limiterId) waiters.push(slot.waiting);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return;
      const described = await client.workflow.getHandle(workflowId, runId).describe();
      if (CLOSED.has(described.status.name)) return;
      const firstRunId = described.raw.workflowExecutionInfo?.firstRunId ?? runId;
      log.warn('A running task did not say whether it holds a fleet slot; counted as holding one until it ends', {
        workflowId,
        error: String(err),
      });
      holders.push({ ...counted, holderId: `${workflowId}/${firstRunId}`, project: '' });
    }
  });
  return { holders, waiters };
}

/** The running task workflows (and `where`), heartbeating as the listing goes. */
async function runningTasks(client: Client, where?: string): Promise<{ workflowId: string; runId: string }[]> {
  const types = TASK_WORKFLOW_TYPES.map((type) => `'${type}'`).join(', ');
  const query = `WorkflowType IN (${types}) AND ExecutionStatus = 'Running'${where ? ` AND ${where}` : ''}`;
  const found = [];
  for await (const { workflowId, runId } of client.workflow.list({ query })) {
    found.push({ workflowId, runId });
    Context.current().heartbeat();
  }
  return found;
}

/**
 * The tasks waiting in `limiterId`'s line, for a limiter whose continue-as-new left the back of its
 * line out (limiter.ts): those the visibility store shows `waiting_for_slot` are asked (a query
 * each), or, without the project's search attributes, every running task.
 */
export async function waitersOf(client: Client, limiterId: string): Promise<Census['waiters']> {
  const tasks = await runningTasks(client, `${BrowserAIStatus.name} = '${WAITING_FOR_SLOT}'`).catch(() =>
    runningTasks(client),
  );
  const waiters: Census['waiters'] = [];
  await eachAtOnce(tasks, async ({ workflowId, runId }) => {
    const slot = await client.workflow
      .getHandle(workflowId, runId)
      .query(fleetSlotQuery)
      .catch(() => undefined); // closed meanwhile, or cannot answer: it asks again itself
    if (slot?.waiting && slot.limiterId === limiterId) waiters.push(slot.waiting);
  });
  return waiters;
}

/**
 * The activities the limiter workflow runs (on its own task queue): its check of its holders, its
 * census when it starts, and its look for the waiters it left out. They need only the worker's
 * Temporal client.
 */
export function fleetLimiterActivities() {
  return {
    /** The fleet limiter's check: which of its holders no longer run (their slots are freed). */
    async browserAIFleetCheckHolders(
      holders: { holderId: string; workflowId: string; runId: string }[],
    ): Promise<string[]> {
      return holdersGone(Context.current().client, holders);
    },

    /** A new fleet limiter's census: the tasks that still hold slots a lost limiter granted. */
    async browserAIFleetCensus(input: { limiterId: string; runId: string }): Promise<Census> {
      return censusOf(Context.current().client, input.limiterId, input.runId);
    },
    /** The fleet limiter's look for the waiters its continue-as-new left out (they get back in line). */
    async browserAIFleetWaiters(input: { limiterId: string }): Promise<Census['waiters']> {
      return waitersOf(Context.current().client, input.limiterId);
    },
  };
}

/** Runs `each` over `items`, AT_ONCE at a time, heartbeating as it goes. */
async function eachAtOnce<T>(items: T[], each: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
      Context.current().heartbeat();
      await each(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, items.length) }, worker));
}
