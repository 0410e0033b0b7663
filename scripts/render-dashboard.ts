// Dev only (not in CI, not in the package): draws the provisioned Grafana dashboard
// (deploy/grafana/dashboards/browserai.json) as an HTML page of inline SVG, for a screenshot on a
// machine where Grafana itself cannot run. Each panel's own PromQL is run against Prometheus's
// /api/v1/query_range, with the dashboard's variables at "All", and drawn on the panel's gridPos:
// time series as lines with a legend, stats as their last value. Not Grafana: no tooltips, a
// simple look, and only the units and options this dashboard uses.
//
//   node lib/scripts/render-dashboard.js --prometheus http://127.0.0.1:9090 --minutes 15 \
//     --scrape-interval 15 --out /tmp/dashboard.html
//   chromium --headless --no-sandbox --disable-gpu --screenshot=docs/dashboard.png \
//     --window-size=1600,1000 file:///tmp/dashboard.html
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

interface Target {
  refId: string;
  expr: string;
  legendFormat?: string;
}
interface Panel {
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets: Target[];
  fieldConfig: {
    defaults: {
      unit?: string;
      decimals?: number;
      max?: number;
      thresholds?: { steps: Array<{ color: string; value: number | null }> };
    };
  };
  options?: { legend?: { calcs?: string[] }; graphMode?: string };
}
interface Series {
  name: string;
  points: Array<[number, number]>;
}

const { values: args } = parseArgs({
  options: {
    prometheus: { type: 'string', default: 'http://127.0.0.1:9090' },
    dashboard: { type: 'string', default: resolve(__dirname, '../../deploy/grafana/dashboards/browserai.json') },
    minutes: { type: 'string', default: '15' },
    end: { type: 'string' }, // Unix seconds; default now
    'scrape-interval': { type: 'string', default: '15' }, // seconds, as Grafana's data source timeInterval
    width: { type: 'string', default: '1600' },
    height: { type: 'string', default: '1000' },
    out: { type: 'string', default: 'dashboard.html' },
  },
});

const COLORS = [
  '#73BF69',
  '#F2CC0C',
  '#8AB8FF',
  '#FF780A',
  '#F2495C',
  '#5794F2',
  '#B877D9',
  '#FADE2A',
  '#37872D',
  '#C4162A',
  '#1F60C4',
  '#8F3BB8',
  '#FF9830',
  '#96D98D',
  '#FFB357',
  '#CA95E5',
];
const GRAFANA_COLORS: Record<string, string> = {
  green: '#73BF69',
  orange: '#FF9830',
  red: '#F2495C',
  yellow: '#FADE2A',
};

