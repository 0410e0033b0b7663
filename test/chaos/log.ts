// The chaos run's log lines and durations.

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
