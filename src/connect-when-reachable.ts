// The worker's connection to Temporal, made once the server can be reached.
import { NativeConnection, Runtime, type NativeConnectionOptions } from '@temporalio/worker';

/** The longest wait between two tries: a server back from a restart is found within this. */
const MAX_RETRY_DELAY_MS = 10_000;

/**
 * Connects to Temporal, waiting while the server cannot be reached. A worker started while the
 * server restarts (a crash, a deploy of both, a node moved) connects once it is back instead of
 * exiting and being restarted in a loop; once connected, the SDK's pollers ride out outages by
 * themselves. Anything that is not about reaching the server (a refused API key, a namespace that
 * does not exist) fails at once. Each failed try is logged with what to check.
 */
export async function connectWhenReachable(options: NativeConnectionOptions): Promise<NativeConnection> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await NativeConnection.connect(options);
    } catch (err) {
      if (!isUnreachable(err)) throw err;
      const delayMs = Math.min(MAX_RETRY_DELAY_MS, 500 * 2 ** (attempt - 1));
      Runtime.instance().logger.warn(
        `Temporal at ${options.address} cannot be reached (${(err as Error).message.slice(0, 300)}); trying again in ${delayMs} ms. ` +
          'If this goes on, check TEMPORAL_ADDRESS and that the server is up.',
        { attempt },
      );
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
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
