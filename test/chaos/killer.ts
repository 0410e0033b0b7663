// The killer: every few seconds (seeded) it SIGKILLs one worker and starts a replacement at once.
// Half of the kills wait for the next create or append to reach the emulator and strike within
// ~10 ms of it, so some land while a worker is between sending a request and recording its
// answer. Once, mid-run, it does a deploy: every worker SIGTERMed in turn, each replaced (and the
// replacement ready) before the next one goes.
import { isAppend, isCreate, type RequestWatcher } from './emulator-watch';
import type { Random } from '../../dev/random';
import { sleepUnless } from '../../dev/async';
import { log } from './log';
import type { WorkerPool } from './workers';

export type KillTrigger = 'timer' | 'create' | 'append' | 'deploy';

export interface KillRecord {
  at: number;
  slot: number;
  pid: number;
  signal: 'SIGKILL' | 'SIGTERM';
  trigger: KillTrigger;
  /** How the old process went: on its own after the signal, or SIGKILLed after a SIGTERM took too long. */
  exit: string;
}

export interface KillerReport {
  kills: KillRecord[];
  /** Timed kills skipped because no worker was ready (all restarting). */
  skipped: number;
  deploy?: { startedAt: number; endedAt: number; completed: boolean };
}

export interface KillerOptions {
  pool: WorkerPool;
  watcher: RequestWatcher;
  rng: Random;
  killMinMs: number;
  killMaxMs: number;
  deployAt: number;
  shutdownGraceMs: number;
  /** True once the run is over: the killer stops at its next step. */
  finished: () => boolean;
}

export async function runKiller(options: KillerOptions): Promise<KillerReport> {
  const { pool, rng, finished } = options;
  const report: KillerReport = { kills: [], skipped: 0 };
  while (!finished()) {
    await sleepUnless(rng.int(options.killMinMs, options.killMaxMs), finished);
    if (finished()) break;
    if (!report.deploy && Date.now() >= options.deployAt) {
      report.deploy = await deploy(options, report.kills);
      continue;
    }
    // Decided before waiting, so the seed fixes the mix of timed and request-triggered kills.
    const aimAtRequest = rng.chance(0.5);
    const victimDraw = rng.next();
    let trigger: KillTrigger = 'timer';
    if (aimAtRequest) {
      const request = await options.watcher.next((r) => isCreate(r) || isAppend(r), 5_000);
      if (request) trigger = isCreate(request) ? 'create' : 'append';
    }
    const ready = pool.readySlots();
    if (ready.length === 0 || finished()) {
      report.skipped += 1;
      continue;
    }
    const slot = ready[Math.floor(victimDraw * ready.length)]!;
    const at = Date.now();
    // The replacement starts at once and is not awaited: kills keep coming while it boots.
    const { pid, exit } = await pool.replace(slot, 'SIGKILL', { exitTimeoutMs: 5_000, awaitReady: false });
    report.kills.push({ at, slot, pid, signal: 'SIGKILL', trigger, exit });
    log(
      `SIGKILL worker ${slot} (pid ${pid})${trigger === 'timer' ? '' : ` right after ${trigger === 'create' ? 'a create' : 'an append'} reached the emulator`}; restarting it`,
    );
  }
  return report;
}

/** A rolling deploy: SIGTERM each worker, wait for it to drain and exit, start its replacement and wait until it polls. */
async function deploy(options: KillerOptions, kills: KillRecord[]): Promise<NonNullable<KillerReport['deploy']>> {
  const startedAt = Date.now();
  log(`deploy: rolling SIGTERM restart of ${options.pool.slots.length} workers`);
  for (let slot = 0; slot < options.pool.slots.length; slot++) {
    if (options.finished()) return { startedAt, endedAt: Date.now(), completed: false };
    const at = Date.now();
    const { pid, exit, replacementReady } = await options.pool.replace(slot, 'SIGTERM', {
      // The grace time for activities, plus time to flush and disconnect.
      exitTimeoutMs: options.shutdownGraceMs + 15_000,
      awaitReady: true,
    });
    kills.push({ at, slot, pid, signal: 'SIGTERM', trigger: 'deploy', exit });
    log(
      `deploy: worker ${slot} (pid ${pid}) ${exit}; replacement ${replacementReady ? 'ready' : 'NOT ready'} ${((Date.now() - at) / 1000).toFixed(1)} s after the SIGTERM`,
    );
  }
  log('deploy: done');
  return { startedAt, endedAt: Date.now(), completed: true };
}
