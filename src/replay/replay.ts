// Replays workflow histories against workflow code, one report per history: what the `replay`
// command prints and test/replay.test.ts checks. A history exported from a cluster
// (`temporal workflow show --output json -w ID > h.json`) replayed against a new release tells,
// before it is deployed, whether the release would break that workflow (non-determinism).
//
// The SDK's replayer (1.24) panics, in a thread of its own, on a history it cannot read (one whose
// first event is not a complete WorkflowExecutionStarted, a workflow task started and not
// completed, failed or timed out): the replay then never ends and nothing says which file it was.
// So each file's start is checked before anything is replayed (a file that fails is reported
// unreadable), and each history gets a deadline: past it, the history in flight is reported and
// the replay stops (the replay worker cannot be stopped; the `replay` command exits).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { Runtime, Worker, bundleWorkflowCode, type WorkflowBundleOption } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { historyFromJson } from './history-json';

export interface ReplayOptions {
  /** The workflows module the histories are replayed against; default ours (`browserai-temporal/workflows`). */
  workflowsPath?: string;
  /** A bundle made beforehand, instead of bundling `workflowsPath`. */
  workflowBundle?: WorkflowBundleOption;
  /** The one the workers use (encrypted payloads need its codec to be read). */
  dataConverter?: DataConverter;
  /**
   * How long one history may take to replay (the bundling before is not counted); default 60 s.
   * Past it, that history is reported `failed`, the others left are reported not replayed, and
   * the replay worker is abandoned (a process that wants to exit must call `process.exit`).
   */
  historyTimeoutMs?: number;
}

/** Far more than a history of thousands of events takes (a few seconds). */
export const DEFAULT_HISTORY_TIMEOUT_MS = 60_000;

export type ReplayOutcome =
  /** Replayed to its last event: the code makes the same commands the history recorded. */
  | 'replayed'
  /** The code makes other commands than the history recorded: deploying it would break this workflow. */
  | 'nondeterministic'
  /** The replay failed otherwise (the workflow type is not in the code, a task failed on replay). */
  | 'failed'
  /** The file is not a history this reader understands. */
  | 'unreadable';

export interface ReplayReport {
  file: string;
  outcome: ReplayOutcome;
  workflowId?: string;
  workflowType?: string;
  events?: number;
  /** What went wrong, as the SDK's replayer said it (for non-determinism: the event and the command that differ). */
  detail?: string;
  /** For non-determinism: the history event the code no longer matches, when the replayer names it. */
  divergesAt?: { eventId: number; eventType?: string };
}

interface LoadedHistory {
  file: string;
  workflowId: string;
  workflowType?: string;
  history: temporal.api.history.v1.IHistory;
}

/** Reads one exported JSON history; throws with the file's name and what to do when it is not one. */
export function readHistoryFile(file: string): LoadedHistory {
  let history: temporal.api.history.v1.IHistory;
  try {
    history = historyFromJson(JSON.parse(readFileSync(file, 'utf8')));
  } catch (err) {
    throw new Error(
      `${file}: ${err instanceof Error ? err.message : String(err)}. ` +
        'Export a history with `temporal workflow show --output json -w WORKFLOW_ID > FILE.json`.',
      { cause: err },
    );
  }
  const started = startedAttributes(history);
  return {
    file,
    // The started event names the workflow ID on current servers; otherwise the file does.
    workflowId: started?.workflowId || basename(file).replace(/\.json$/i, ''),
    workflowType: started?.workflowType?.name ?? undefined,
    history,
  };
}

/**
 * The first event's attributes, once it is checked to be a WorkflowExecutionStarted event with a
 * workflow type: what the SDK's replayer needs (it panics, and the replay hangs, without).
 */
function startedAttributes(
  history: temporal.api.history.v1.IHistory,
): temporal.api.history.v1.IWorkflowExecutionStartedEventAttributes {
  const first = history.events?.[0];
  const started = first?.workflowExecutionStartedEventAttributes;
  const problem =
    first?.eventType !== temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED || !started
      ? `its first event (${eventName(first)}) is not a WorkflowExecutionStarted event with its attributes`
      : !started.workflowType?.name
        ? 'its WorkflowExecutionStarted event names no workflow type'
        : undefined;
  if (problem)
    throw new TypeError(`not a whole workflow history: ${problem}; export the whole history, from its first event`);
  return started!;
}

