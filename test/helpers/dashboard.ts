// The provisioned Grafana dashboard (deploy/grafana/dashboards/browserai.json) as the tests see
// it: its panels, their PromQL, and the metric names and grouping labels that PromQL uses.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The repository root (this file runs as lib/test/helpers/dashboard.js). */
export const ROOT = resolve(__dirname, '..', '..', '..');
export const DASHBOARD_PATH = resolve(ROOT, 'deploy/grafana/dashboards/browserai.json');

export interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type?: string; uid?: string };
  targets?: Array<{ refId: string; expr: string; legendFormat?: string }>;
}

export interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query?: unknown }> };
}

export function readDashboard(path = DASHBOARD_PATH): Dashboard {
  return JSON.parse(readFileSync(path, 'utf8')) as Dashboard;
}

/** Words PromQL reserves: aggregation and binary-operator keywords, which are not metric names. */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'atan2',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects: identifiers outside strings, label matchers
 * (`{...}`), ranges (`[...]`) and groupings (`by (...)`), that are not followed by `(` (a function
 * or an aggregation) and are not a keyword. Good for the plain queries a dashboard holds.
 */
export function metricNames(expr: string): Set<string> {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/(?<![\w$.])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:]|\s*\()/g)) {
    const name = match[1];
    if (!KEYWORDS.has(name.toLowerCase())) names.add(name);
  }
  return names;
}

/** The labels an expression groups by (`by (a, b)`), `le` excepted (a histogram's bucket bound). */
export function groupingLabels(expr: string): Set<string> {
  const labels = new Set<string>();
  for (const [, list] of expr.matchAll(/\bby\s*\(([^)]*)\)/g)) {
    for (const label of list.split(',').map((l) => l.trim())) if (label && label !== 'le') labels.add(label);
  }
  return labels;
}

/** Every query of every panel, with the panel's title. */
export function panelQueries(dashboard: Dashboard): Array<{ panel: string; expr: string }> {
  return dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })),
  );
}
