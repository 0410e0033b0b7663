// The actions section: what a task costs in Temporal actions, by type, for a one-minute task and
// (extrapolated) a 3-hour one, and its history events, with the method spelled out.
import type { ActionsSettings } from '../../config';
import { describeFeatures } from '../../emulator/probe';
import { fmt, fmtMs } from '../../format';
import {
  DISTRIBUTION_HEADER,
  distributionRow,
  missLines,
  quickBanner,
  targetTable,
  type TargetRow,
} from '../../report/markdown';
import { environmentLines } from '../../report/environment';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import type { BenchStack } from '../../stack';
import { stats } from '../../statistics';
import { actionCategory } from '../../temporal-actions';
import {
  actionsPerTask,
  completed,
  eventsPerTask,
  extrapolate,
  EXTRA_SPANS_3H,
  meanPollActivities,
  type Extrapolation,
} from './extrapolation';
import type { MeasuredGroup } from './measure';
import { typicalHistory } from '../../report/typical-history';

export const ACTIONS_HEADING = '## Temporal actions and history events per task';

// 8 for a 1-minute task and 12 for a 5-minute one, with crash recovery within 60 s (issue 17).
// Longer tasks cost what the heartbeat slope says: reported, with no target of its own.
const TARGETS = { shortActions: 8, longActions: 12, historyEvents: 60 } as const;

interface ActionsInputs {
  context: ScenarioContext;
  settings: ActionsSettings;
  stack: BenchStack;
  measured: MeasuredGroup[];
  labels: Record<string, string[]>;
  load: { before?: number; after?: number };
}

