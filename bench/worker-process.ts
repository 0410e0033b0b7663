// The worker under measurement: the real entry point in a child process (dev/worker-child.ts) at its
// default settings, so its memory and CPU are measured alone, sampled from /proc. It preloads the
// memory probe (dev/memory-probe.ts), idle until asked where the memory goes.
import { resolve } from 'node:path';
import { within } from '../dev/async';
import { PROBE_LINE_PREFIX, type MemoryProbeReport } from '../dev/memory-probe';
import { WorkerChild, workerEnvironment, type WorkerExit, type WorkerTarget } from '../dev/worker-child';
import { ProcessSampler } from './sampling';

const PROBE_TIMEOUT_MS = 30_000;
// BENCH_WORKER_NODE_ARGS: more node flags for the worker only (to try V8 or GC settings).
const EXTRA_NODE_ARGS = process.env.BENCH_WORKER_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? [];
const NODE_ARGS = ['--require', resolve(__dirname, '../dev/memory-probe.js'), ...EXTRA_NODE_ARGS];

export class WorkerProcess {
  readonly process: WorkerChild;
  readonly sampler: ProcessSampler;
  warnLines = 0;
  errorLines = 0;
  private probeWaiters: ((report: MemoryProbeReport | undefined) => void)[] = [];

  private constructor(target: WorkerTarget) {
    this.process = new WorkerChild(workerEnvironment(target), (line) => this.onLine(line), NODE_ARGS);
    this.sampler = new ProcessSampler(this.process.child.pid).start();
    // A probe asked as the worker exits gets no answer: it is not left waiting out its timeout.
    void this.process.exited.then(() => {
      this.sampler.stop();
      for (const waiter of this.probeWaiters.splice(0)) waiter(undefined);
    });
  }

  /** Spawns the worker and resolves once it polls its task queue (it bundles the workflow code first). */
  static async start(target: WorkerTarget): Promise<WorkerProcess> {
    const worker = new WorkerProcess(target);
    if (await worker.process.ready) return worker;
    worker.kill();
    const why = worker.process.hasExited ? 'exited' : 'was not ready in time';
    throw new Error(`the worker ${why}:\n${worker.process.outputTail.join('\n')}`);
  }

  private onLine(line: string): void {
    if (line.startsWith(PROBE_LINE_PREFIX)) {
      const report = JSON.parse(line.slice(PROBE_LINE_PREFIX.length)) as Partial<MemoryProbeReport>;
      for (const waiter of this.probeWaiters.splice(0)) waiter(report.rss ? (report as MemoryProbeReport) : undefined);
      return;
    }
    if (/\bWARN/i.test(line)) this.warnLines++;
    if (/\bERROR\b/i.test(line)) this.errorLines++;
  }

  /** Where the worker's memory goes now (dev/memory-probe.ts); undefined if it fails or does not answer in 30 s. */
  async probeMemory(): Promise<MemoryProbeReport | undefined> {
    if (this.process.hasExited) return undefined;
    const answer = new Promise<MemoryProbeReport | undefined>((resolveReport) => this.probeWaiters.push(resolveReport));
    this.process.child.kill('SIGWINCH');
    return within(PROBE_TIMEOUT_MS, answer);
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
