// Flag values of the bench and the chaos run, each checked with a message that names the flag.

export function integer(flag: string, raw: string, min: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${flag} must be an integer >= ${min} (got "${raw}")`);
  return value;
}

export function fraction(flag: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1)
    throw new Error(`--${flag} must be between 0 and 1 (got "${raw}")`);
  return value;
}

/** `500ms`, `30s`, `12m`, `1h`; a bare number is seconds. */
export function duration(flag: string, raw: string, min = 1): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(raw);
  const ms = match
    ? Number(match[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h']
    : NaN;
  if (!Number.isFinite(ms) || ms < min)
    throw new Error(`--${flag} must be a duration such as 500ms, 30s or 12m (got "${raw}")`);
  return Math.round(ms);
}
