// The fixed parts of a chaos run: one Temporal dev server on a database file (so it can be
// killed and restarted on it, and paused), with the search attributes registered, and the
// BrowserAI emulator in this process, with random faults of all four kinds (server-error,
// rate-limited, hang, answer-lost).
import { Client, Connection } from '@temporalio/client';
import { RestartableDevServer } from '../../dev/dev-server';
import { BrowserTasks } from '../../src/starters/tasks';
import { BrowserAIEmulator, RANDOM_FAULT_KINDS } from '../../src/emulator';
import { CHAOS_TOTP_NAME, CHAOS_TOTP_SECRET } from './plan';

export const TASK_QUEUE = 'chaos';

export interface ChaosStack {
  temporal: RestartableDevServer;
  emulator: BrowserAIEmulator;
  tasks: BrowserTasks;
  /** Idempotent: the dev server (and its database) and the emulator are gone afterwards. */
  stop(): Promise<void>;
}

export async function startChaosStack(options: { faultRate: number; seed: number }): Promise<ChaosStack> {
  const [temporal, emulator] = await Promise.all([
    // A fresh database file, so every run starts from nothing.
    RestartableDevServer.start(),
    BrowserAIEmulator.start({
      randomFaults: { rate: options.faultRate, seed: options.seed, kinds: [...RANDOM_FAULT_KINDS] },
      totpSecrets: { [CHAOS_TOTP_NAME]: CHAOS_TOTP_SECRET },
    }),
  ]);
  // The client reconnects by itself after a restart, as a service's client would.
  const connection = await Connection.connect({ address: temporal.address });
  let stopping: Promise<void> | undefined;
  return {
    temporal,
    emulator,
    tasks: new BrowserTasks(new Client({ connection }), TASK_QUEUE),
    stop() {
      stopping ??= (async () => {
        await emulator.close().catch(() => undefined);
        await connection.close().catch(() => undefined);
        await temporal.stop().catch(() => undefined);
      })();
      return stopping;
    },
  };
}
