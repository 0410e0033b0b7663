// A Temporal outage as scenarios cause it: the dev server paused (SIGSTOP, as an unreachable
// server that keeps its state), then resumed (SIGCONT).
import { sleep } from '../dev/async';
import { log } from './format';
import { findChild } from './sampling';

/** Pauses this process's dev server for `outageMs`; resolves with the moment it runs again. */
export async function pauseTemporal(outageMs: number, label: string): Promise<number> {
  const server = findChild(process.pid, 'temporal');
  if (!server) throw new Error('the dev server process was not found');
  log(`${label}: pausing the Temporal dev server for ${Math.round(outageMs / 1000)} s`);
  process.kill(server, 'SIGSTOP');
  try {
    await sleep(outageMs);
  } finally {
    process.kill(server, 'SIGCONT');
  }
  log(`${label}: the dev server runs again`);
  return Date.now();
}
