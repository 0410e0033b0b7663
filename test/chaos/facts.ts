// The facts of a finished run, per workflow, from both sides: what Temporal says (outcome,
// failure type, the execution ID the workflow recorded) and what BrowserAI holds (tasks created
// for the workflow, codes typed, stops received, tasks still running).
import type { BrowserTasks } from '../../src/starters/tasks';
import type { BrowserAIEmulator, EmulatedTask, RecordedRequest } from '../../src/emulator';
import { BrowserAIExecutionId } from '../../src/contract/search-attributes';
import { isAppend, isCreate, workflowIdOfTask, type TaskView } from './emulator-watch';
import { EXPECTED_OUTCOME, type WorkflowKind } from './plan';
import { outcomeLabel, type WorkflowRecord } from './run';
import { errorText, mapLimit, within } from '../../dev/async';

export interface TaskFacts {
  executionId: string;
  status: string;
  stopCommands: number;
  codesReceived: string[];
  /** When each code arrived and whether the task took it (TOTP tasks: the refused one, then the next step's). */
  codeChecks: Array<{ at: number; accepted: boolean }>;
  /** Appends to it whose answer never arrived whole (a hang, a dropped connection, a 5xx): sends in doubt. */
  appendsWithoutAnswer: number;
  /** When each append to it reached the emulator (epoch ms). */
  appendTimes: number[];
  /** Epoch ms, or null while it runs or awaits. */
  endedAt: number | null;
}

export interface WorkflowFacts {
  workflowId: string;
  kind: WorkflowKind;
  /** `completed`, `cancelled`, `failed: <type>`, `not closed`, `not started`, ... */
  outcome: string;
  expected: string;
  message?: string;
  /** The execution ID the workflow holds (its BrowserAIExecutionId search attribute, or its result). */
  recordedExecutionId?: string;
  temporalStatus?: string;
  /** Every BrowserAI task whose first instruction names this workflow. */
  tasks: TaskFacts[];
  code?: string;
  codeSubmitted: boolean;
  /** submitCode calls made for it (more than one after a failed call). */
  codeSignals: number;
  /** How often the submitted code reached BrowserAI, over all the workflow's tasks. */
  codeTyped: number;
  cancelRequested: boolean;
  cancelTrigger?: string;
  /** When the cancel call returned: the workflow had the cancel by then. */
  cancelDoneAt?: number;
  stops: number;
  problems: string[];
}

export interface ChaosFacts {
  workflows: WorkflowFacts[];
  /** Tasks not ended when the run ended (every workflow closed, or the deadline). */
  runningTasks: Array<{ executionId: string; status: string; workflowId?: string }>;
  faultsByKind: Record<string, number>;
  requests: { total: number; creates: number; appends: number; createsOrAppendsWithoutAnswer: number };
}

export async function gatherFacts(
  records: WorkflowRecord[],
  emulator: BrowserAIEmulator,
  view: TaskView,
  tasks: BrowserTasks,
): Promise<ChaosFacts> {
  const byWorkflow = view.refresh();
  const requests = emulator.requests;
  const createsOrAppends = requests.filter((r) => isCreate(r) || isAppend(r));
  const withoutAnswer = createsOrAppends.filter((r) => r.fault === 'hang' || r.fault === 'drop' || r.status >= 500);
  const appendTarget = (request: RecordedRequest) => decodeURIComponent(request.path.split('/')[2] ?? '');
  const appendsWithoutAnswer = new Map<string, number>();
  for (const request of withoutAnswer.filter(isAppend)) {
    const executionId = appendTarget(request);
    appendsWithoutAnswer.set(executionId, (appendsWithoutAnswer.get(executionId) ?? 0) + 1);
  }
  const appendTimes = new Map<string, number[]>();
  for (const request of requests.filter(isAppend)) {
    const executionId = appendTarget(request);
    appendTimes.set(executionId, [...(appendTimes.get(executionId) ?? []), request.at]);
  }
  const workflows = await mapLimit(records, 20, async (record): Promise<WorkflowFacts> => {
    const { plan } = record;
    const own = (byWorkflow.get(plan.workflowId) ?? []).map((task) =>
      taskFacts(task, appendsWithoutAnswer.get(task.executionId) ?? 0, appendTimes.get(task.executionId) ?? []),
    );
    const problems = [record.startError, record.codeError, record.cancelError, record.resultError].filter(
      (p): p is string => Boolean(p),
    );
    const description = record.startError ? undefined : await describe(tasks, plan.workflowId, problems);
    return {
      workflowId: plan.workflowId,
      kind: plan.kind,
      outcome: outcomeLabel(record),
      expected: EXPECTED_OUTCOME[plan.kind],
      message: record.outcome?.message,
      recordedExecutionId: record.outcome?.executionId ?? description?.executionId,
      temporalStatus: description?.status,
      tasks: own,
      code: plan.code,
      codeSubmitted: record.codeSubmittedAt !== undefined,
      codeSignals: record.codeSignals ?? 0,
      codeTyped: plan.code
        ? own.reduce((sum, task) => sum + task.codesReceived.filter((code) => code === plan.code).length, 0)
        : 0,
      cancelRequested: record.cancel !== undefined && record.cancelError === undefined,
      cancelTrigger: record.cancel?.trigger,
      cancelDoneAt: record.cancel?.doneAt,
      stops: own.reduce((sum, task) => sum + task.stopCommands, 0),
      problems,
    };
  });

  return {
    workflows,
    runningTasks: emulator
      .runningTasks()
      .map((task) => ({ executionId: task.executionId, status: task.status, workflowId: workflowIdOfTask(task) })),
    faultsByKind: { ...emulator.injectedFaults() },
    requests: {
      total: requests.length,
      creates: requests.filter(isCreate).length,
      appends: requests.filter(isAppend).length,
      // Answers that never arrived whole: a hang, a dropped connection or a 5xx (a 429 is provably not sent).
      createsOrAppendsWithoutAnswer: withoutAnswer.length,
    },
  };
}

function taskFacts(task: EmulatedTask, appendsWithoutAnswer: number, appendTimes: number[]): TaskFacts {
  return {
    executionId: task.executionId,
    status: task.status,
    stopCommands: task.stopCommands,
    codesReceived: task.codesReceived,
    codeChecks: task.codeChecks.map(({ at, accepted }) => ({ at, accepted })),
    appendsWithoutAnswer,
    appendTimes,
    endedAt: task.endedAt,
  };
}

/** Temporal's view of a workflow: its status and the execution ID it recorded. Needs no worker. */
async function describe(
  tasks: BrowserTasks,
  workflowId: string,
  problems: string[],
): Promise<{ status: string; executionId?: string } | undefined> {
  try {
    const description = await within(15_000, tasks.handle(workflowId).describe());
    if (!description) throw new Error('describe took longer than 15 s');
    const executionId = description.typedSearchAttributes.get(BrowserAIExecutionId);
    return { status: description.status.name, executionId: executionId || undefined };
  } catch (err) {
    problems.push(`describe failed: ${errorText(err)}`);
    return undefined;
  }
}
