// Small helpers shared by the chaos modules: waiting, bounded waiting, logging, formatting.

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Sleeps up to `ms`, waking every 250 ms to check `stop()`, so a finished run never waits out a long sleep. */
export async function sleepUnless(ms: number, stop: () => boolean): Promise<void> {
  const until = Date.now() + ms;
  while (!stop() && Date.now() < until) await sleep(Math.min(250, until - Date.now()));
}

/** The promise's value, or `undefined` once `ms` have passed (the promise keeps running). */
export async function within<T>(ms: number, promise: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `fn` over the items with at most `limit` in flight (hundreds of describes at once would only queue up). */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  });
  await Promise.all(lanes);
  return out;
}

let logOrigin = Date.now();
/** Log lines carry the time since the first workflow start, so they line up with the kill records. */
export function setLogOrigin(at: number): void {
  logOrigin = at;
}

export function log(message: string): void {
  const seconds = ((Date.now() - logOrigin) / 1000).toFixed(1).padStart(6);
  console.log(`[chaos ${seconds}s] ${message}`);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

export function errorText(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
