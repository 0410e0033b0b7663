// The real worker entry point (`lib/src/worker.js`) in a child process, as the bench and the chaos
// run both use it: spawned with an environment of our choosing, ready once it polls its task
// queue, its output drained (a full pipe would block it) with the last lines kept to explain a
// failure, and killed with this process whatever way it exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

const WORKER_ENTRY = resolve(__dirname, '../src/worker.js');
/** The worker prints this once it polls its task queue. */
const READY_LINE = 'browserai-temporal worker: task queue';
const READY_TIMEOUT_MS = 180_000;
const TAIL_LINES = 60;
const TAIL_LINE_CHARS = 400;

/**
 * The worker's memory settings, as the Dockerfile and `npm run worker` give them (a test checks the
 * three agree; docs/design/memory.md, "The four settings"): V8 grows a heap by 30 % over what a full GC left live instead of
 * up to 4x, with young generations of at most 8 MB; glibc keeps two malloc arenas and hands blocks of
 * 128 KiB and more straight back to the system.
 */
export const WORKER_NODE_FLAGS = ['--heap-growing-percent=30', '--max-semi-space-size=8'];
export const WORKER_MALLOC_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };

/** Every live child, so any exit of this process (even a crash) takes them down too. */
const liveChildren = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of liveChildren) child.kill('SIGKILL');
});

export interface WorkerTarget {
  temporalAddress: string;
  /** Default `default`. */
  namespace?: string;
  taskQueue: string;
  browserAIBaseUrl: string;
  browserAIToken: string;
  /** The worker's own default unless set. */
  shutdownGraceMs?: number;
  /** The worker's own default unless set. */
  requestTimeoutMs?: number;
  /** More variables of ours, e.g. BROWSERAI_WEBHOOK_URL or a BROWSERAI_TOTP_SECRET_<NAME>. */
  extra?: Record<string, string>;
}

/**
 * Only what the worker needs: nothing of ours that could point it elsewhere or change its defaults
 * (no TEMPORAL_*, BROWSERAI_* or WORKER_* is inherited: a stray payload key or token must not leak in).
 */
export function workerEnvironment(target: WorkerTarget): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(TEMPORAL|BROWSERAI|WORKER)_/.test(name)),
  );
  return {
    ...inherited,
    TEMPORAL_ADDRESS: target.temporalAddress,
    TEMPORAL_NAMESPACE: target.namespace ?? 'default',
    TEMPORAL_TASK_QUEUE: target.taskQueue,
    BROWSERAI_BASE_URL: target.browserAIBaseUrl,
    BROWSERAI_API_TOKEN: target.browserAIToken,
    ...(target.requestTimeoutMs !== undefined ? { BROWSERAI_REQUEST_TIMEOUT_MS: String(target.requestTimeoutMs) } : {}),
    ...(target.shutdownGraceMs !== undefined ? { WORKER_SHUTDOWN_GRACE_MS: String(target.shutdownGraceMs) } : {}),
    ...target.extra,
  };
}

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class WorkerChild {
  readonly child: ChildProcess;
  /** True once the worker polls its task queue; false if it exited or took too long first. */
  readonly ready: Promise<boolean>;
  readonly exited: Promise<WorkerExit>;
  /** How it exited, once it has. */
  exit: WorkerExit | undefined;
  readonly outputTail: string[] = [];
  isReady = false;
  /** Set before we signal it, so its exit is not mistaken for a crash. */
  exitExpected = false;

  /** `onLine` sees every line the worker prints, on either stream; `nodeArgs` go before the entry point. */
  constructor(env: NodeJS.ProcessEnv, onLine: (line: string) => void = () => undefined, nodeArgs: string[] = []) {
    // As the image runs it (Dockerfile: its malloc settings and node flags), unless the caller chose otherwise.
    this.child = spawn(process.execPath, [...WORKER_NODE_FLAGS, ...nodeArgs, WORKER_ENTRY], {
      env: { ...WORKER_MALLOC_ENV, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    liveChildren.add(this.child);
    this.exited = new Promise((resolveExit) =>
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        liveChildren.delete(this.child);
        resolveExit(this.exit);
      }),
    );
    this.ready = new Promise<boolean>((resolveReady) => {
      const timer = setTimeout(() => resolveReady(false), READY_TIMEOUT_MS);
      const watch = (line: string) => {
        onLine(line);
        if (!this.isReady && line.includes(READY_LINE)) {
          this.isReady = true;
          clearTimeout(timer);
          resolveReady(true);
        }
      };
      this.drain(this.child.stdout!, watch);
      this.drain(this.child.stderr!, watch);
      void this.exited.then(() => (clearTimeout(timer), resolveReady(this.isReady)));
    });
  }

  get hasExited(): boolean {
    return this.exit !== undefined;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Sends the signal unless the process is already gone; resolves once it has exited (SIGKILL after `ms`). */
  async signal(signal: 'SIGKILL' | 'SIGTERM', ms: number): Promise<'exited' | 'killed after timeout'> {
    this.exitExpected = true;
    if (!this.hasExited) this.child.kill(signal);
    const timedOut = await Promise.race([
      this.exited.then(() => false),
      new Promise<boolean>((r) => setTimeout(() => r(true), ms).unref()),
    ]);
    if (!timedOut) return 'exited';
    this.child.kill('SIGKILL');
    await this.exited;
    return 'killed after timeout';
  }

  private drain(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        this.outputTail.push(line.length > TAIL_LINE_CHARS ? `${line.slice(0, TAIL_LINE_CHARS)}…` : line);
        if (this.outputTail.length > TAIL_LINES) this.outputTail.shift();
        onLine(line);
      }
    });
  }
}
