// The actions scenario: each group in its own namespace with its own worker, all at once, so
// the dev server's `action` counter (labelled by namespace) tells the groups apart. A group's
// count is read before its first start and 3 s after its last close, before the bench reads any
// history (the bench's own calls must not be counted).
import os from 'node:os';
import { Client } from '@temporalio/client';
import { BrowserTasks } from '../../../src/starters/tasks';
import { sleep } from '../../../dev/async';
import { collectFacts } from '../../collect';
import { log } from '../../format';
import { PROJECT } from '../../plan';
import { runTasks, type RunOutcome } from '../../run';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import { withStack, type BenchStack } from '../../stack';
import type { TaskRecord } from '../../task';
import { actionLabels, actionsBetween, readActions, type ActionCounts } from '../../temporal-actions';
import type { WorkerProcess } from '../../worker-process';
import { actionsNamespaces, planActions, type ActionsGroup } from './plan';
import { renderActions } from './report';

/** The server's metrics may lag its last RPCs a little. */
const METRICS_SETTLE_MS = 3_000;

export interface MeasuredGroup {
  group: ActionsGroup;
  records: TaskRecord[];
  actions: ActionCounts;
  outcome: RunOutcome;
  worker: WorkerProcess;
}

export async function measureActions(context: ScenarioContext): Promise<ScenarioReport> {
  const settings = context.config.actions;
  const loadBefore = os.loadavg()[0];
  return withStack({ queueMs: QUEUE_MS, namespaces: actionsNamespaces(settings) }, async (stack) => {
    const groups = planActions(stack, settings);
    const workers = await Promise.all(groups.map((g) => stack.startWorker(g.namespace, g.taskQueue)));
    const longest = Math.max(...groups.map((g) => g.durationMs));
    log(
      `actions: ${groups.map((g) => `${g.tasks.length} ${g.name} × ${g.durationMs / 1000} s`).join(', ')}, each group in its own namespace`,
    );
    const deadlineAt = Date.now() + longest * 1.5 + 5 * 60_000;
    const measured = await Promise.all(groups.map((group, i) => measureGroup(stack, group, workers[i]!, deadlineAt)));
    const labels = await actionLabels(stack.metricsUrl);
    return renderActions({
      context,
      settings,
      stack,
      measured,
      labels,
      load: { before: loadBefore, after: os.loadavg()[0] },
    });
  });
}

async function measureGroup(
  stack: BenchStack,
  group: ActionsGroup,
  worker: WorkerProcess,
  deadlineAt: number,
): Promise<MeasuredGroup> {
  const client = new Client({ connection: stack.temporal.connection, namespace: group.namespace });
  const records = group.tasks.map((plan): TaskRecord => ({ plan }));
  const before = await readActions(stack.metricsUrl, group.namespace);
  const target = {
    tasks: new BrowserTasks(client, group.taskQueue),
    client,
    taskQueue: group.taskQueue,
    emulator: stack.emulator,
    project: PROJECT,
    worker,
    machine: stack.machine,
  };
  const outcome = await runTasks(records, target, { batch: 50, deadlineAt, label: `actions ${group.name}` });
  await sleep(METRICS_SETTLE_MS);
  const actions = actionsBetween(before, await readActions(stack.metricsUrl, group.namespace));
  await collectFacts(client, records, stack.emulator, [...stack.emulator.requests]);
  return { group, records, actions, outcome, worker };
}
