// Temporal actions and history events per task: short, long and short-span groups, each in its own
// namespace, extrapolated to 3 hours (docs/benchmarks-method.md#actions-of-a-3-hour-task). A group's
// count is read before the bench reads any history: the bench's own calls must not be counted.
import { Client } from '@temporalio/client';
import { collectFacts } from '../collect';
import { fmt, fmtMs, log } from '../format';
import { PROJECT, taskInput } from '../plan';
import { distributions, row, typicalHistory } from '../report/markdown';
import { runTasks } from '../run';
import { QUEUE_MS, scenario } from '../scenario';
import { runTargetOf, type BenchStack } from '../stack';
import { mean, stats, sum } from '../statistics';
import { completedOk, count, type PlannedTask, type TaskRecord } from '../task';
import { actionCategory, actionLabels, countActions } from '../temporal-actions';
import { completedRow, outcomeLines } from '../twins';
import type { WorkerProcess } from '../worker-process';

// 8 for a 1-minute task and 12 for a 5-minute one, with crash recovery within 60 s (issue 17).
// Longer tasks cost what the heartbeat slope says: reported, with no target of its own.
const TARGETS = { shortActions: 8, longActions: 12, historyEvents: 60 } as const;

export const measureActions = scenario({
  heading: '## Temporal actions and history events per task',
  stack: ({ config }) => ({
    queueMs: QUEUE_MS,
    namespaces: ['bench-short', 'bench-long', ...(config.actions.spanTasks > 0 ? ['bench-span'] : [])],
  }),
  plan: (stack, { config: { actions: s } }) => [
    actionsGroup(stack, 'short', s.shortTasks, s.shortDurationMs),
    actionsGroup(stack, 'long', s.longTasks, s.longDurationMs),
    ...(s.spanTasks > 0 ? [actionsGroup(stack, 'span', s.spanTasks, s.spanTaskDurationMs, s.spanMs)] : []),
  ],
  async measure(stack, groups) {
    const workers = await Promise.all(groups.map((g) => stack.startWorker(g.namespace, g.taskQueue)));
    log(`actions: ${groups.map((g) => `${g.tasks.length} ${g.name} × ${g.durationMs / 1000} s`).join(', ')}`);
    const deadlineAt = Date.now() + Math.max(...groups.map((g) => g.durationMs)) * 1.5 + 5 * 60_000;
    const measured = await Promise.all(groups.map((g, i) => measureGroup(stack, g, workers[i]!, deadlineAt)));
    return { measured, labels: await actionLabels(stack.metricsUrl) };
  },
  report({ measured, labels }) {
    const [short, long] = measured as [MeasuredGroup, MeasuredGroup]; // as planned: short, long, span
    const [total, events] = [actionsPerTask, eventsPerTask].map((perTask) => extrapolate(measured, perTask));
    const shortEvents = stats(completed(short).map(count.events));
    const shortLength = fmtMs(short.group.durationMs);
    const perSpan = total?.perSpan !== undefined ? `${fmt(total.perSpan, 1)} per extra span` : 'span cost not measured';
    const perHour = `${fmt(total?.slopePerHour, 1)} per hour of task, ${perSpan}`;
    const hours = total && `${fmt(total.oneHour, 0)} and ${fmt(total.threeHours, 0)} (${perHour})`;
    const events3h = events && `${fmt(events.threeHours, 0)} (${fmt(events.perSpan, 1)} per extra span)`;
    const formula = (what: string, e: typeof total) =>
      e
        ? `${what}: ${fmt(e.short, 1)} + ${fmt(e.slopePerHour, 2)}/h × (3 h − short) + ${EXTRA_SPANS_3H} × ${fmt(e.perSpan ?? 0, 2)} = ${fmt(e.threeHours, 1)}. `
        : '';
    const list = (values: string[] = []) => values.map((v) => `\`${v}\``).join(', ') || 'none';
    const groupText = (g: MeasuredGroup) =>
      `${g.group.name}: ${g.records.length} plain tasks of ${fmtMs(g.group.durationMs)}${g.group.maxSpanMs ? ` with \`polling.maxSpanMs: ${g.group.maxSpanMs}\`` : ''}`;
    return {
      // prettier-ignore
      rows: [
        completedRow('Workflows completed, task finalized', measured.flatMap((g) => g.records)),
        row(`Actions per short task (${shortLength}; the target is for 1 min), mean`, `≤ ${TARGETS.shortActions}`, fmt(total?.short, 1), !!total && total.short <= TARGETS.shortActions, actionsReason(short)),
        row(`Actions per long task (${fmtMs(long.group.durationMs)}; the target is for 5 min), mean`, `≤ ${TARGETS.longActions}`, fmt(total?.long, 1), !!total && total.long <= TARGETS.longActions, actionsReason(long)),
        row('Actions per 1-hour and 3-hour task (**extrapolated**, see below)', '—', hours || 'n/a'),
        row(`History events per short task (${shortLength}), max`, `< ${TARGETS.historyEvents}`, fmt(shortEvents?.max, 0), !!shortEvents && shortEvents.max < TARGETS.historyEvents),
        row('History events per 3-hour task (**extrapolated**, mean)', `< ${TARGETS.historyEvents}`, events3h || 'n/a', !!events && events.threeHours < TARGETS.historyEvents),
      ],
      setup: [
        `- **Groups** (all at once, each in its own namespace with its own worker process at default settings, search attributes registered): ${measured.map(groupText).join('; ')}. Default polling otherwise.`,
        `- **Counted:** the dev server's Prometheus counter \`action\` (labels: ${list(Object.keys(labels))}), in the group's namespace, from just before its first start to 3 s after its last close, divided by its tasks. The bench starts the workflows (counted: that is the workflow start) and lists closed workflows through visibility meanwhile; it reads histories only after the count.`,
        `- **Action types the server reported** (label \`action_type\`): ${list(labels.action_type)}.`,
      ],
      details: [
        ...byTypeTable(measured),
        '',
        `**The 3-hour figures are extrapolated** ([how](docs/benchmarks-method.md#actions-of-a-3-hour-task)): cost(3 h) = cost(short) + slope × (3 h − short duration) + ${EXTRA_SPANS_3H} × cost of one more span. ${formula('Actions', total)}${formula('History events', events)}The default \`timeoutMs\` is 2 h: a real 3-hour task must be started with a larger one.`,
        '',
        ...distributions(
          measured.map((g) => [`History events per task: ${g.group.name}`, stats(completed(g).map(count.events))]),
        ),
        '',
        'Where the history events go (the task with the median count of each group):',
        '',
        ...measured.map((g) => `- ${g.group.name}: ${typicalHistory(completed(g))}`),
        '',
        ...measured.flatMap((g) => outcomeLines(g.outcome, `${g.group.name}: `)),
      ],
      raw: { groups: measured, labels },
    };
  },
});

