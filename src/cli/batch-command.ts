// `batch run|status|results|cancel|retry-failed`: a batch from a file (docs/fleet.md, "Batches").
// `run` checks every line before anything starts, then starts (or resumes) the batch, feeds it,
// and shows its progress until it ends: killed and run again, it resumes where it was.
import { createWriteStream } from 'node:fs';
import { basename, extname } from 'node:path';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BrowserTasks } from '../starters/tasks';
import { InvalidInputError } from '../contract/input-problems';
import type { BatchState } from '../contract/batch-messages';
import { BatchEndedError, batchOptionProblems, startBatch, type BatchItemOutcome } from '../starters/batch';
import { batchFileSource, checkBatchFile, type BatchFileCheck } from '../starters/batch-file';

export interface BatchCommandValues {
  concurrency?: string;
  out?: string;
  name?: string;
  'max-queued'?: string;
}

/** Runs one `batch` subcommand; returns the exit code. `fail` throws a usage error. */
export async function batchCommand(
  connect: () => Promise<BrowserTasks>,
  subcommand: string | undefined,
  argument: string | undefined,
  values: BatchCommandValues,
  fail: (message: string) => never,
  cli: string,
): Promise<number> {
  const need = (what: string) => argument ?? fail(`batch ${subcommand} needs ${what}`);
  switch (subcommand) {
    case 'run':
      return runBatch(connect, need('a FILE (.jsonl or .csv)'), values, fail, cli);
    case 'status': {
      console.log(JSON.stringify(await (await connect()).batchState(need('a batch NAME')), null, 2));
      return 0;
    }
    case 'results':
      return writeResults(await connect(), need('a batch NAME'), values.out);
    case 'cancel': {
      const name = need('a batch NAME');
      await (await connect()).cancelBatch(name);
      console.log(
        `Cancellation requested: queued items are dropped, each running task gets one stop. Follow it: ${cli} batch status ${name}`,
      );
      return 0;
    }
    case 'retry-failed': {
      const name = need('a batch NAME');
      const sent = await (await connect()).retryFailed(name);
      console.log(
        sent === 0 ? 'No failed items.' : `${sent} failed items sent again. Follow them: ${cli} batch status ${name}`,
      );
      return 0;
    }
    default:
      return fail(`batch takes run, status, results, cancel or retry-failed (got ${JSON.stringify(subcommand ?? '')})`);
  }
}

/** The default name: the file's, and a hash of its content, so the same command resumes the same batch and an edited file is another. */
function batchNameOf(path: string, contentHash: string): string {
  const stem =
    basename(path, extname(path))
      .replace(/[^A-Za-z0-9._:@+=-]/g, '-')
      .slice(0, 80) || 'batch';
  return `${stem}-${contentHash.slice(0, 12)}`;
}

async function runBatch(
  connect: () => Promise<BrowserTasks>,
  path: string,
  values: BatchCommandValues,
  fail: (message: string) => never,
  cli: string,
): Promise<number> {
  const concurrency = values.concurrency === undefined ? 10 : Number(values.concurrency);
  const maxQueued = values['max-queued'] === undefined ? undefined : Number(values['max-queued']);
  if (maxQueued !== undefined && !(Number.isInteger(maxQueued) && maxQueued >= 1 && maxQueued <= 10_000))
    fail('--max-queued takes a number of items from 1 to 10000');
  let check: BatchFileCheck;
  try {
    // Every line checked before anything starts, with the input validator's words.
    check = await checkBatchFile(path);
  } catch (err) {
    return fail(`cannot read ${path}: ${err instanceof Error ? err.message : err}`);
  }
  const name = values.name ?? batchNameOf(path, check.contentHash);
  const problems = [...batchOptionProblems(name, concurrency), ...check.problems];
  if (check.total === 0 && problems.length === 0) problems.push(`${path} has no items`);
  if (problems.length > 0) throw new InvalidInputError(problems);
  const tasks = await connect();
  const progress = new Progress(process.stderr, check.total);
  // Each look is a query (a billed action): every 2 s on a terminal, every 5 s otherwise.
  const pollMs = Number(process.env.BROWSERAI_BATCH_PROGRESS_MS) || (progress.tty ? 2_000 : 5_000);
  // The file is read again as the batch takes its items: only a page of it is held.
  const batch = await startBatch(tasks.client, tasks.taskQueue, batchFileSource(path, check), {
    name,
    concurrency,
    ...(maxQueued !== undefined ? { maxQueued } : {}),
    onAdded: (added) => progress.added(added),
  });
  console.log(
    `Batch ${name}: ${check.total} items, ${concurrency} at a time. Run the same command again to resume it.`,
  );
  let state: BatchState | undefined;
  let feeding: Error | undefined;
  batch.added.catch((err: Error) => (feeding = err));
  for (;;) {
    state = await tasks.batchState(name).catch((err: unknown) => {
      // Ended by Temporal and no worker tells its counts: nothing more will happen to it.
      if (err instanceof BatchEndedError) throw err;
      return state;
    });
    if (state) progress.show(state);
    if (state && ENDED.includes(state.status)) break;
    if (feeding) throw feeding;
    await sleep(pollMs);
  }
  progress.end(state!);
  if (values.out) await writeResults(tasks, name, values.out);
  else console.log(`Outcomes: ${cli} batch results ${name} --out results.jsonl`);
  if (state!.status === 'cancelled') return 130;
  if (state!.status !== 'completed') {
    // Ended by Temporal: not resumable (its ID is not reused), and its running tasks were cancelled.
    console.error(`Batch ${name} was ${state!.status.replace('_', ' ')} in Temporal: it cannot be resumed.`);
    return 1;
  }
  return state!.failed > 0 ? 1 : 0;
}

