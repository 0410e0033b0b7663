// Temporal "actions" (what Temporal Cloud bills) as the dev server counts them: the Prometheus
// counter `action{action_type, namespace, operation, service_name}` of its /metrics endpoint. A
// scenario reads it before its first start and after its last close; the difference, in the
// scenario's own namespace, is what its workflows cost.
import { sleep } from '../dev/async';

/** The server's metrics may lag its last RPCs a little. */
const METRICS_SETTLE_MS = 3_000;

/** `byType`: by `action_type` (e.g. `grpc_StartWorkflowExecution`, `command_ScheduleActivityTask`). */
export type ActionCounts = { byType: Record<string, number>; total: number };

/** Every `action` series of the server: its labels and its value. */
async function actionSeries(metricsUrl: string) {
  const response = await fetch(metricsUrl);
  if (!response.ok) throw new Error(`GET ${metricsUrl}: ${response.status}`);
  const series = (await response.text()).split('\n').map((line) => /^action\{([^}]*)\}\s+(\S+)/.exec(line));
  return series.flatMap((match) => (match ? [{ labels: parseLabels(match[1]!), value: Number(match[2]) }] : []));
}

/** `action` of the namespace by action type (summed over its other labels), less `before`'s counts. */
async function readActions(metricsUrl: string, namespace: string, before?: ActionCounts): Promise<ActionCounts> {
  const byType: Record<string, number> = {};
  for (const { labels, value } of await actionSeries(metricsUrl)) {
    const type = labels.action_type ?? '?';
    if (labels.namespace === metricLabelValue(namespace))
      byType[type] = (byType[type] ?? -(before?.byType[type] ?? 0)) + value;
  }
  const counted = Object.entries(byType).filter(([, n]) => n !== 0);
  return { byType: Object.fromEntries(counted), total: counted.reduce((total, [, n]) => total + n, 0) };
}

/** What `body` cost in `namespace`: the counter read before it and once the last counts have landed. */
export async function countActions<T>(metricsUrl: string, namespace: string, body: () => Promise<T>) {
  const before = await readActions(metricsUrl, namespace);
  const result = await body();
  await sleep(METRICS_SETTLE_MS);
  return { result, actions: await readActions(metricsUrl, namespace, before) };
}

/** Every label set seen on `action` series, for the report (which labels exist, which values). */
export async function actionLabels(metricsUrl: string): Promise<Record<string, string[]>> {
  const values: Record<string, Set<string>> = {};
  for (const { labels } of await actionSeries(metricsUrl))
    for (const [name, value] of Object.entries(labels)) (values[name] ??= new Set()).add(value);
  return Object.fromEntries(Object.entries(values).map(([name, set]) => [name, [...set].sort()]));
}

/** What each action type is, in the words of the issue, e.g. `grpc_RecordActivityTaskHeartbeat` → heartbeat. */
export function actionCategory(actionType: string): string {
  const name = actionType.replace(/^(grpc|command)_/, '');
  const known: Array<[RegExp, string]> = [
    [/^StartWorkflowExecution$|^SignalWithStartWorkflowExecution$/, 'workflow start'],
    [/Heartbeat/, 'heartbeats'],
    [/^ScheduleActivityTask$|^activity_task/i, 'activities scheduled'],
    [/^StartTimer$/, 'timers'],
    [/^SignalWorkflowExecution$|SignalExternal/, 'signals'],
    [/Query/, 'queries'],
    [/UpsertWorkflowSearchAttributes|ModifyWorkflowProperties/, 'search-attribute upserts'],
    [/UpdateWorkflowExecution/, 'updates'],
    [/RecordMarker/, 'markers (side effects, local activities)'],
    [/ContinueAsNew/, 'continue-as-new'],
    [/ChildWorkflow/, 'child workflows'],
  ];
  return known.find(([pattern]) => pattern.test(name))?.[1] ?? `other (${actionType})`;
}

/** The server writes label values with every character but letters, digits and `_` as `_` (`bench-short` → `bench_short`). */
const metricLabelValue = (value: string) => value.replace(/[^A-Za-z0-9_]/g, '_');

const parseLabels = (text: string): Record<string, string> =>
  Object.fromEntries([...text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
