// Drives planned tasks as a service would: start them (one burst in batches, or each at its
// planned moment), type each one-time code when BrowserAI shows the code form, signal the
// instructions planned for a running task, and wait until every one has closed, the deadline passes or the worker dies. Our workflows go through the public
// client API; the MCP client's twins (`target.mcp`) through its own loop. Progress every 10 s.
import os from 'node:os';
import { sleep, within } from '../dev/async';
import { fmt, log, mb } from './format';
import type { McpClient } from './mcp-client';
import type { runTargetOf } from './stack';
import type { TaskRecord } from './task';

const TICK_MS = 500;
const CLOSED_CHECK_MS = 2_000;
/**
 * Each look for closed workflows lists those closed since the previous look began, less this much
 * (visibility may show a close late); a full listing once a minute catches any later still. Listing
 * every closed workflow every 2 s cost the dev server 1 to 4 s a listing at 2,000 closed: the bench
 * was loading the server whose latencies it measures.
 */
const CLOSED_OVERLAP_MS = 30_000;
const CLOSED_FULL_LIST_MS = 60_000;
const PROGRESS_MS = 10_000;
const START_TIMEOUT_MS = 60_000;
/** Tags written into instructions so the task at the code form can be found: `#c12`, `#rl3`… */
const TAG = /#[a-z]+\d+\b/g;

// Where tasks run (`runTargetOf`: one worker's task queue and project); with `mcp` the MCP client's
// twins run instead: it starts them, sends their codes, sees them end.
export type RunTarget = ReturnType<typeof runTargetOf> & { mcp?: McpClient };

export interface RunOptions {
  /** Workflows started at once in a burst; default 50, as the old bench. */
  batch?: number;
  deadlineAt: number;
  /** Prefix of the progress lines. */
  label: string;
  /** Planned start moments count from here (default: now), e.g. shared with the MCP client's twins. */
  firstStartAt?: number;
}

export interface RunOutcome {
  firstStartAt: number;
  /** The last start returned: the end of the start burst. */
  allStartedAt?: number;
  endedAt: number;
  deadlineHit: boolean;
  workerDied?: string;
}

export async function runTasks(records: TaskRecord[], target: RunTarget, options: RunOptions): Promise<RunOutcome> {
  const outcome: RunOutcome = { firstStartAt: options.firstStartAt ?? Date.now(), endedAt: 0, deadlineHit: false };
  const starting = startAll(records, target, options, outcome).then(() => void (outcome.allStartedAt = Date.now()));
  const messagesInFlight = new Set<Promise<void>>();
  const closed = target.mcp?.closed ?? new Set<string>();
  const settled = (r: TaskRecord) => !r.firstRunId || closed.has(r.plan.workflowId);
  let [lastClosedCheck, lastProgress, lastFullList] = [0, Date.now(), 0];
  for (;;) {
    const now = Date.now();
    const exit = target.worker.exited;
    if (now > options.deadlineAt || exit) {
      outcome.deadlineHit = !exit;
      if (exit) outcome.workerDied = `the worker exited (${exit.code ?? exit.signal}) during the run`;
      log(`${options.label}: ${outcome.workerDied ?? 'deadline reached; reporting what finished'}`);
      break;
    }
    if (!target.mcp) submitDueCodes(records, target, outcome, messagesInFlight);
    if (!target.mcp) sendDueSignals(records, target, messagesInFlight);
    if (!target.mcp && now - lastClosedCheck >= CLOSED_CHECK_MS) {
      const full = now - lastFullList >= CLOSED_FULL_LIST_MS;
      await listClosed(target, closed, full ? undefined : lastClosedCheck - CLOSED_OVERLAP_MS);
      if (full) lastFullList = now;
      lastClosedCheck = now;
    }
    const done = outcome.allStartedAt !== undefined && messagesInFlight.size === 0 && records.every(settled);
    if (now - lastProgress >= PROGRESS_MS || done) {
      lastProgress = now;
      log(progressLine(options.label, records, closed, target, now));
    }
    if (done) break;
    await sleep(TICK_MS);
  }
  await within(30_000, starting);
  await within(30_000, Promise.allSettled([...messagesInFlight]));
  outcome.endedAt = Date.now();
  return outcome;
}

async function startAll(records: TaskRecord[], target: RunTarget, options: RunOptions, outcome: RunOutcome) {
  const startOne = async (record: TaskRecord) => {
    if (Date.now() > options.deadlineAt) return;
    record.startCalledAt = Date.now();
    const { input, workflowId } = record.plan;
    const started =
      target.mcp?.start(record) ?? target.tasks.start(input, { workflowId }).then((h) => h.firstExecutionRunId);
    record.firstRunId = await within(START_TIMEOUT_MS, started).catch((err) => void (record.startError = String(err)));
    if (!record.firstRunId) record.startError ??= `Error: start took longer than ${START_TIMEOUT_MS} ms`;
  };
  if (records.every((r) => r.plan.startAtMs === 0)) {
    // One burst, in batches: each batch waits for its slowest start, as the old bench did.
    for (let i = 0, batch = options.batch ?? 50; i < records.length; i += batch)
      await Promise.all(records.slice(i, i + batch).map(startOne));
  } else {
    const startAt = (r: TaskRecord) =>
      sleep(outcome.firstStartAt + r.plan.startAtMs - Date.now()).then(() => startOne(r));
    await Promise.all(records.map(startAt));
  }
  const failed = records.filter((r) => r.startError);
  const first = failed.length ? `; ${failed.length} starts failed, first: ${failed[0]!.startError}` : '';
  log(`${options.label}: started ${records.length - failed.length} workflows${first}`);
}

