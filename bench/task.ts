// The vocabulary shared by the plans, the run, the collection and the reports: a planned task,
// what happened to it while the bench drove it, and what was collected about it afterwards.
import type { BrowserTaskInput, BrowserTaskResult } from '../src/contract/input';

/** A one-time code the bench submits, as a user who sees the code form would. */
export interface PlannedCode {
  value: string;
  /** Written into the instruction, so the emulator task at the code form can be found. */
  tag: string;
  /** `awaiting`: as soon as the emulator shows the form; `after-burst`: `delayMs` after the last workflow start. */
  when: 'awaiting' | 'after-burst';
  delayMs: number;
}

/** An `appendInstructions` signal the bench sends while the task runs, as a caller adding a step would. */
export interface PlannedSignal {
  /** Written into the instruction, so the emulator task can be found running. */
  tag: string;
  /** Sent once the emulator shows the task running, at least this long after its start call. */
  afterMs: number;
}

export interface PlannedTask {
  workflowId: string;
  /** What the report groups by: a round, a kind of code submission, a long or short task… */
  group: string;
  input: BrowserTaskInput;
  /** From the scenario's first start. All 0: one burst, started in batches. */
  startAtMs: number;
  /** The emulated running time (a code task runs it after its code). */
  durationMs: number;
  code?: PlannedCode;
  signal?: PlannedSignal;
}

/** Filled in by the run as things happen. */
export interface TaskRecord {
  plan: PlannedTask;
  startCalledAt?: number;
  firstRunId?: string;
  startError?: string;
  /** When the bench first saw the emulator show the code form. */
  awaitingSeenAt?: number;
  codeSentAt?: number;
  codeAcceptedAt?: number;
  codeError?: string;
  signalSentAt?: number;
  signalError?: string;
  facts?: TaskFacts;
}

/** Collected after the run, from Temporal (description, history) and the emulator; an MCP twin's by its loop. */
export interface TaskFacts {
  status?: string;
  closeTime?: number;
  result?: BrowserTaskResult;
  failure?: string;
  executionId?: string;
  /** Every API request of the task: its create plus every request naming its execution ID. */
  requests?: number;
  /** `started` → `completed` of the emulated task, minutes (includes a wait for the code). */
  taskMinutes?: number;
  /** The emulator's recorded end of the task (epoch ms). */
  endedAt?: number;
  appendAt?: number;
  lastGetAt?: number;
  /** `GET /tasks/{id}` requests that arrived before the task's end: polls while it still ran. */
  getsBeforeEnd?: number;
  codesReceived?: string[];
  history?: HistoryFacts;
}

export interface HistoryFacts {
  /** Summed over every run of the workflow (continue-as-new). */
  events: number;
  runs: number;
  pollActivities: number;
  /** By type, e.g. `ActivityTaskScheduled`. */
  eventTypes: Record<string, number>;
  /** Moments (epoch ms) from history event times, for the latency breakdown. */
  signaledAt?: number;
  appendScheduledAt?: number;
  appendStartedAt?: number;
  lastPollCompletedAt?: number;
  /** Every workflow task of the first run, in order: where a message or a close waited. */
  workflowTasks?: WorkflowTaskMoments[];
}

/** One workflow task from its history events (epoch ms); `lost`: it timed out or failed, and was tried again. */
export interface WorkflowTaskMoments {
  scheduledAt?: number;
  startedAt?: number;
  closedAt?: number;
  /** Scheduled on the worker's sticky queue (its cache), not the task queue. */
  sticky?: boolean;
  lost?: 'timed out' | 'failed';
}

export const completedOk = (record: TaskRecord): boolean =>
  record.facts?.status === 'COMPLETED' && record.facts.result?.status === 'finalized';

/** The moments of a task the reports measure between (`between(records, at.ended, at.closed)`). */
export const at = {
  ended: (r: TaskRecord) => r.facts?.endedAt,
  closed: (r: TaskRecord) => r.facts?.closeTime,
  lastGet: (r: TaskRecord) => r.facts?.lastGetAt,
  pollCompleted: (r: TaskRecord) => r.facts?.history?.lastPollCompletedAt,
  awaitingSeen: (r: TaskRecord) => r.awaitingSeenAt,
  codeSent: (r: TaskRecord) => r.codeSentAt,
  codeAccepted: (r: TaskRecord) => r.codeAcceptedAt,
  signaled: (r: TaskRecord) => r.facts?.history?.signaledAt,
  appendScheduled: (r: TaskRecord) => r.facts?.history?.appendScheduledAt,
  appendStarted: (r: TaskRecord) => r.facts?.history?.appendStartedAt,
  appended: (r: TaskRecord) => r.facts?.appendAt,
  signalSent: (r: TaskRecord) => r.signalSentAt,
};

/** A count of a task (requests, history events) per record, for `stats`. */
export const count = {
  requests: (r: TaskRecord) => r.facts?.requests,
  events: (r: TaskRecord) => r.facts?.history?.events,
  perMinute: (r: TaskRecord) =>
    r.facts?.requests !== undefined && r.facts.taskMinutes ? r.facts.requests / r.facts.taskMinutes : undefined,
};