function eventName(event: temporal.api.history.v1.IHistoryEvent | undefined): string {
  const type = event?.eventType;
  return (type !== undefined && type !== null && temporal.api.enums.v1.EventType[type]) || 'no event type';
}

/** Replays each file in order (one replay worker for all of them); yields a report per file. */
export async function* replayHistoryFiles(files: string[], options: ReplayOptions = {}): AsyncGenerator<ReplayReport> {
  const loaded: LoadedHistory[] = [];
  for (const file of files) {
    try {
      loaded.push(readHistoryFile(file));
    } catch (err) {
      yield { file, outcome: 'unreadable', detail: err instanceof Error ? err.message : String(err) };
    }
  }
  if (loaded.length === 0) return;
  // Bundled first, so that the deadline of the first history does not count the bundling.
  const workflowBundle =
    options.workflowBundle ??
    (await bundleWorkflowCode({
      workflowsPath: options.workflowsPath ?? require.resolve('../workflows'),
      logger: Runtime.instance().logger,
    }));
  const results = Worker.runReplayHistories(
    { workflowBundle, dataConverter: options.dataConverter },
    loaded.map(({ workflowId, history }) => ({ workflowId, history })),
  )[Symbol.asyncIterator]();
  const timeoutMs = options.historyTimeoutMs ?? DEFAULT_HISTORY_TIMEOUT_MS;
  for (let next = 0; next < loaded.length; next++) {
    const { file, workflowId, workflowType, history } = loaded[next]!;
    const step = await withDeadline(results.next(), timeoutMs);
    if (step === 'timed out') {
      yield {
        file,
        workflowId,
        workflowType,
        events: history.events?.length ?? 0,
        outcome: 'failed',
        detail:
          `the replay did not finish within ${timeoutMs} ms: the SDK's replayer stopped on this history ` +
          '(it does so on a history it cannot read, e.g. a workflow task started and not completed). ' +
          'Check the file is a whole history as `temporal workflow show --output json` exports it.',
      };
      for (const left of loaded.slice(next + 1))
        yield { file: left.file, outcome: 'failed', detail: `not replayed: the replay stopped at ${file}` };
      return;
    }
    if (step.done) return;
    const result = step.value;
    const report: ReplayReport = {
      file,
      workflowId,
      workflowType,
      events: history.events?.length ?? 0,
      outcome: 'replayed',
    };
    if (result.error instanceof DeterminismViolationError) {
      report.outcome = 'nondeterministic';
      Object.assign(report, nondeterminism(result.error.message, history));
    } else if (result.error) {
      report.outcome = 'failed';
      report.detail = result.error.message;
    }
    yield report;
  }
}

/** The promise's value, or 'timed out' once `timeoutMs` has passed (the timer keeps no process alive). */
async function withDeadline<T>(promise: Promise<T>, timeoutMs: number): Promise<T | 'timed out'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timed out'>((resolve) => {
    timer = setTimeout(() => resolve('timed out'), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The core's own sentence out of the replayer's wrapping ("Replay failed ... Details: Workflow activation
 * completion failed: Failure { failure: Some(Failure { message: \"[TMPRL1100] Nondeterminism error: Timer
 * machine does not handle this event: HistoryEvent(id: 5, ActivityTaskScheduled)\" ...") and the event it names.
 */
function nondeterminism(
  message: string,
  history: temporal.api.history.v1.IHistory,
): Pick<ReplayReport, 'detail' | 'divergesAt'> {
  const sentence = /message: "((?:[^"\\]|\\.)*)"/.exec(message)?.[1] ?? message;
  const eventId = Number(/HistoryEvent\(id: (\d+)/.exec(sentence)?.[1] ?? /event(?: id)? (\d+)/i.exec(sentence)?.[1]);
  if (!Number.isInteger(eventId) || eventId <= 0) return { detail: sentence };
  const event = history.events?.find((e) => Number(e.eventId) === eventId);
  const type = event?.eventType;
  return {
    detail: sentence,
    divergesAt: {
      eventId,
      eventType: type === undefined || type === null ? undefined : temporal.api.enums.v1.EventType[type],
    },
  };
}
