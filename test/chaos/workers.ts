// The worker processes: each slot runs the real worker in a child process (dev/worker-child.ts) and
// gets a fresh one whenever its process is killed, shut down or dies by itself.
import { WorkerChild } from '../../dev/worker-child';
import { log } from './log';

const MAX_CRASH_RESTARTS = 20;

export interface WorkerCrash {
  at: number;
  slot: number;
  pid: number;
  exit: string;
  outputTail: string[];
}

/** N slots on one task queue. A slot whose process dies unasked is restarted and the crash recorded. */
export class WorkerPool {
  readonly slots: WorkerChild[] = [];
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

  private spawn(slot: number): WorkerChild {
    const worker = new WorkerChild(this.env);
    this.starts += 1;
    void worker.exited.then(({ code, signal }) => {
      if (worker.exitExpected || this.shuttingDown) return;
      const exit = signal ?? `code ${code}`;
      this.crashes.push({ at: Date.now(), slot, pid: worker.pid, exit, outputTail: worker.outputTail.slice(-10) });
      log(
        `worker ${slot} (pid ${worker.pid}) exited by itself (${exit}); restarting it. Last output:\n  ${worker.outputTail.slice(-5).join('\n  ')}`,
      );
      // A worker that cannot start at all would otherwise be respawned forever.
      if (this.crashes.length > MAX_CRASH_RESTARTS)
        return log(`more than ${MAX_CRASH_RESTARTS} crashes: not restarting worker ${slot}`);
      if (this.slots[slot] === worker) this.slots[slot] = this.spawn(slot);
    });
    return worker;
  }
}