async function measureGroup(stack: BenchStack, group: ActionsGroup, worker: WorkerProcess, deadlineAt: number) {
  const client = new Client({ connection: stack.temporal.connection, namespace: group.namespace });
  const records = group.tasks.map((plan): TaskRecord => ({ plan }));
  const target = runTargetOf(stack, worker, group.taskQueue, PROJECT, client);
  const options = { deadlineAt, label: `actions ${group.name}` };
  const counted = await countActions(stack.metricsUrl, group.namespace, () => runTasks(records, target, options));
  await collectFacts(client, records, stack.emulator);
  return { group, records, actions: counted.actions, outcome: counted.result };
}

/** Per action type: per task in each group, per hour of task, and at 3 h. */
function byTypeTable(measured: MeasuredGroup[]): string[] {
  const types = [...new Set(measured.flatMap((g) => Object.keys(g.actions.byType)))].sort(
    (a, b) => actionCategory(a).localeCompare(actionCategory(b)) || a.localeCompare(b),
  );
  const columns = measured.map((g) => `${g.group.name} (${fmtMs(g.group.durationMs)})`).join(' | ');
  const typeRow = (label: string, what: string, match: (t: string) => boolean) => {
    const e = extrapolate(measured, (g) => actionsPerTask(g, match));
    return `| ${label} | ${what} | ${measured.map((g) => fmt(actionsPerTask(g, match), 2)).join(' | ')} | ${fmt(e?.slopePerHour, 1)} | ${fmt(e?.threeHours, 1)} |`;
  };
  return [
    "Actions per task, by type (means over each group's tasks):",
    '',
    `| Action type | What it is | ${columns} | per hour of task | 3-h task (extrapolated) |`,
    `|---|---|${measured.map(() => '---|').join('')}---|---|`,
    ...types.map((type) => typeRow(`\`${type}\``, actionCategory(type), (t) => t === type)),
    typeRow('**all**', '', () => true),
    `| poll activities per task | (history) | ${measured.map((g) => fmt(meanPollActivities(g), 2)).join(' | ')} | | |`,
  ];
}

