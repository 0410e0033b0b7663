// The worker under measurement: the real entry point in a child process (dev/worker-child.ts) at its
// default settings, so its memory and CPU are measured alone, sampled from /proc. It preloads the
// memory probe (dev/memory-probe.ts), idle until asked where the memory goes.
import { resolve } from 'node:path';
import { ProcessSampler } from './sampling';
import { PROBE_LINE_PREFIX, type MemoryProbeReport } from '../dev/memory-probe';
import { WorkerChild, workerEnvironment, type WorkerExit, type WorkerTarget } from '../dev/worker-child';

const MEMORY_PROBE = resolve(__dirname, '../dev/memory-probe.js');
const PROBE_TIMEOUT_MS = 30_000;

export class WorkerProcess {
  readonly sampler: ProcessSampler;
  readonly process: WorkerChild;
  warnLines = 0;
  errorLines = 0;
  private probeWaiters: ((report: MemoryProbeReport | undefined) => void)[] = [];

  private constructor(target: WorkerTarget) {
    this.process = new WorkerChild(
      workerEnvironment(target),
      (line) => {
        if (line.startsWith(PROBE_LINE_PREFIX)) {
          const report = JSON.parse(line.slice(PROBE_LINE_PREFIX.length)) as Partial<MemoryProbeReport>;
          for (const waiter of this.probeWaiters.splice(0))
            waiter(report.rss ? (report as MemoryProbeReport) : undefined);
          return;
        }
        if (/\bWARN/i.test(line)) this.warnLines++;
        if (/\bERROR\b/i.test(line)) this.errorLines++;
      },
      // BENCH_WORKER_NODE_ARGS: more node flags for the worker only (to try V8 or GC settings).
      ['--require', MEMORY_PROBE, ...(process.env.BENCH_WORKER_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? [])],
    );
    this.sampler = new ProcessSampler(this.process.child.pid).start();
    void this.process.exited.then(() => this.sampler.stop());
  }

  /** Spawns the worker and resolves once it polls its task queue (it bundles the workflow code first). */
  static async start(target: WorkerTarget): Promise<WorkerProcess> {
    const worker = new WorkerProcess(target);
    if (!(await worker.process.ready)) {
      worker.kill();
      throw new Error(
        `the worker ${worker.process.hasExited ? 'exited' : 'was not ready in time'}:\n${worker.process.outputTail.join('\n')}`,
      );
    }
    return worker;
  }

  /** Where the worker's memory goes now (dev/memory-probe.ts); undefined if it fails or does not answer in 30 s. */
  async probeMemory(): Promise<MemoryProbeReport | undefined> {
    if (this.process.hasExited) return undefined;
    const answer = new Promise<MemoryProbeReport | undefined>((resolveReport) => this.probeWaiters.push(resolveReport));
    this.process.child.kill('SIGWINCH');
    return Promise.race([
      answer,
      new Promise<undefined>((r) => setTimeout(() => r(undefined), PROBE_TIMEOUT_MS).unref()),
    ]);
  }

  /** How the worker exited, if it has. */
  get exited(): WorkerExit | undefined {
    return this.process.exit;
  }

  /** SIGTERM (the worker drains and exits by itself), SIGKILL if it takes longer than `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    this.sampler.sample();
    await this.process.signal('SIGTERM', graceMs);
  }

  kill(): void {
    this.sampler.stop();
    void this.process.signal('SIGKILL', 5_000);
  }
}
