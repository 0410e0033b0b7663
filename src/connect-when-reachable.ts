// The worker's connection to Temporal, made once the server can be reached.
import { NativeConnection, Runtime, type NativeConnectionOptions } from '@temporalio/worker';

/** The longest wait between two tries: a server back from a restart is found within this. */
const MAX_RETRY_DELAY_MS = 10_000;
/** What ends the wait: the Runtime's own handlers keep these signals from ending the process by themselves. */
const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/**
 * Connects to Temporal, waiting while the server cannot be reached. A worker started while the
 * server restarts (a crash, a deploy of both, a node moved) connects once it is back instead of
 * exiting and being restarted in a loop; once connected, the SDK's pollers ride out outages by
 * themselves. Anything that is not about reaching the server (a refused API key, a namespace that
 * does not exist) fails at once. Each failed try is logged with what to check. Resolves undefined
 * when SIGINT or SIGTERM arrives first: the worker then has nothing to drain and exits.
 */
export async function connectWhenReachable(options: NativeConnectionOptions): Promise<NativeConnection | undefined> {
  const stop = new AbortController();
  const stopped = new Promise<undefined>((resolve) => stop.signal.addEventListener('abort', () => resolve(undefined)));
  const onSignal = () => stop.abort();
  for (const signal of STOP_SIGNALS) process.once(signal, onSignal);
  try {
    for (let attempt = 1; ; attempt++) {
      const connecting = NativeConnection.connect(options);
      try {
        const connection = await Promise.race([connecting, stopped]);
        // Stopped mid-try (a hung server holds a try for long): a connection made later is closed.
        if (!connection) connecting.then((late) => late.close()).catch(() => undefined);
        return connection;
      } catch (err) {
        if (!isUnreachable(err)) throw err;
        const delayMs = Math.min(MAX_RETRY_DELAY_MS, 500 * 2 ** (attempt - 1));
        Runtime.instance().logger.warn(
          `Temporal at ${options.address} cannot be reached (${(err as Error).message.slice(0, 300)}); trying again in ${delayMs} ms. ` +
            'If this goes on, check TEMPORAL_ADDRESS and that the server is up.',
          { attempt },
        );
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, delayMs))), stopped]);
        clearTimeout(timer);
        if (stop.signal.aborted) return undefined;
      }
    }
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  }
}

/** gRPC's UNAVAILABLE and DEADLINE_EXCEEDED: the server is down, restarting or hung. */
const UNREACHABLE_CODES = new Set([14, 4]);

/**
 * The connection could not be made, or the server did not answer. By name: the SDK's error
 * classes live in its internal core-bridge package.
 */
function isUnreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'TransportError') return true;
  return err.name === 'ServiceError' && UNREACHABLE_CODES.has((err as { code?: number }).code ?? -1);
}
