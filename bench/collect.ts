// After a run: each workflow's outcome and history from Temporal, and its requests and end time
// from the emulator. Requests are attributed by execution ID (every endpoint but the create has
// it in its path); each task's single create is added to its count, and the creates are checked
// in total per project, because tasks of one kind share one text and a create names no task.
import type { Client } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import type { BrowserAIEmulator, RecordedRequest } from '../src/emulator';
import type { BrowserTaskResult } from '../src/contract/input';
import { mapLimit, within } from '../dev/async';
import type { HistoryFacts, TaskFacts, TaskRecord, WorkflowTaskMoments } from './task';

const COLLECT_CONCURRENCY = 8;
const CALL_TIMEOUT_MS = 30_000;
const [POLL, APPEND] = ['browserAIPollTask', 'browserAIAppendInstructions'];

/** All requests, `POST /tasks` by project, stop commands and non-2xx answers. */
export function summarizeRequests(requests: RecordedRequest[]) {
  const createsByProject: Record<string, number> = {};
  for (const { method, path, body } of requests) {
    const project = String((body as { project?: unknown } | undefined)?.project ?? '?');
    if (method === 'POST' && path === '/tasks') createsByProject[project] = (createsByProject[project] ?? 0) + 1;
  }
  const stops = requests.filter((r) => r.method === 'POST' && r.path.endsWith('/command')).length;
  const non2xx = requests.filter((r) => r.status < 200 || r.status >= 300).length;
  return { total: requests.length, createsByProject, stops, non2xx };
}

/** Fills `record.facts` for every started workflow, from the emulator's requests so far. */
export async function collectFacts(client: Client, records: TaskRecord[], emulator: BrowserAIEmulator): Promise<void> {
  // Requests naming each execution ID in their path (creates excluded), in arrival order.
  const byExecution = new Map<string, RecordedRequest[]>();
  for (const request of emulator.requests) {
    const id = decodeURIComponent(/^\/(?:tasks|results)\/([^/]+)/.exec(request.path)?.[1] ?? '');
    if (id) byExecution.set(id, [...(byExecution.get(id) ?? []), request]);
  }
  const started = records.filter((r) => r.firstRunId);
  await mapLimit(started, COLLECT_CONCURRENCY, async (record) => {
    const facts: TaskFacts = (record.facts = {});
    const handle = client.workflow.getHandle(record.plan.workflowId);
    try {
      const description = await within(CALL_TIMEOUT_MS, handle.describe());
      if (!description) throw new Error('describe timed out');
      facts.status = description.status.name;
      facts.closeTime = description.closeTime?.getTime();
      if (facts.status === 'COMPLETED')
        facts.result = (await within(CALL_TIMEOUT_MS, handle.result())) as BrowserTaskResult | undefined;
      else if (facts.status !== 'RUNNING')
        await handle.result().catch((err: { cause?: unknown }) => void (facts.failure = String(err.cause ?? err)));
      facts.history = await readHistory(client, record.plan.workflowId, record.firstRunId!);
    } catch (err) {
      facts.failure ??= `collecting failed: ${err}`;
    }
    const executionId = (facts.executionId = facts.result?.executionId);
    if (!executionId) return;
    const own = byExecution.get(executionId) ?? [];
    facts.requests = 1 + own.length;
    facts.appendAt = own.find((r) => r.method === 'POST' && r.path.endsWith('/instructions'))?.at;
    const gets = own.filter((r) => r.method === 'GET' && r.path.startsWith('/tasks/'));
    facts.lastGetAt = gets.at(-1)?.at;
    const task = emulator.task(executionId);
    facts.codesReceived = task?.codesReceived;
    facts.endedAt = task?.endedAt ?? undefined;
    if (task?.endedAt) facts.getsBeforeEnd = gets.filter((r) => r.at < task.endedAt!).length;
    const minutes = task?.endedAt ? (task.endedAt - Date.parse(task.createdAt)) / 60_000 : 0;
    if (minutes > 0) facts.taskMinutes = minutes;
  });
}