export function renderActions(inputs: ActionsInputs): ScenarioReport {
  const { context, stack, measured, labels } = inputs;
  const short = measured.find((g) => g.group.name === 'short')!;
  const total = extrapolate(measured, (g) => actionsPerTask(g));
  const events = extrapolate(measured, eventsPerTask);
  const shortEvents = stats(completed(short).map((r) => r.facts!.history?.events));
  const rows = targetRows(measured, total, events, shortEvents?.max);
  const lines = [
    ACTIONS_HEADING,
    '',
    ...quickBanner(context.config.quick),
    ...environmentLines(context.env, inputs.load),
    `- **Groups** (all at once, each in its own namespace with its own worker process at default settings, search attributes registered): ` +
      measured
        .map(
          (g) =>
            `${g.group.name}: ${g.records.length} plain tasks of ${fmtMs(g.group.durationMs)}${g.group.maxSpanMs ? ` with \`polling.maxSpanMs: ${g.group.maxSpanMs}\`` : ''}`,
        )
        .join('; ') +
      '. Default polling otherwise.',
    `- **Emulator:** its default mode, queued ${QUEUE_MS} ms; ${describeFeatures(stack.features)}.`,
    `- **Counted:** the dev server's Prometheus counter \`action\` (labels: ${Object.keys(labels)
      .map((l) => `\`${l}\``)
      .join(', ')}), in the group's namespace, ` +
      'from just before its first start to 3 s after its last close, divided by its tasks. The bench starts the workflows (counted: that is the workflow start) ' +
      'and lists closed workflows through visibility meanwhile; it reads histories only after the count.',
    `- **Action types the server reported** (label \`action_type\`): ${(labels.action_type ?? []).map((t) => `\`${t}\``).join(', ') || 'none'}.`,
    '',
    ...targetTable(rows),
    '',
    ...missLines(rows),
    '',
    ...byTypeTable(measured),
    '',
    extrapolationText(total, events),
    '',
    ...DISTRIBUTION_HEADER,
    ...measured.map((g) =>
      distributionRow(
        `History events per task: ${g.group.name}`,
        stats(completed(g).map((r) => r.facts!.history?.events)),
      ),
    ),
    '',
    'Where the history events go (the task with the median count of each group):',
    '',
    ...measured.map((g) => `- ${g.group.name}: ${typicalHistory(completed(g))}`),
    '',
    ...measured.flatMap((g) =>
      g.outcome.deadlineHit || g.outcome.workerDied
        ? [`- ${g.group.name}: **${g.outcome.workerDied ?? 'deadline hit'}**.`]
        : [],
    ),
  ];
  return {
    heading: ACTIONS_HEADING,
    markdown: lines.join('\n'),
    rows,
    raw: { groups: measured.map(({ worker: _w, ...rest }) => rest), labels },
  };
}

function targetRows(
  measured: MeasuredGroup[],
  total: Extrapolation | undefined,
  events: Extrapolation | undefined,
  shortEventsMax: number | undefined,
): TargetRow[] {
  const all = measured.flatMap((g) => g.records);
  const shortLength = fmtMs(measured.find((g) => g.group.name === 'short')?.group.durationMs);
  const done = measured.flatMap(completed);
  return [
    {
      measure: 'Workflows completed, task finalized',
      target: `all ${all.length}`,
      measured: `${done.length} / ${all.length}`,
      met: done.length === all.length,
    },
    {
      measure: `Actions per short task (${shortLength}; the target is for 1 min), mean`,
      target: `≤ ${TARGETS.shortActions}`,
      measured: fmt(total?.short, 1),
      met: total ? total.short <= TARGETS.shortActions : false,
    },
    {
      measure: `Actions per long task (${fmtMs(measured.find((g) => g.group.name === 'long')?.group.durationMs)}; the target is for 5 min), mean`,
      target: `≤ ${TARGETS.longActions}`,
      measured: fmt(total?.long, 1),
      met: total ? total.long <= TARGETS.longActions : false,
    },
    {
      measure: 'Actions per 1-hour and 3-hour task (**extrapolated**, see below)',
      target: '—',
      measured: total
        ? `${fmt(total.oneHour, 0)} and ${fmt(total.threeHours, 0)} (${fmt(total.slopePerHour, 1)} per hour of task${total.perSpan !== undefined ? `, ${fmt(total.perSpan, 1)} per extra span` : ', span cost not measured'})`
        : 'n/a',
      met: undefined,
    },
    {
      measure: `History events per short task (${shortLength}), max`,
      target: `< ${TARGETS.historyEvents}`,
      measured: fmt(shortEventsMax, 0),
      met: shortEventsMax !== undefined ? shortEventsMax < TARGETS.historyEvents : false,
    },
    {
      measure: 'History events per 3-hour task (**extrapolated**, mean)',
      target: `< ${TARGETS.historyEvents}`,
      measured: events ? `${fmt(events.threeHours, 0)} (${fmt(events.perSpan, 1)} per extra span)` : 'n/a',
      met: events ? events.threeHours < TARGETS.historyEvents : false,
    },
  ];
}

/** Per action type: per task in each group, per hour of task, and at 3 h. */
function byTypeTable(measured: MeasuredGroup[]): string[] {
  const types = [...new Set(measured.flatMap((g) => Object.keys(g.actions.byType)))].sort(
    (a, b) => actionCategory(a).localeCompare(actionCategory(b)) || a.localeCompare(b),
  );
  const header = `| Action type | What it is | ${measured.map((g) => `${g.group.name} (${fmtMs(g.group.durationMs)})`).join(' | ')} | per hour of task | 3-h task (extrapolated) |`;
  const row = (label: string, what: string, match: (t: string) => boolean) => {
    const e = extrapolate(measured, (g) => actionsPerTask(g, match));
    return `| ${label} | ${what} | ${measured.map((g) => fmt(actionsPerTask(g, match), 2)).join(' | ')} | ${fmt(e?.slopePerHour, 1)} | ${fmt(e?.threeHours, 1)} |`;
  };
  return [
    "Actions per task, by type (means over each group's tasks):",
    '',
    header,
    `|---|---|${measured.map(() => '---|').join('')}---|---|`,
    ...types.map((type) => row(`\`${type}\``, actionCategory(type), (t) => t === type)),
    row('**all**', '', () => true),
    `| poll activities per task | (history) | ${measured.map((g) => fmt(meanPollActivities(g), 2)).join(' | ')} | | |`,
  ];
}

function extrapolationText(total: Extrapolation | undefined, events: Extrapolation | undefined): string {
  return (
    '**How the 3-hour figures are extrapolated** (no 3-hour task is run): cost(3 h) = cost(short task) + slope × (3 h − short duration) + ' +
    `${EXTRA_SPANS_3H} × cost of one more polling span. The slope is (long − short) / their difference in duration: what keeping a task polled costs per hour ` +
    "(heartbeats, mostly). Neither group crosses a span boundary (1 h by default), so a span is measured apart: the span group's tasks cross several; what they cost beyond " +
    'a default task of their length, over the poll activities they have beyond a short task, is the cost of one more span. A 3-hour task at the default 1-h span has ' +
    `${EXTRA_SPANS_3H} more poll activities than a one-minute one. ` +
    (total
      ? `Actions: ${fmt(total.short, 1)} + ${fmt(total.slopePerHour, 2)}/h × (3 h − short) + ${EXTRA_SPANS_3H} × ${fmt(total.perSpan ?? 0, 2)} = ${fmt(total.threeHours, 1)}. `
      : '') +
    (events
      ? `History events: ${fmt(events.short, 1)} + ${fmt(events.slopePerHour, 2)}/h × (3 h − short) + ${EXTRA_SPANS_3H} × ${fmt(events.perSpan ?? 0, 2)} = ${fmt(events.threeHours, 1)}. `
      : '') +
    'Note the default `timeoutMs` is 2 h: a real 3-hour task must be started with a larger one.'
  );
}
