// The worker under measurement: the real entry point in a child process (dev/worker-child.ts) at its
// default settings, so its memory and CPU are measured alone, sampled from /proc.
import { ProcessSampler } from './sampling';
import { WorkerChild, workerEnvironment, type WorkerExit, type WorkerTarget } from '../dev/worker-child';

export type { WorkerTarget };

export class WorkerProcess {
  readonly sampler: ProcessSampler;
  readonly process: WorkerChild;
  warnLines = 0;
  errorLines = 0;

  private constructor(target: WorkerTarget) {
    this.process = new WorkerChild(workerEnvironment(target), (line) => {
      if (/\bWARN/i.test(line)) this.warnLines++;
      if (/\bERROR\b/i.test(line)) this.errorLines++;
    });
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
