// The worker processes: each slot runs the real worker entry point (`lib/src/worker.js`) in a
// child process and gets a fresh one whenever its process is killed, shut down or dies by itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { log } from './util';

const WORKER_ENTRY = resolve(__dirname, '../../src/worker.js');
/** The worker prints this once it polls the task queue. */
const READY_LINE = 'browserai-temporal worker: task queue';
const READY_TIMEOUT_MS = 180_000;
const MAX_CRASH_RESTARTS = 20;

/** Every live child, so any exit of this process (even a crash) takes them down too. */
const liveChildren = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of liveChildren) child.kill('SIGKILL');
});

export interface WorkerSettings {
  temporalAddress: string;
  taskQueue: string;
  browserAIBaseUrl: string;
  browserAIToken: string;
  shutdownGraceMs: number;
  requestTimeoutMs: number;
}

/** The worker's environment: ours without any TEMPORAL_* or BROWSERAI_* (a stray payload key or token must not leak in). */
export function workerEnvironment(settings: WorkerSettings): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(TEMPORAL|BROWSERAI|WORKER)_/.test(name)));
  return {
    ...inherited,
    TEMPORAL_ADDRESS: settings.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: settings.taskQueue,
    BROWSERAI_BASE_URL: settings.browserAIBaseUrl,
    BROWSERAI_API_TOKEN: settings.browserAIToken,
    BROWSERAI_REQUEST_TIMEOUT_MS: String(settings.requestTimeoutMs),
    WORKER_SHUTDOWN_GRACE_MS: String(settings.shutdownGraceMs),
  };
}

export class WorkerProcess {
  readonly child: ChildProcess;
  readonly ready: Promise<boolean>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly outputTail: string[] = [];
  isReady = false;
  hasExited = false;
  /** Set before we signal it, so its exit is not mistaken for a crash. */
  exitExpected = false;

  constructor(env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, [WORKER_ENTRY], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    liveChildren.add(this.child);
    this.exited = new Promise((resolveExit) =>
      this.child.once('exit', (code, signal) => {
        this.hasExited = true;
        liveChildren.delete(this.child);
        resolveExit({ code, signal });
      }),
    );
    this.ready = new Promise<boolean>((resolveReady) => {
      const timer = setTimeout(() => resolveReady(false), READY_TIMEOUT_MS);
      const onLine = (line: string) => {
        if (!this.isReady && line.includes(READY_LINE)) {
          this.isReady = true;
          clearTimeout(timer);
          resolveReady(true);
        }
      };
      this.drain(this.child.stdout!, onLine);
      this.drain(this.child.stderr!, onLine);
      void this.exited.then(() => (clearTimeout(timer), resolveReady(this.isReady)));
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Sends the signal unless the process is already gone; resolves once it has exited (SIGKILL after `ms`). */
  async signal(signal: 'SIGKILL' | 'SIGTERM', ms: number): Promise<'exited' | 'killed after timeout'> {
    this.exitExpected = true;
    if (!this.hasExited) this.child.kill(signal);
    const timedOut = await Promise.race([this.exited.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), ms).unref())]);
    if (!timedOut) return 'exited';
    this.child.kill('SIGKILL');
    await this.exited;
    return 'killed after timeout';
  }

  /** A full pipe would block the worker; the last lines are kept to explain a crash. */
  private drain(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        this.outputTail.push(line.length > 300 ? `${line.slice(0, 300)}…` : line);
        if (this.outputTail.length > 30) this.outputTail.shift();
        onLine(line);
      }
    });
  }
}

export interface WorkerCrash {
  at: number;
  slot: number;
  pid: number;
  exit: string;
  outputTail: string[];
}

/** N slots on one task queue. A slot whose process dies unasked is restarted and the crash recorded. */
export class WorkerPool {
  readonly slots: WorkerProcess[] = [];
  readonly crashes: WorkerCrash[] = [];
  starts = 0;
  private shuttingDown = false;

  constructor(
    count: number,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    for (let slot = 0; slot < count; slot++) this.slots.push(this.spawn(slot));
  }

  /** True when every first process became ready; false if one did not in time. */
  async allReady(): Promise<boolean> {
    return (await Promise.all(this.slots.map((worker) => worker.ready))).every(Boolean);
  }

  readySlots(): number[] {
    return this.slots.flatMap((worker, slot) => (worker.isReady && !worker.hasExited ? [slot] : []));
  }

  /** Signals the slot's process, waits for its exit and starts a replacement (awaiting readiness if asked). */
  async replace(slot: number, signal: 'SIGKILL' | 'SIGTERM', options: { exitTimeoutMs: number; awaitReady: boolean }) {
    const old = this.slots[slot]!;
    const exit = await old.signal(signal, options.exitTimeoutMs);
    if (this.shuttingDown) return { pid: old.pid, exit, replacementReady: false };
    const replacement = this.spawn(slot);
    this.slots[slot] = replacement;
    const replacementReady = options.awaitReady ? await replacement.ready : false;
    return { pid: old.pid, exit, replacementReady };
  }

  /** The end of the run: SIGKILL everything, nothing is restarted afterwards. */
  async killAll(): Promise<void> {
    this.shuttingDown = true;
    await Promise.all(this.slots.map((worker) => worker.signal('SIGKILL', 5_000)));
  }

  private spawn(slot: number): WorkerProcess {
    const worker = new WorkerProcess(this.env);
    this.starts += 1;
    void worker.exited.then(({ code, signal }) => {
      if (worker.exitExpected || this.shuttingDown) return;
      const exit = signal ?? `code ${code}`;
      this.crashes.push({ at: Date.now(), slot, pid: worker.pid, exit, outputTail: worker.outputTail.slice(-10) });
      log(`worker ${slot} (pid ${worker.pid}) exited by itself (${exit}); restarting it. Last output:\n  ${worker.outputTail.slice(-5).join('\n  ')}`);
      // A worker that cannot start at all would otherwise be respawned forever.
      if (this.crashes.length > MAX_CRASH_RESTARTS) return log(`more than ${MAX_CRASH_RESTARTS} crashes: not restarting worker ${slot}`);
      if (this.slots[slot] === worker) this.slots[slot] = this.spawn(slot);
    });
    return worker;
  }
}