/** Where a group's actions per task went, by type, the most first (a miss's reason). */
function actionsReason(group: MeasuredGroup): string {
  const parts = Object.keys(group.actions.byType)
    .map((type) => [type, actionsPerTask(group, (t) => t === type) ?? 0] as const)
    .sort((a, b) => b[1] - a[1])
    .map(([type, n]) => `${fmt(n, 1)} ${actionCategory(type)} (\`${type}\`)`);
  return `per task, ${parts.join(', ')}; ${fmt(meanPollActivities(group), 1)} poll activities per task in the histories.`;
}

type GroupName = 'short' | 'long' | 'span';
type ActionsGroup = ReturnType<typeof actionsGroup>;
type MeasuredGroup = Awaited<ReturnType<typeof measureGroup>>;

/** `maxSpanMs`: a non-default polling.maxSpanMs (the span group only). */
function actionsGroup(stack: BenchStack, name: GroupName, tasks: number, durationMs: number, maxSpanMs?: number) {
  const plan = (_: unknown, i: number): PlannedTask => ({
    workflowId: `bench-actions-${name}-${i}`,
    group: name,
    startAtMs: 0,
    durationMs,
    input: taskInput(stack, {
      text: `Actions job #a${name}${i}: open https://site${i}.example.com and summarise the front page`,
      durationMs,
      polling: maxSpanMs ? { maxSpanMs } : undefined,
    }),
  });
  const [namespace, taskQueue] = [`bench-${name}`, `bench-actions-${name}`];
  return { name, namespace, taskQueue, durationMs, maxSpanMs, tasks: Array.from({ length: tasks }, plan) };
}

const HOUR_MS = 3_600_000;
/** At the default maxSpanMs (1 h): poll activities of a 3-h task beyond a short one's. */
const EXTRA_SPANS_3H = 2;

/** `perTask` (a group's mean per task) at the short and long lengths, per hour, per further span, at 1 h and 3 h. */
function extrapolate(groups: MeasuredGroup[], perTask: (group: MeasuredGroup) => number | undefined) {
  const [short, long, span] = (['short', 'long', 'span'] as const).map((n) => groups.find((g) => g.group.name === n));
  const [a, b] = [short && perTask(short), long && perTask(long)];
  if (!short || !long || a === undefined || b === undefined) return undefined;
  const slopePerHour = (b - a) / ((long.group.durationMs - short.group.durationMs) / HOUR_MS);
  const atLength = (durationMs: number) => a + slopePerHour * ((durationMs - short.group.durationMs) / HOUR_MS);
  const c = span && perTask(span);
  const extraPolls = span ? (meanPollActivities(span) ?? 0) - (meanPollActivities(short) ?? 0) : 0;
  const perSpan = c !== undefined && extraPolls > 0 ? (c - atLength(span!.group.durationMs)) / extraPolls : undefined;
  // A 1-hour task crosses no span boundary at the default 1-h span; a 3-hour one crosses two.
  const threeHours = atLength(3 * HOUR_MS) + EXTRA_SPANS_3H * (perSpan ?? 0);
  return { short: a, long: b, slopePerHour, perSpan, threeHours, oneHour: atLength(HOUR_MS) };
}

const completed = (group: MeasuredGroup): TaskRecord[] => group.records.filter(completedOk);
/** Means over a group's completed tasks, from their histories. */
const meanPollActivities = (g: MeasuredGroup) => mean(completed(g).map((r) => r.facts!.history?.pollActivities ?? 0));
const eventsPerTask = (g: MeasuredGroup) => mean(completed(g).map((r) => r.facts!.history?.events ?? 0));

/** Actions per task of the group, all types or those `match` picks. */
function actionsPerTask(group: MeasuredGroup, match: (type: string) => boolean = () => true): number | undefined {
  const tasks = group.records.filter((r) => r.firstRunId).length;
  const total = sum(Object.entries(group.actions.byType).map(([type, n]) => (match(type) ? n : 0)));
  return tasks ? total / tasks : undefined;
}
