// Summary statistics of per-task measures. Percentiles are nearest-rank: with few tasks the p99
// is the largest value, never an interpolation between two tasks.

export type Stats = { n: number; min: number; p50: number; mean: number; p99: number; max: number };

export function stats(values: Array<number | undefined>): Stats | undefined {
  const sorted = values.filter((v): v is number => v !== undefined && Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const n = sorted.length;
  const rank = (q: number) => sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]!;
  return { n, min: sorted[0]!, p50: rank(0.5), mean: sum(sorted) / n, p99: rank(0.99), max: sorted[n - 1]! };
}

/** Stats of `to(x) - from(x)` over the items where both moments are known. */
export function between<T>(items: T[], from: (item: T) => number | undefined, to: typeof from): Stats | undefined {
  const gap = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : b - a);
  return stats(items.map((item) => gap(from(item), to(item))));
}

export function sum(values: Array<number | undefined>): number {
  return values.reduce<number>((total, v) => total + (v ?? 0), 0);
}

export function mean(values: number[]): number | undefined {
  return values.length === 0 ? undefined : sum(values) / values.length;
}
