// Markdown pieces every scenario's section uses: the target table, distribution rows, the
// misses stated plainly, and the banner that marks a quick run's figures as no result.
import { fmtCount } from '../format';
import type { Stats } from '../statistics';
import { count, type TaskRecord } from '../task';

/** A target row in one line. `met` undefined: no target (information), or nothing to judge it on; `why` it was missed. */
export function row(measure: string, target: string, measured: string, met?: boolean, why?: string) {
  return { measure, target, measured, met, ...(why ? { why } : {}) };
}

export type TargetRow = ReturnType<typeof row>;

export function targetTable(rows: TargetRow[]): string[] {
  const result = (met: boolean | undefined) => (met === undefined ? '—' : met ? '**PASS**' : '**MISS**');
  return [
    '| Measure | Target | Measured | Result |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.measure} | ${r.target} | ${r.measured} | ${result(r.met)} |`),
  ];
}

/** "Misses" paragraph: every missed target by name, or that there were none. */
export function missLines(rows: TargetRow[]): string[] {
  const missed = rows.filter((r) => r.met === false);
  if (missed.length === 0)
    return rows.some((r) => r.met !== undefined) ? ['**Misses:** none; every target was met.'] : [];
  const line = (r: TargetRow) =>
    `- **${r.measure}**: target ${r.target}, measured ${r.measured}.${r.why ? ` Why: ${r.why}` : ''}`;
  return ['**Misses:**', '', ...missed.map(line)];
}

export function distributionRow(label: string, s: Stats | undefined, unit: (v: number) => string = fmtCount): string {
  if (!s) return `| ${label} | 0 | n/a | n/a | n/a | n/a | n/a |`;
  return `| ${label} | ${s.n} | ${unit(s.min)} | ${unit(s.p50)} | ${unit(s.mean)} | ${unit(s.p99)} | ${unit(s.max)} |`;
}

/** A distribution table: the header, then one row per `[label, stats, unit]`. */
export function distributions(rows: ReadonlyArray<readonly [string, Stats | undefined, ((v: number) => string)?]>) {
  const header = ['| Measure | n | min | p50 | mean | p99 | max |', '|---|---|---|---|---|---|---|'];
  return [...header, ...rows.map(([label, s, unit]) => distributionRow(label, s, unit))];
}

/** `p50 … · p99 … · max …` of a distribution. */
export function spread(s: Stats | undefined, unit: (v: number) => string): string {
  return s ? `p50 ${unit(s.p50)} · p99 ${unit(s.p99)} · max ${unit(s.max)}` : 'n/a';
}

export type Bound = 'p50' | 'p99' | 'max';

/**
 * Upper bounds on a distribution's p50, p99 and max: the target text (`p99 ≤ 2000 ms, max ≤ 5000 ms`),
 * whether `s` keeps them, and the bounds it broke (`over`: what a reason has to explain).
 */
export function bounded(
  s: Stats | undefined,
  bounds: Partial<Record<Bound, number>>,
  unit: (v: number) => string,
): { target: string; met: boolean; over: Bound[] } {
  const keys = (['p50', 'p99', 'max'] as const).filter((key) => bounds[key] !== undefined);
  const over = s ? keys.filter((key) => s[key] > bounds[key]!) : [];
  return {
    target: keys.map((key) => `${key} ≤ ${unit(bounds[key]!)}`).join(', '),
    met: !!s && over.length === 0,
    over,
  };
}

/** Heads a quick run's sections: its figures are no results. */
export const QUICK_BANNER =
  '> **Quick mode**: a few short tasks, to check that the bench works. Its figures are no results: targets are judged only to show the report works.';

/** "Where the history events go": the event types of the task with the median event count. */
export function typicalHistory(records: TaskRecord[]): string {
  const sorted = records.filter((r) => r.facts?.history).sort((a, b) => count.events(a)! - count.events(b)!);
  const median = sorted[Math.floor((sorted.length - 1) / 2)]?.facts?.history;
  if (!median) return 'n/a';
  const parts = Object.entries(median.eventTypes)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([type, n]) => `${type} ${n}`);
  return `${median.events} events: ${parts.join(', ')}`;
}