async function main(): Promise<void> {
  const dashboard = JSON.parse(readFileSync(args.dashboard!, 'utf8')) as { title: string; panels: Panel[] };
  const end = Number(args.end ?? Math.floor(Date.now() / 1000));
  const range = Number(args.minutes) * 60;
  const start = end - range;
  const scrape = Number(args['scrape-interval']);
  const step = Math.max(scrape, Math.ceil(range / 240));
  // Grafana's $__rate_interval: at least four scrapes, and at least one step plus a scrape.
  const vars: Record<string, string> = {
    __rate_interval: `${Math.max(step + scrape, 4 * scrape)}s`,
    __range: `${range}s`,
    __interval: `${step}s`,
    job: '.*',
    instance: '.*',
  };
  const width = Number(args.width);
  const height = Number(args.height);
  const header = 44;
  const rows = Math.max(...dashboard.panels.map((p) => p.gridPos.y + p.gridPos.h));
  const col = (width - 16) / 24;
  const row = (height - header - 8) / rows;

  const boxes: string[] = [];
  for (const panel of dashboard.panels) {
    const series: Series[] = [];
    for (const target of panel.targets) {
      const expr = target.expr.replace(/\$(\w+)/g, (whole, name: string) => vars[name] ?? whole);
      series.push(
        ...(await queryRange(expr, start, end, step)).map((s) => ({
          name: legend(target.legendFormat, s.metric),
          points: s.points,
        })),
      );
    }
    const { x, y, w, h } = panel.gridPos;
    const box = { left: 8 + x * col, top: header + y * row, width: w * col - 8, height: h * row - 8 };
    const body =
      panel.type === 'stat'
        ? stat(panel, series, box.width, box.height - 28)
        : timeseries(panel, series, start, end, box.width, box.height - 28);
    boxes.push(
      `<div class="panel" style="left:${box.left}px;top:${box.top}px;width:${box.width}px;height:${box.height}px">` +
        `<div class="title">${esc(panel.title)}</div>${body}</div>`,
    );
  }
  const when = `${new Date(start * 1000).toISOString().slice(0, 16).replace('T', ' ')} – ${new Date(end * 1000).toISOString().slice(11, 16)} UTC`;
  writeFileSync(
    args.out!,
    `<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;background:#111217;color:#ccccdc;font:12px/1.3 "DejaVu Sans",Inter,Helvetica,Arial,sans-serif;width:${width}px;height:${height}px;position:relative;overflow:hidden}
.head{position:absolute;left:12px;top:10px;right:12px;display:flex;justify-content:space-between;align-items:baseline}
.head b{font-size:17px;color:#fff}.head span{color:#8e8e8e}
.panel{position:absolute;background:#181b1f;border:1px solid #2c3235;border-radius:3px;overflow:hidden}
.title{font-weight:600;color:#fff;padding:6px 8px;height:16px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.legend{padding:0 8px;font-size:11px;overflow:hidden}.legend div{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.legend i{display:inline-block;width:12px;height:3px;margin:0 5px 3px 0;vertical-align:middle}.legend em{font-style:normal;color:#8e8e8e}
.stats{display:flex;flex-wrap:wrap;gap:6px;padding:0 8px;height:100%;align-content:center;justify-content:space-around}
.stat{text-align:center;min-width:60px}.stat .v{font-size:30px;font-weight:600}.stat .n{color:#8e8e8e}
svg text{fill:#8e8e8e;font-size:10px}
</style></head><body>
<div class="head"><b>${esc(dashboard.title)}</b><span>job=All, instance=All · ${when} · drawn by scripts/render-dashboard.ts from the dashboard's own queries over Prometheus (not Grafana)</span></div>
${boxes.join('\n')}
</body></html>\n`,
  );
  console.log(
    `Wrote ${args.out} (${dashboard.panels.length} panels, ${when}, step ${step}s, rate interval ${vars.__rate_interval})`,
  );
}

async function queryRange(
  expr: string,
  start: number,
  end: number,
  step: number,
): Promise<Array<{ metric: Record<string, string>; points: Array<[number, number]> }>> {
  const url = `${args.prometheus}/api/v1/query_range?${new URLSearchParams({ query: expr, start: `${start}`, end: `${end}`, step: `${step}` })}`;
  const body = (await (await fetch(url)).json()) as {
    status: string;
    error?: string;
    data: { result: Array<{ metric: Record<string, string>; values: Array<[number, string]> }> };
  };
  if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
  return body.data.result.map((r) => ({
    metric: r.metric,
    points: r.values.map(([t, v]) => [t, Number(v)] as [number, number]).filter(([, v]) => Number.isFinite(v)),
  }));
}

function legend(format: string | undefined, metric: Record<string, string>): string {
  return format
    ? format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, label: string) => metric[label] ?? '')
    : JSON.stringify(metric);
}

function timeseries(panel: Panel, series: Series[], start: number, end: number, width: number, height: number): string {
  const calcs = panel.options?.legend?.calcs ?? [];
  // A wide panel lays its legend out in two columns.
  const columns = width > 500 && series.length > 4 ? 2 : 1;
  const legendRows = Math.min(Math.ceil(series.length / columns), Math.floor((height * 0.45) / 14));
  const shownSeries = legendRows * columns;
  const chartHeight = height - legendRows * 14 - 4;
  const left = 62;
  const plotWidth = width - left - 10;
  const plotHeight = chartHeight - 20;
  const max =
    panel.fieldConfig.defaults.max ?? niceMax(Math.max(0, ...series.flatMap((s) => s.points.map(([, v]) => v))));
  const sx = (t: number) => left + ((t - start) / (end - start)) * plotWidth;
  const sy = (v: number) => 4 + plotHeight - (v / max) * plotHeight;
  const unit = panel.fieldConfig.defaults.unit;
  let svg = `<svg width="${width}" height="${chartHeight}">`;
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    svg += `<line x1="${left}" x2="${left + plotWidth}" y1="${sy(v)}" y2="${sy(v)}" stroke="#2c3235"/><text x="${left - 4}" y="${sy(v) + 3}" text-anchor="end">${esc(format(v, unit, 2))}</text>`;
  }
  for (let i = 0; i <= 5; i++) {
    const t = start + ((end - start) * i) / 5;
    svg += `<text x="${sx(t)}" y="${chartHeight - 4}" text-anchor="${i === 0 ? 'start' : i === 5 ? 'end' : 'middle'}">${new Date(t * 1000).toISOString().slice(11, 16)}</text>`;
  }
  series.forEach((s, i) => {
    if (s.points.length === 0) return;
    const path = s.points.map(([t, v]) => `${sx(t).toFixed(1)},${sy(v).toFixed(1)}`).join(' ');
    svg += `<polyline points="${path}" fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="1.6"/>`;
  });
  svg += '</svg>';
  const items = series.slice(0, shownSeries).map((s, i) => {
    const values = s.points.map(([, v]) => v);
    const shown = calcs.map((c) => `${calcName(c)} ${format(calc(c, values), unit, 2)}`).join('  ');
    return `<div><i style="background:${COLORS[i % COLORS.length]}"></i>${esc(s.name)} <em>${esc(shown)}</em></div>`;
  });
  if (series.length > shownSeries)
    items[items.length - 1] = `<div><em>+ ${series.length - shownSeries + 1} more</em></div>`;
  if (series.length === 0) svg = `<div style="padding:40px;text-align:center;color:#8e8e8e">No data</div>`;
  return svg + `<div class="legend" style="column-count:${columns}">${items.join('')}</div>`;
}

