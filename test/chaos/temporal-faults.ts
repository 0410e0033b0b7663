// What happens to Temporal itself: the dev server SIGKILLed and restarted on its database file,
// each time right after a create or an append reached BrowserAI (so the worker that sent it
// reports to a server that is gone), polls running all along; and one outage, the server paused
// (SIGSTOP) for a while and resumed (SIGCONT), with tasks running. Workers and the client must
// find the server again by themselves.
import { isAppend, isCreate, type RequestWatcher } from './emulator-watch';
import type { RestartableDevServer } from '../../dev/dev-server';
import { sleepUnless } from '../../dev/async';
import { log } from './log';

export interface TemporalRestart {
  at: number;
  /** What had just reached the emulator when the server was killed. */
  trigger: 'create' | 'append' | 'timer';
  /** How long the server was down (kill to answering again). */
  downMs: number;
}

export interface TemporalFaultsReport {
  restarts: TemporalRestart[];
  outage?: { at: number; pausedMs: number };
}

export interface TemporalFaultsOptions {
  temporal: RestartableDevServer;
  watcher: RequestWatcher;
  /** From the first start: each restart waits up to 30 s for its request, then goes anyway. */
  restartAt: Array<{ atMs: number; after: 'create' | 'append' }>;
  pauseAtMs: number;
  pauseForMs: number;
  startedAt: number;
  finished: () => boolean;
}

export async function runTemporalFaults(options: TemporalFaultsOptions): Promise<TemporalFaultsReport> {
  const { temporal, finished, startedAt } = options;
  const report: TemporalFaultsReport = { restarts: [] };
  const steps = [
    ...options.restartAt.map((restart) => ({ atMs: restart.atMs, run: () => restartAfter(restart.after) })),
    ...(options.pauseForMs > 0 ? [{ atMs: options.pauseAtMs, run: pause }] : []),
  ].sort((a, b) => a.atMs - b.atMs);

  async function restartAfter(after: 'create' | 'append'): Promise<void> {
    // Appends come only once one-time-code tasks await their code: wait long enough to meet one.
    const request = await options.watcher.next(after === 'create' ? isCreate : isAppend, 30_000);
    if (finished()) return;
    const at = Date.now();
    await temporal.kill();
    log(
      `Temporal SIGKILLed${request ? ` right after ${after === 'create' ? 'a create' : 'an append'} reached the emulator` : ''}; restarting it on its database`,
    );
    await temporal.restart();
    const downMs = Date.now() - at;
    report.restarts.push({ at, trigger: request ? after : 'timer', downMs });
    log(`Temporal answers again after ${(downMs / 1000).toFixed(1)} s`);
  }

  async function pause(): Promise<void> {
    const at = Date.now();
    temporal.pause();
    log(`Temporal paused (SIGSTOP) for ${(options.pauseForMs / 1000).toFixed(0)} s`);
    // Resumed even if the run ends meanwhile: nothing else may find it stopped.
    await sleepUnless(options.pauseForMs, () => false);
    temporal.resume();
    report.outage = { at, pausedMs: Date.now() - at };
    log('Temporal resumed (SIGCONT)');
  }

  for (const step of steps) {
    await sleepUnless(startedAt + step.atMs - Date.now(), finished);
    if (finished()) break;
    await step.run();
  }
  return report;
}
