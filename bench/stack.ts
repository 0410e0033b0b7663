// The fixed parts of one scenario, all on 127.0.0.1 and fresh for each scenario so none sees
// another's load: a Temporal dev server (in memory, our search attributes registered, its
// Prometheus endpoint on a free port, extra namespaces if asked), the BrowserAI emulator in this
// process, checked by a probe task, and samplers for the server and the machine. Scenarios start
// the workers, and pause the server for an outage.
import { sleep, within } from '../dev/async';
import { freePort, startTemporal } from '../dev/dev-server';
import { BrowserAIEmulator, type EmulatorOptions } from '../src/emulator';
import { BrowserTasks } from '../src/starters/tasks';
import { DurationBook } from './durations';
import { log } from './format';
import { plainInput } from './plan';
import { findChild, MachineSampler, ProcessSampler } from './sampling';
import { WorkerProcess } from './worker-process';

/**
 * The emulator's options a scenario sets (the emulator's own names, so none is passed under a key it
 * does not read; left out: its default), and namespaces created besides `default` (one per group
 * whose actions are counted apart).
 */
export type StackOptions = Pick<EmulatorOptions, 'mode' | 'totpSecrets'> & { queueMs: number; namespaces?: string[] };

/** What a scenario runs on: what `startStack` gives. */
export type BenchStack = Awaited<ReturnType<typeof startStack>>;

async function startStack({ namespaces = [], ...emulatorOptions }: StackOptions) {
  const metricsPort = await freePort();
  const durations = new DurationBook();
  const [temporal, emulator] = await Promise.all([
    startTemporal(['--metrics-port', String(metricsPort), ...namespaces.flatMap((ns) => ['--namespace', ns])]),
    BrowserAIEmulator.start({ ...emulatorOptions, durationFor: durations.durationFor }),
  ]);
  const machine = new MachineSampler().start();
  const serverPid = findChild(process.pid, 'temporal');
  const server = new ProcessSampler(serverPid).start();
  const workers: WorkerProcess[] = [];
  let stopping: Promise<void> | undefined;
  /** Idempotent: workers, samplers, the emulator and the dev server are gone afterwards. */
  const stop = () =>
    (stopping ??= (async () => {
      await Promise.all(workers.map((w) => w.stop(20_000)));
      machine.stop();
      server.stop();
      await emulator.close().catch(() => undefined);
      await within(30_000, temporal.teardown()).catch(() => undefined);
    })());
  const features = await probeEmulator(emulator, durations).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  return {
    temporal,
    /** The dev server's Prometheus endpoint. */
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    emulator,
    durations,
    features,
    server,
    machine,
    workers,
    stop,
    /** A Temporal outage: the dev server paused (SIGSTOP: unreachable, its state kept), then resumed; resolves as it runs again. */
    async pauseTemporal(outageMs: number, label: string): Promise<number> {
      if (!serverPid) throw new Error('the dev server process was not found');
      log(`${label}: pausing the Temporal dev server for ${Math.round(outageMs / 1000)} s`);
      process.kill(serverPid, 'SIGSTOP');
      await sleep(outageMs).finally(() => process.kill(serverPid, 'SIGCONT'));
      log(`${label}: the dev server runs again`);
      return Date.now();
    },
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
  };
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

const PROBE = { project: 'bench-probe', text: 'Benchmark probe: open https://example.com', durationMs: 4_321 };

/**
 * One probe task, created over HTTP like any client would, must run for the duration the book
 * gave it (unlike any default, so a match proves `durationFor` was used; otherwise every duration
 * in the report would be the emulator's default); its answer shows which fields the emulator's
 * mode sends. The probe's requests are then cleared from the request log.
 */
async function probeEmulator(emulator: BrowserAIEmulator, book: DurationBook) {
  book.add(PROBE.project, [PROBE.text], PROBE.durationMs);
  const call = (path: string, body: object) =>
    fetch(`${emulator.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `apikey ${emulator.apiToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const response = await call('/tasks', plainInput(PROBE.text, PROBE.project));
  const answer = (await response.json()) as { executionId?: string; estimatedCompletion?: unknown; started?: unknown };
  if (!response.ok || !answer.executionId) throw new Error(`the emulator refused the probe task (${response.status})`);
  const duration = emulator.task(answer.executionId)?.scenario.durationMs;
  await call(`/tasks/${answer.executionId}/command`, { command: 'stop' });
  emulator.resetRequests();
  if (duration !== PROBE.durationMs)
    throw new Error(`the emulator ignored durationFor (probe ran ${duration} ms, not ${PROBE.durationMs})`);
  const sent = (value: unknown) => value !== undefined && value !== null;
  return { mode: emulator.mode, sendsEstimate: sent(answer.estimatedCompletion), sendsStarted: sent(answer.started) };
}

/** The emulator's mode, and whether its create answer carried a non-null `estimatedCompletion`, and `started`. */
export function describeFeatures(features: BenchStack['features']): string {
  return `\`${features.mode}\` mode: create answers ${features.sendsEstimate ? 'carry' : 'carry no'} \`estimatedCompletion\` and ${features.sendsStarted ? 'carry' : 'no'} \`started\`; task durations set through \`durationFor\` (instruction texts unchanged)`;
}
