// Replays workflow histories against workflow code, one report per history: what the `replay`
// command prints and test/replay.test.ts checks. A history exported from a cluster
// (`temporal workflow show --output json -w ID > h.json`) replayed against a new release tells,
// before it is deployed, whether the release would break that workflow (non-determinism).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { historyFromJson } from './history-json';

export interface ReplayOptions {
  /** The workflows module the histories are replayed against; default ours (`browserai-temporal/workflows`). */
  workflowsPath?: string;
  /** A bundle made beforehand, instead of bundling `workflowsPath`. */
  workflowBundle?: WorkflowBundleOption;
  /** The one the workers use (encrypted payloads need its codec to be read). */
  dataConverter?: DataConverter;
}

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
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  return {
    file,
    // The started event names the workflow ID on current servers; otherwise the file does.
    workflowId: started?.workflowId || basename(file).replace(/\.json$/i, ''),
    workflowType: started?.workflowType?.name ?? undefined,
    history,
  };
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
  const results = Worker.runReplayHistories(
    {
      ...(options.workflowBundle
        ? { workflowBundle: options.workflowBundle }
        : { workflowsPath: options.workflowsPath ?? require.resolve('../workflows') }),
      dataConverter: options.dataConverter,
    },
    loaded.map(({ workflowId, history }) => ({ workflowId, history })),
  );
  let next = 0;
  for await (const result of results) {
    const { file, workflowId, workflowType, history } = loaded[next++]!;
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
