// The fixed parts of one scenario, all on 127.0.0.1 and fresh for each scenario so none sees
// another's load: a Temporal dev server (in memory, our search attributes registered, its
// Prometheus endpoint on a free port, extra namespaces if asked), the BrowserAI emulator in this
// process, and samplers for the server and the machine. Workers are started by the scenario.
import { BrowserAIEmulator, type EmulatorMode } from '../src/emulator';
import { freePort, startTemporal } from '../dev/dev-server';
import { DurationBook, probeEmulator, type EmulatorFeatures } from './emulator/durations';
import { within } from '../dev/async';
import { findChild, MachineSampler, ProcessSampler } from './sampling';
import { WorkerProcess } from './worker-process';
import { BrowserTasks } from '../src/starters/tasks';

export interface StackOptions {
  /** Namespaces created besides `default` (one per group whose actions are counted apart). */
  namespaces?: string[];
  queueMs: number;
  /** Left out: the emulator's own default. */
  emulatorMode?: EmulatorMode;
  /** The emulator's TOTP secrets (`[needs-totp=NAME]` tasks). */
  totpSecrets?: Record<string, string>;
}

/** What a scenario runs on: what `startStack` gives. */
export type BenchStack = Awaited<ReturnType<typeof startStack>>;

export async function startStack(options: StackOptions) {
  const metricsPort = await freePort();
  const namespaces = (options.namespaces ?? []).flatMap((ns) => ['--namespace', ns]);
  const durations = new DurationBook();
  const [temporal, emulator] = await Promise.all([
    startTemporal(['--metrics-port', String(metricsPort), ...namespaces]),
    BrowserAIEmulator.start({
      queueMs: options.queueMs,
      durationFor: durations.durationFor,
      ...(options.emulatorMode ? { mode: options.emulatorMode } : {}),
      ...(options.totpSecrets ? { totpSecrets: options.totpSecrets } : {}),
    }),
  ]);
  const machine = new MachineSampler().start();
  const server = new ProcessSampler(findChild(process.pid, 'temporal')).start();
  const workers: WorkerProcess[] = [];
  let stopping: Promise<void> | undefined;
  const stack = {
    temporal,
    /** The dev server's Prometheus endpoint. */
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    emulator,
    durations,
    features: { mode: emulator.mode, sendsEstimate: false, sendsStarted: false } as EmulatorFeatures,
    server,
    machine,
    workers,
    /** `extra`: more variables for the worker (webhook destination, TOTP secrets). */
    async startWorker(namespace: string, taskQueue: string, extra?: Record<string, string>) {
      const worker = await WorkerProcess.start({
        temporalAddress: temporal.address,
        namespace,
        taskQueue,
        browserAIBaseUrl: emulator.baseUrl,
        browserAIToken: emulator.apiToken,
        extra,
      });
      workers.push(worker);
      return worker;
    },
    /** Idempotent: workers, samplers, the emulator and the dev server are gone afterwards. */
    stop(): Promise<void> {
      stopping ??= (async () => {
        await Promise.all(workers.map((w) => w.stop(20_000)));
        machine.stop();
        server.stop();
        await emulator.close().catch(() => undefined);
        await within(
          30_000,
          temporal.teardown().catch(() => undefined),
        );
      })();
      return stopping;
    },
  };
  stack.features = await probeEmulator(emulator, durations).catch(async (err: unknown) => {
    await stack.stop();
    throw err;
  });
  return stack;
}

/** Stacks not stopped yet: Ctrl+C stops them all (see main.ts). */
const liveStacks = new Set<BenchStack>();

/** Runs `body` on a fresh stack and always stops the stack afterwards. */
export async function withStack<T>(options: StackOptions, body: (stack: BenchStack) => Promise<T>): Promise<T> {
  const stack = await startStack(options);
  liveStacks.add(stack);
  return body(stack).finally(() => stack.stop().then(() => liveStacks.delete(stack)));
}

export const stopLiveStacks = () => Promise.all([...liveStacks].map((stack) => stack.stop()));

/** What a scenario's tasks run against: its worker on `taskQueue` of `client`'s namespace (default: `default`). */
// prettier-ignore
export function runTargetOf(stack: BenchStack, worker: WorkerProcess, taskQueue: string, project: string, client = stack.temporal.client) {
  const { emulator, machine } = stack;
  return { tasks: new BrowserTasks(client, taskQueue), client, taskQueue, emulator, project, worker, machine };
}
