// The fixed parts of a chaos run: one Temporal dev server (the `temporal` CLI, in memory, with
// the search attributes registered) and the BrowserAI emulator in this process, with random faults
// of all four kinds (server-error, rate-limited, hang, answer-lost).
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTemporal } from '../../dev/dev-server';
import { BrowserTasks } from '../../src/starters/tasks';
import { BrowserAIEmulator, RANDOM_FAULT_KINDS } from '../../src/emulator';

export const TASK_QUEUE = 'chaos';

export interface ChaosStack {
  temporal: TestWorkflowEnvironment;
  emulator: BrowserAIEmulator;
  tasks: BrowserTasks;
  /** Idempotent: the dev server and the emulator are gone afterwards. */
  stop(): Promise<void>;
}

export async function startChaosStack(options: { faultRate: number; seed: number }): Promise<ChaosStack> {
  const [temporal, emulator] = await Promise.all([
    // In memory, so every run starts from nothing.
    startTemporal(),
    BrowserAIEmulator.start({
      randomFaults: { rate: options.faultRate, seed: options.seed, kinds: [...RANDOM_FAULT_KINDS] },
    }),
  ]);
  let stopping: Promise<void> | undefined;
  return {
    temporal,
    emulator,
    tasks: new BrowserTasks(temporal.client, TASK_QUEUE),
    stop() {
      stopping ??= (async () => {
        await emulator.close().catch(() => undefined);
        await temporal.teardown().catch(() => undefined);
      })();
      return stopping;
    },
  };
}
