// The compose stack's Prometheus and Grafana, checked without Docker: the dashboard's shape and
// queries, the files docker-compose.yml mounts, and its port bindings. That every metric the
// dashboard queries is one the worker really serves is checked against a real scrape in
// metrics.test.ts.
// Unit tests: no Temporal server.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { ROOT, groupingLabels, metricNames, panelQueries, readDashboard } from './helpers/dashboard';

const compose = readFileSync(resolve(ROOT, 'docker-compose.yml'), 'utf8');

test('metricNames finds the metrics of a query and nothing else', () => {
  const expr =
    'histogram_quantile(0.95, sum by (le, endpoint) (rate(browserai_request_duration_seconds_bucket{job=~"$job", status_class=~"4xx|5xx"}[$__rate_interval]))) ' +
    '/ on (endpoint) group_left sum without (instance) (60 * browserai_requests_total offset 5m) or vector(0) and up';
  assert.deepEqual([...metricNames(expr)].sort(), [
    'browserai_request_duration_seconds_bucket',
    'browserai_requests_total',
    'up',
  ]);
  assert.deepEqual([...groupingLabels(expr)], ['endpoint']);
});

test('the dashboard: every panel queries through the datasource variable, for the selected job and workers, with no task IDs', () => {
  const dashboard = readDashboard();
  assert.equal(dashboard.uid, 'browserai-temporal');
  const variables = dashboard.templating.list.map((v) => `${v.name}:${v.type}`);
  assert.deepEqual(variables, ['datasource:datasource', 'job:query', 'instance:query']);
  assert.ok(dashboard.panels.length >= 10);
  const ids = new Set<number>();
  for (const panel of dashboard.panels) {
    assert.ok(!ids.has(panel.id), `duplicate panel id ${panel.id}`);
    ids.add(panel.id);
    assert.deepEqual(panel.datasource, { type: 'prometheus', uid: '${datasource}' }, panel.title);
    assert.ok(
      panel.gridPos.x >= 0 && panel.gridPos.w > 0 && panel.gridPos.x + panel.gridPos.w <= 24,
      `${panel.title} fits the 24-column grid`,
    );
    assert.ok((panel.targets ?? []).length > 0, `${panel.title} has queries`);
  }
  for (const { panel, expr } of panelQueries(dashboard)) {
    assert.ok(metricNames(expr).size > 0, `${panel}: ${expr}`);
    for (const name of metricNames(expr)) {
      assert.ok(
        expr.includes(`${name}{job=~"$job", instance=~"$instance"`),
        `${panel}: ${name} is filtered by $job and $instance`,
      );
    }
    assert.doesNotMatch(expr, /execution_?id|workflow_?id|run_?id/i, panel);
  }
  // No two panels overlap.
  const cells = new Set<string>();
  for (const {
    title,
    gridPos: { x, y, w, h },
  } of dashboard.panels) {
    for (let col = x; col < x + w; col++) {
      for (let row = y; row < y + h; row++) {
        assert.ok(!cells.has(`${col},${row}`), `${title} overlaps another panel at ${col},${row}`);
        cells.add(`${col},${row}`);
      }
    }
  }
});

test('docker-compose.yml: Prometheus and Grafana with pinned images, ports on PUBLISH_HOST, mounted files present', () => {
  assert.match(compose, /^ {2}prometheus:\n {4}image: prom\/prometheus:v\d+\.\d+\.\d+$/m);
  assert.match(compose, /^ {2}grafana:\n {4}image: grafana\/grafana:\d+\.\d+\.\d+$/m);
  // Every published port, of every service, is bound to PUBLISH_HOST (127.0.0.1 by default).
  const ports = [...compose.matchAll(/^ {4}ports:\n((?: {6}(?:#.*|- .*)\n)+)/gm)].flatMap((m) =>
    m[1].split('\n').filter((l) => l.trim().startsWith('- ')),
  );
  assert.ok(ports.length >= 5, ports.join('\n'));
  for (const line of ports) assert.match(line, /^ {6}- "\$\{PUBLISH_HOST:-127\.0\.0\.1\}:\d+:\d+"$/);
  assert.ok(ports.some((l) => l.includes(':9090:9090')) && ports.some((l) => l.includes(':3000:3000')));
  // The workers serve metrics on the compose network (no published port for 9464).
  assert.match(compose, /^ {2}WORKER_METRICS_ADDRESS: 0\.0\.0\.0:9464$/m);
  assert.ok(!ports.some((l) => l.includes('9464')));
  // Every file or directory mounted from the repository exists.
  const mounts = [...compose.matchAll(/^ {6}- (\.\/[^:]+):/gm)].map((m) => m[1]);
  for (const dir of [
    './deploy/prometheus/prometheus.yml',
    './deploy/grafana/provisioning',
    './deploy/grafana/dashboards',
  ])
    assert.ok(mounts.includes(dir), dir);
  for (const mount of mounts) assert.ok(existsSync(resolve(ROOT, mount)), `${mount} is mounted but missing`);
  // No anonymous access; no fixed default password.
  assert.match(compose, /GF_AUTH_ANONYMOUS_ENABLED: "false"/);
  assert.doesNotMatch(compose, /GF_SECURITY_ADMIN_PASSWORD: /);
});

test('provisioning: the data source uid the dashboard defaults to, the dashboards folder compose mounts, the job Prometheus scrapes', () => {
  const datasource = readFileSync(resolve(ROOT, 'deploy/grafana/provisioning/datasources/prometheus.yml'), 'utf8');
  assert.match(datasource, /^ {4}uid: prometheus$/m);
  assert.match(datasource, /^ {4}url: http:\/\/prometheus:9090$/m);
  const provider = readFileSync(resolve(ROOT, 'deploy/grafana/provisioning/dashboards/browserai.yml'), 'utf8');
  assert.match(provider, /^ {6}path: \/etc\/grafana\/dashboards$/m);
  const prometheus = readFileSync(resolve(ROOT, 'deploy/prometheus/prometheus.yml'), 'utf8');
  assert.match(prometheus, /job_name: browserai-worker/);
  assert.match(prometheus, /names: \[worker, worker-emulated\]/);
  assert.match(prometheus, /port: 9464/);
  const current = readDashboard().templating.list.find((v) => v.name === 'datasource') as unknown as {
    current: { value: string };
  };
  assert.equal(current.current.value, 'prometheus');
});
