// The worker under measurement: the real entry point (`lib/src/worker.js`) in a child process at
// its default settings, so its memory and CPU are measured alone, sampled from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { within } from './chaos/util';
import { ProcessSampler } from './sampling';

const WORKER_ENTRY = resolve(__dirname, '../src/worker.js');
/** The worker prints this once it polls its task queue. */
const READY_LINE = 'browserai-temporal worker: task queue';
const READY_TIMEOUT_MS = 180_000;

/** Every live worker, so any exit of the bench (even a crash) takes them down too. */
const liveChildren = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of liveChildren) child.kill('SIGKILL');
});

export interface WorkerTarget {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  browserAIBaseUrl: string;
  browserAIToken: string;
}

/**
 * Only what the worker needs: nothing of ours that could point it elsewhere than 127.0.0.1 or
 * change its defaults (no TEMPORAL_*, BROWSERAI_* or WORKER_* is inherited).
 */
export function workerEnvironment(target: WorkerTarget): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(TEMPORAL|BROWSERAI|WORKER)_/.test(name)));
  return {
    ...inherited,
    TEMPORAL_ADDRESS: target.temporalAddress,
    TEMPORAL_NAMESPACE: target.namespace,
    TEMPORAL_TASK_QUEUE: target.taskQueue,
    BROWSERAI_BASE_URL: target.browserAIBaseUrl,
    BROWSERAI_API_TOKEN: target.browserAIToken,
  };
}

export class WorkerProcess {
  readonly sampler: ProcessSampler;
  readonly outputTail: string[] = [];
  warnLines = 0;
  errorLines = 0;
  exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly exit: Promise<void>;

  private constructor(readonly child: ChildProcess) {
    liveChildren.add(child);
    this.sampler = new ProcessSampler(child.pid).start();
    this.exit = new Promise((resolveExit) =>
      child.once('exit', (code, signal) => {
        this.exited = { code, signal };
        liveChildren.delete(child);
        this.sampler.stop();
        resolveExit();
      }),
    );
  }

  /** Spawns the worker and resolves once it polls its task queue (it bundles the workflow code first). */
  static async start(target: WorkerTarget): Promise<WorkerProcess> {
    const worker = new WorkerProcess(spawn(process.execPath, [WORKER_ENTRY], { env: workerEnvironment(target), stdio: ['ignore', 'pipe', 'pipe'] }));
    let onReady: () => void = () => undefined;
    const ready = new Promise<void>((r) => (onReady = r));
    const onLine = (line: string) => line.includes(READY_LINE) && onReady();
    worker.drain(worker.child.stdout!, onLine);
    worker.drain(worker.child.stderr!, onLine);
    const outcome = await within(READY_TIMEOUT_MS, Promise.race([ready.then(() => 'ready' as const), worker.exit.then(() => 'exited' as const)]));
    if (outcome !== 'ready') {
      worker.kill();
      throw new Error(`the worker ${outcome === 'exited' ? 'exited' : 'was not ready in time'}:\n${worker.outputTail.join('\n')}`);
    }
    return worker;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** SIGTERM (the worker drains and exits by itself), SIGKILL if it takes longer than `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    this.sampler.sample();
    if (this.exited) return;
    this.child.kill('SIGTERM');
    if ((await within(graceMs, this.exit.then(() => true))) === undefined) {
      this.kill();
      await within(5_000, this.exit);
    }
  }

  kill(): void {
    this.sampler.stop();
    if (!this.exited) this.child.kill('SIGKILL');
  }

  /** A full pipe would block the worker; the last lines are kept to explain a failure. */
  private drain(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (/\bWARN/i.test(line)) this.warnLines++;
        if (/\bERROR\b/i.test(line)) this.errorLines++;
        this.outputTail.push(line.length > 400 ? `${line.slice(0, 400)}…` : line);
        if (this.outputTail.length > 60) this.outputTail.shift();
        onLine(line);
      }
    });
  }
}