function stat(panel: Panel, series: Series[], width: number, height: number): string {
  const { unit, decimals, thresholds } = panel.fieldConfig.defaults;
  if (series.length === 0) return '<div class="stats"><div class="stat"><div class="v">No data</div></div></div>';
  const cells = series.map((s) => {
    const last = s.points.at(-1)?.[1] ?? NaN;
    const step = (thresholds?.steps ?? [{ color: 'green', value: null }])
      .filter((t) => t.value === null || last >= t.value)
      .at(-1)!;
    const color = GRAFANA_COLORS[step.color] ?? step.color;
    const spark =
      panel.options?.graphMode === 'area'
        ? sparkline(s.points, Math.min(width - 16, 220), Math.max(20, height - 80), color)
        : '';
    return `<div class="stat"><div class="v" style="color:${color}">${esc(format(last, unit, decimals ?? 1))}</div>${series.length > 1 ? `<div class="n">${esc(s.name)}</div>` : ''}${spark}</div>`;
  });
  return `<div class="stats" style="height:${height}px">${cells.join('')}</div>`;
}

function sparkline(points: Array<[number, number]>, width: number, height: number, color: string): string {
  if (points.length < 2) return '';
  const [t0, t1] = [points[0][0], points.at(-1)![0]];
  const max = Math.max(1, ...points.map(([, v]) => v));
  const xy = points.map(
    ([t, v]) => `${(((t - t0) / (t1 - t0 || 1)) * width).toFixed(1)},${(height - (v / max) * (height - 2)).toFixed(1)}`,
  );
  return `<svg width="${width}" height="${height}"><polygon points="0,${height} ${xy.join(' ')} ${width},${height}" fill="${color}" fill-opacity="0.2"/><polyline points="${xy.join(' ')}" fill="none" stroke="${color}" stroke-width="1.5"/></svg>`;
}

function calc(name: string, values: number[]): number {
  if (values.length === 0) return NaN;
  if (name === 'sum') return values.reduce((a, b) => a + b, 0);
  if (name === 'max') return Math.max(...values);
  if (name === 'mean') return values.reduce((a, b) => a + b, 0) / values.length;
  return values.at(-1)!; // lastNotNull
}

function calcName(name: string): string {
  return { lastNotNull: 'last', mean: 'mean', max: 'max', sum: 'total' }[name] ?? name;
}

/** The few units this dashboard uses: s, reqps, percent, short, and Grafana's custom `suffix:<text>`. */
function format(value: number, unit: string | undefined, decimals: number): string {
  if (!Number.isFinite(value)) return '–';
  if (unit === 's')
    return value === 0 ? '0 s' : value < 1 ? `${+(value * 1000).toFixed(1)} ms` : `${+value.toFixed(2)} s`;
  const number = Math.abs(value) >= 1000 ? `${+(value / 1000).toFixed(1)}K` : `${+value.toFixed(decimals)}`;
  if (unit === 'reqps') return `${number} req/s`;
  if (unit === 'percent') return `${number}%`;
  if (unit?.startsWith('suffix:')) return `${number}${unit.slice('suffix:'.length).trim()}`;
  return number;
}

function niceMax(value: number): number {
  if (value <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= value * 1.05) ?? 10) * magnitude;
}

function esc(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