/** The statuses a batch never leaves: `batch run` stops watching. */
const ENDED: readonly BatchState['status'][] = ['completed', 'cancelled', 'terminated', 'failed', 'timed_out'];

/** Every item's outcome, one JSON line each in input order, to FILE (or stdout). */
async function writeResults(tasks: BrowserTasks, name: string, out: string | undefined): Promise<number> {
  const stream = out ? createWriteStream(out) : process.stdout;
  const counts: Record<string, number> = {};
  const written = await tasks.batchResults(name, async (outcome: BatchItemOutcome) => {
    counts[outcome.status] = (counts[outcome.status] ?? 0) + 1;
    if (!stream.write(`${JSON.stringify(outcome)}\n`)) await once(stream, 'drain');
  });
  if (out) {
    stream.end();
    await once(stream, 'finish');
    console.error(`${written} outcomes written to ${out}: ${JSON.stringify(counts)}`);
  }
  return 0;
}

/** The progress of a batch: a bar redrawn in place on a terminal, a plain line now and then otherwise. */
class Progress {
  readonly tty: boolean;
  readonly #startedMs = Date.now();
  #firstDone: number | undefined;
  #lastLineMs = 0;
  #lastLine = '';
  #added = 0;

  constructor(
    readonly out: NodeJS.WriteStream,
    readonly total: number,
  ) {
    this.tty = Boolean(out.isTTY);
  }

  added(added: number) {
    this.#added = added;
  }

  show(state: BatchState) {
    const line = this.line(state);
    if (this.tty) this.out.write(`\r${line}\u001b[K`);
    else if (line !== this.#lastLine && Date.now() - this.#lastLineMs >= 10_000) {
      this.out.write(`${line}\n`);
      this.#lastLineMs = Date.now();
      this.#lastLine = line;
    }
  }

  end(state: BatchState) {
    this.out.write(`${this.tty ? '\r' : ''}${this.line(state)}${this.tty ? '\u001b[K' : ''}\n`);
  }

  line(state: BatchState): string {
    const done = state.completed + state.failed + state.cancelled;
    this.#firstDone ??= done;
    const seconds = (Date.now() - this.#startedMs) / 1000;
    // The rate of this run of the command: a resumed batch's earlier items do not count.
    const rate = seconds > 0 ? (done - this.#firstDone) / seconds : 0;
    const left = state.total - done;
    const eta = rate > 0 ? duration(left / rate) : '–';
    const width = 24;
    const filled = state.total > 0 ? Math.round((done / state.total) * width) : width;
    const waiting = state.total - state.added;
    return (
      `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${state.total} done · ${state.failed} failed · ` +
      `${state.running} running · ${state.queued + waiting} queued · ${rate.toFixed(1)}/s · ETA ${eta}` +
      (state.status !== 'running' ? ` · ${state.status}` : '') +
      (this.#added < this.total && this.#added > 0 ? ` · sending ${this.#added}/${this.total}` : '')
    );
  }
}

function duration(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}
