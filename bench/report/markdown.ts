// Markdown pieces every scenario's section uses: the target table, distribution rows, the
// misses stated plainly, and the banner that marks a quick run's figures as no result.
import { fmtCount } from '../format';
import type { Stats } from '../statistics';

export interface TargetRow {
  measure: string;
  target: string;
  measured: string;
  /** undefined: no target (information), or nothing to judge it on. */
  met: boolean | undefined;
  /** Why it was missed, when it was. */
  why?: string;
}

export function targetTable(rows: TargetRow[]): string[] {
  return [
    '| Measure | Target | Measured | Result |',
    '|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.measure} | ${row.target} | ${row.measured} | ${row.met === undefined ? '—' : row.met ? '**PASS**' : '**MISS**'} |`,
    ),
  ];
}

/** "Misses" paragraph: every missed target by name, or that there were none. */
export function missLines(rows: TargetRow[]): string[] {
  const missed = rows.filter((row) => row.met === false);
  if (missed.length === 0)
    return rows.some((row) => row.met !== undefined) ? ['**Misses:** none; every target was met.'] : [];
  return [
    '**Misses:**',
    '',
    ...missed.map(
      (row) => `- **${row.measure}**: target ${row.target}, measured ${row.measured}.${row.why ? ` ${row.why}` : ''}`,
    ),
  ];
}

export const DISTRIBUTION_HEADER = ['| Measure | n | min | p50 | mean | p99 | max |', '|---|---|---|---|---|---|---|'];

export function distributionRow(label: string, s: Stats | undefined, unit: (v: number) => string = fmtCount): string {
  if (!s) return `| ${label} | 0 | n/a | n/a | n/a | n/a | n/a |`;
  return `| ${label} | ${s.n} | ${unit(s.min)} | ${unit(s.p50)} | ${unit(s.mean)} | ${unit(s.p99)} | ${unit(s.max)} |`;
}

export function quickBanner(quick: boolean): string[] {
  return quick
    ? [
        '> **Quick mode**: a few short tasks, to check that the bench works. Its figures are no results: targets are judged only to show the report works.',
        '',
      ]
    : [];
}
