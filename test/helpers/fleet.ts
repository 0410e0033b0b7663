// What the fleet-limit test files share: worker processes under one fleet limit on a real dev
// server, against the emulator over HTTP, and the questions they ask of it (the limiter's state,
// a task's slot, the creates the emulator got for a task).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkerChild, workerEnvironment } from '../../dev/worker-child';
import { limiterStateQuery, type LimiterState } from '../../src/contract/fleet-messages';
import type { BrowserTaskInput } from '../../src/contract/input';
import { stateQuery } from '../../src/contract/messages';
import type { BrowserAIEmulator } from '../../src/emulator';
import { BrowserTasks } from '../../src/starters/tasks';
import { eventually, taskInput } from './stack';

const CREATE = /^\/tasks$/;

/** One test file's fleet: its account (so its own limiter), project, task queue and worker processes. */
export class TestFleet {
  readonly account = `test-${randomUUID().slice(0, 8)}`;
  readonly limiterId = `browserai-fleet-limiter-${this.account}`;
  readonly project = `fleet-${randomUUID().slice(0, 8)}`;
  readonly taskQueue = `fleet-${randomUUID()}`;
  readonly tasks: BrowserTasks;
  workers: WorkerChild[] = [];

  constructor(
    readonly env: TestWorkflowEnvironment,
    readonly emulator: BrowserAIEmulator,
    /** The workflow bundle the workers load (a worker that bundles at start takes half a minute here). */
    private readonly bundlePath: string,
    /** BROWSERAI_FLEET_* and any other variable every worker gets. */
    private readonly workerVariables: Record<string, string>,
  ) {
    this.tasks = new BrowserTasks(env.client, this.taskQueue);
  }

  /** A worker process with the fleet's variables (and `extra`), on `queue` (default the fleet's). */
  startWorker(extra: Record<string, string> = {}, queue = this.taskQueue): WorkerChild {
    const worker = new WorkerChild(
      workerEnvironment({
        temporalAddress: this.env.address,
        namespace: this.env.namespace,
        taskQueue: queue,
        browserAIBaseUrl: this.emulator.baseUrl,
        browserAIToken: this.emulator.apiToken,
        shutdownGraceMs: 500,
        extra: {
          WORKER_WORKFLOW_BUNDLE: this.bundlePath,
          BROWSERAI_FLEET_ACCOUNT: this.account,
          ...this.workerVariables,
          ...extra,
        },
      }),
    );
    this.workers.push(worker);
    return worker;
  }

  async startWorkers(count: number): Promise<void> {
    const started = Array.from({ length: count }, () => this.startWorker());
    const ready = await Promise.all(started.map((w) => w.ready));
    assert.ok(ready.every(Boolean), `a worker did not start:\n${started.flatMap((w) => w.outputTail).join('\n')}`);
  }

  async killWorkers(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.signal('SIGKILL', 5_000)));
    this.workers = [];
  }

  /** The limiter's state, once it runs (the first acquire starts it). */
  limiter(): Promise<LimiterState> {
    return eventually('the limiter answers', () =>
      this.env.client.workflow
        .getHandle(this.limiterId)
        .query(limiterStateQuery)
        .catch(() => undefined),
    );
  }

  /** The test's own task: `name` in its instruction, so the emulator's requests say whose they are. */
  input(name: string, seconds: number, overrides: Partial<BrowserTaskInput> = {}): BrowserTaskInput {
    return taskInput({
      project: this.project,
      instructions: [{ action: `Crawl ${name} [duration=${seconds}s]` }],
      ...overrides,
    });
  }

  start(name: string, seconds: number, overrides: Partial<BrowserTaskInput> = {}, workflowId?: string) {
    return this.tasks.start(this.input(name, seconds, overrides), {
      workflowId: workflowId ?? `fleet-${name}-${randomUUID()}`,
    });
  }

  /** How many creates the emulator got for the task `name`. */
  creates(name: string): number {
    return this.emulator.requests.filter(
      (r) => r.method === 'POST' && CREATE.test(r.path) && JSON.stringify(r.body).includes(`Crawl ${name} `),
    ).length;
  }

  async noSlotHeld(): Promise<void> {
    await eventually('no fleet slot held', async () => {
      const state = await this.limiter();
      return state.held === 0 && state.waiting === 0;
    });
  }
}

export async function waitsForSlot(handle: WorkflowHandle): Promise<void> {
  await eventually('the task waits for a slot', async () => (await handle.query(stateQuery)).fleetSlot?.held === false);
}

export async function holdsSlot(handle: WorkflowHandle): Promise<void> {
  await eventually('the task holds its slot', async () => (await handle.query(stateQuery)).fleetSlot?.held === true);
}