/** Codes whose moment has come and whose task shows the code form at the emulator. */
function submitDueCodes(records: TaskRecord[], target: RunTarget, outcome: RunOutcome, inFlight: Set<Promise<void>>) {
  const waiting = records.filter((r) => r.plan.code && r.firstRunId && r.codeSentAt === undefined);
  if (waiting.length === 0) return;
  const awaitingTags = tagsShowing(target, 'awaiting');
  const now = Date.now();
  for (const record of waiting.filter((r) => awaitingTags.has(r.plan.code!.tag))) {
    const code = record.plan.code!;
    record.awaitingSeenAt ??= now;
    const from = code.when === 'awaiting' ? record.awaitingSeenAt : outcome.allStartedAt;
    if (from === undefined || now < from + code.delayMs) continue;
    record.codeSentAt = now;
    const sending = target.tasks.submitCode(record.plan.workflowId, code.value).then(
      () => void (record.codeAcceptedAt = Date.now()),
      (err: unknown) => void (record.codeError = String(err)),
    );
    track(inFlight, sending);
  }
}

/** `appendInstructions` signals whose moment has come, to tasks the emulator shows running. */
function sendDueSignals(records: TaskRecord[], target: RunTarget, inFlight: Set<Promise<void>>) {
  const waiting = records.filter((r) => r.plan.signal && r.firstRunId && r.signalSentAt === undefined);
  if (waiting.length === 0) return;
  const runningTags = tagsShowing(target, 'running');
  const now = Date.now();
  for (const record of waiting) {
    const { tag, afterMs } = record.plan.signal!;
    if (!runningTags.has(tag) || now < record.startCalledAt! + afterMs) continue;
    record.signalSentAt = now;
    const instruction = { action: `Then export the listing as JSON ${tag}` };
    const sending = target.tasks.append(record.plan.workflowId, [instruction]);
    track(
      inFlight,
      sending.catch((err: unknown) => void (record.signalError = String(err))),
    );
  }
}

/** The tags of this run's tasks the emulator shows in `status` now. */
function tagsShowing(target: RunTarget, status: string): Set<string> {
  const tasks = target.emulator.runningTasks().filter((t) => t.status === status && t.project === target.project);
  return new Set(tasks.flatMap((t) => t.instructions.flatMap((i) => i.action.match(TAG) ?? [])));
}

/** Keeps `sending` in `inFlight` until it settles: the run waits for every message it sent. */
function track(inFlight: Set<Promise<void>>, sending: Promise<void>): void {
  const settled = sending.finally(() => inFlight.delete(settled));
  inFlight.add(settled);
}

/** Closed workflows of the task queue (closed after `sinceMs`, if given), from visibility: one listing serves every workflow. */
async function listClosed(target: RunTarget, closed: Set<string>, sinceMs?: number): Promise<void> {
  try {
    const since = sinceMs === undefined ? '' : ` AND CloseTime > "${new Date(sinceMs).toISOString()}"`;
    const query = `TaskQueue = '${target.taskQueue}' AND ExecutionStatus != 'Running' AND ExecutionStatus != 'ContinuedAsNew'${since}`;
    for await (const info of target.client.workflow.list({ query, pageSize: 1000 })) closed.add(info.workflowId);
  } catch (err) {
    log(`listing closed workflows failed: ${err}`);
  }
}

function progressLine(label: string, records: TaskRecord[], closed: Set<string>, target: RunTarget, now: number) {
  const last = target.worker.sampler.samples.at(-1);
  const [codes, signals] = [records.filter((r) => r.plan.code), records.filter((r) => r.plan.signal)];
  const busy = target.machine.busyPercent(now - 10_500, now, os.cpus().length);
  return `${label}: started ${records.filter((r) => r.firstRunId).length}/${records.length}${codes.length ? `, codes sent ${codes.filter((r) => r.codeSentAt).length}/${codes.length}` : ''}${signals.length ? `, signals sent ${signals.filter((r) => r.signalSentAt).length}/${signals.length}` : ''}, closed ${records.filter((r) => closed.has(r.plan.workflowId)).length}/${records.length}, worker RSS ${last ? fmt(mb(last.rssKb), 0) : '?'} MB, CPU(10 s) ${fmt(target.worker.sampler.cpuPercent(now - 10_500, now), 0)} %, machine ${fmt(busy, 0)} % busy`;
}