/** The history of every run of the chain (continue-as-new), with the moments the latency breakdown needs. */
async function readHistory(client: Client, workflowId: string, firstRunId: string): Promise<HistoryFacts> {
  const facts: HistoryFacts = { events: 0, runs: 0, pollActivities: 0, eventTypes: {}, workflowTasks: [] };
  const workflowTasks = new Map<string, WorkflowTaskMoments>();
  const activityTypes = new Map<string, string>();
  const activityOf = (attributes?: { scheduledEventId?: unknown } | null) =>
    activityTypes.get(String(attributes?.scheduledEventId ?? ''));
  // A function of its own: inline, the loop's `runId` would type itself through its own history.
  const fetchHistory = (runId: string) =>
    within(CALL_TIMEOUT_MS, client.workflow.getHandle(workflowId, runId).fetchHistory());
  let runId: string | undefined = firstRunId;
  while (runId && facts.runs < 50) {
    facts.runs++;
    const history = await fetchHistory(runId);
    if (!history) throw new Error('fetchHistory timed out');
    for (const event of history.events ?? []) {
      facts.events++;
      const type = eventTypeOf(event as Record<string, unknown>);
      facts.eventTypes[type] = (facts.eventTypes[type] ?? 0) + 1;
      const at = optionalTsToMs(event.eventTime);
      const scheduled = event.activityTaskScheduledEventAttributes?.activityType?.name;
      if (scheduled) activityTypes.set(String(event.eventId), scheduled);
      if (scheduled === POLL) facts.pollActivities++;
      if (scheduled === APPEND) facts.appendScheduledAt ??= at;
      if (activityOf(event.activityTaskStartedEventAttributes) === APPEND) facts.appendStartedAt ??= at;
      if (activityOf(event.activityTaskCompletedEventAttributes) === POLL) facts.lastPollCompletedAt = at;
      if (event.workflowExecutionSignaledEventAttributes) facts.signaledAt ??= at;
      noteWorkflowTask(event, String(event.eventId), at, workflowTasks, facts.workflowTasks!);
    }
    // A run that continued as new ends with the event that names the next run.
    runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return facts;
}

/** A workflow task's moments, by the ID of its scheduled event (the events after it name it). */
function noteWorkflowTask(
  event: temporal.api.history.v1.IHistoryEvent,
  eventId: string,
  at: number | undefined,
  byScheduledId: Map<string, WorkflowTaskMoments>,
  list: WorkflowTaskMoments[],
): void {
  const scheduled = event.workflowTaskScheduledEventAttributes;
  if (scheduled) {
    // TASK_QUEUE_KIND_STICKY is 2 in the API's enum.
    const task: WorkflowTaskMoments = { scheduledAt: at, ...(scheduled.taskQueue?.kind === 2 ? { sticky: true } : {}) };
    byScheduledId.set(eventId, task);
    list.push(task);
    return;
  }
  const { workflowTaskStartedEventAttributes: started, workflowTaskCompletedEventAttributes: completed } = event;
  const { workflowTaskTimedOutEventAttributes: timedOut, workflowTaskFailedEventAttributes: failed } = event;
  const task = byScheduledId.get(String((started ?? completed ?? timedOut ?? failed)?.scheduledEventId ?? ''));
  if (!task) return;
  if (started) task.startedAt = at;
  else task.closedAt = at;
  if (timedOut) task.lost = 'timed out';
  if (failed) task.lost = 'failed';
}

/** `workflowExecutionStartedEventAttributes` -> `WorkflowExecutionStarted`. */
function eventTypeOf(event: Record<string, unknown>): string {
  const key = Object.keys(event).find((k) => k.endsWith('EventAttributes') && event[k] != null);
  return key ? key[0]!.toUpperCase() + key.slice(1, -'EventAttributes'.length) : `type ${String(event.eventType)}`;
}
