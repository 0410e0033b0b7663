// The fixed parts of a chaos run: one Temporal dev server (the `temporal` CLI, in memory, with
// the search attributes registered) and the BrowserAI emulator in this process, with random faults
// of all four kinds (server-error, rate-limited, hang, answer-lost).
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { BrowserTasks } from '../../src/starters/tasks';
import { findTemporalCli, TEMPORAL_CLI_MISSING } from '../../dev/temporal-cli';
import { BrowserAIEmulator, RANDOM_FAULT_KINDS } from '../../src/emulator';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/workflows/search-attributes';

export const TASK_QUEUE = 'chaos';

export interface ChaosStack {
  temporal: TestWorkflowEnvironment;
  emulator: BrowserAIEmulator;
  tasks: BrowserTasks;
  /** Idempotent: the dev server and the emulator are gone afterwards. */
  stop(): Promise<void>;
}

export async function startChaosStack(options: { faultRate: number; seed: number }): Promise<ChaosStack> {
  const cli = findTemporalCli();
  if (!cli) throw new Error(TEMPORAL_CLI_MISSING);
  const [temporal, emulator] = await Promise.all([
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: cli },
        ip: '127.0.0.1',
        // No dbFilename: an in-memory server, so every run starts from nothing.
        searchAttributes: ALL_SEARCH_ATTRIBUTES,
      },
    }),
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
