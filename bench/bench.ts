// `npm run bench`: N concurrent `browserTask` workflows on ONE worker at its default settings,
// against the BrowserAI emulator and a local Temporal dev server, all on 127.0.0.1. The worker is
// the real entry point (`lib/src/worker.js`) in a child process, so its memory and CPU are
// measured alone. Writes the results to BENCHMARKS.md and prints them.
//
// Configuration (environment, or `--tasks=500`-style arguments):
//   BENCH_TASKS          main-run tasks (default 500)
//   BENCH_TASK_SECONDS   running time of each main-run task (default 60)
//   BENCH_SIGNAL_TASKS   main-run tasks that stop at a one-time-code form and get `submitCode` (default 50)
//   BENCH_SIGNAL_DELAY_SECONDS  wait this long after a task reports awaiting before sending its code (default 0)
//   BENCH_LONG           1/0: the long-task scenario (default on when it fits in the deadline)
//   BENCH_LONG_TASKS     long plain tasks (default 5)
//   BENCH_LONG_SIGNAL_TASKS  long `[needs-code]` tasks in addition (default 2)
//   BENCH_LONG_MINUTES   running time of the long tasks (default 5)
//   BENCH_LONG_SPAN_MS   their polling.maxSpanMs (default 60000)
//   BENCH_BATCH          workflows started per batch (default 50)
//   BENCH_DEADLINE_MINUTES  overall deadline (default 14): the bench stops and reports what it has
//   BENCH_OUTPUT         the Markdown file written (default BENCHMARKS.md at the repository root)
//   BENCH_RAW_JSON       optional: also write per-task data and resource samples to this JSON file
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { BrowserAIEmulator, CODE_WAIT_MS, type RecordedRequest } from '../src/emulator';
import { mapLimit } from './chaos/util';
import { BrowserTasks } from '../src/client/tasks';
import { findTemporalCli } from '../src/dev/temporal-cli';
import type { BrowserTaskInput, BrowserTaskResult } from '../src/workflows/input';
import { startTemporal } from '../test/helpers/stack';

// ---------------------------------------------------------------------------------------------
// Configuration

interface Config {
  tasks: number;
  taskSeconds: number;
  signalTasks: number;
  long: boolean;
  longExplicit: boolean;
  longTasks: number;
  longSignalTasks: number;
  signalDelayMs: number;
  output: string;
  longMinutes: number;
  longSpanMs: number;
  batch: number;
  deadlineMs: number;
  queueMs: number;
}

const TARGETS = {
  requestsPerTaskMinute: 10,
  historyEvents: 60,
  closeLatencyP50Ms: 3_000,
  signalLatencyP50Ms: 300,
  peakRssMb: 600,
} as const;
/** The public MCP client polls `GET /tasks/{id}` every 3 s. */
const BASELINE_POLL_SECONDS = 3;
const BASELINE_REQUESTS_PER_MINUTE = 60 / BASELINE_POLL_SECONDS;
const SAMPLE_MS = 500;

const CONFIG_KEYS: Record<string, keyof Config> = {
  BENCH_TASKS: 'tasks',
  BENCH_TASK_SECONDS: 'taskSeconds',
  BENCH_SIGNAL_TASKS: 'signalTasks',
  BENCH_LONG: 'long',
  BENCH_LONG_TASKS: 'longTasks',
  BENCH_LONG_SIGNAL_TASKS: 'longSignalTasks',
  BENCH_SIGNAL_DELAY_SECONDS: 'signalDelayMs',
  BENCH_OUTPUT: 'output',
  BENCH_LONG_MINUTES: 'longMinutes',
  BENCH_LONG_SPAN_MS: 'longSpanMs',
  BENCH_BATCH: 'batch',
  BENCH_DEADLINE_MINUTES: 'deadlineMs',
};

function readConfig(): Config {
  // `--tasks=20` and `--long-minutes=3` are accepted too, as BENCH_TASKS / BENCH_LONG_MINUTES.
  const values: Record<string, string> = {};
  for (const name of Object.keys(CONFIG_KEYS)) {
    const value = process.env[name];
    if (value !== undefined && value !== '') values[name] = value;
  }
  for (const arg of process.argv.slice(2)) {
    const match = /^--([a-z-]+)=(.*)$/.exec(arg);
    const name = match && `BENCH_${match[1]!.toUpperCase().replace(/-/g, '_')}`;
    if (!match || !name || !(name in CONFIG_KEYS)) throw new Error(`Unknown argument ${arg}; known: ${Object.keys(CONFIG_KEYS).join(', ')} (as env or --name=value)`);
    values[name] = match[2]!;
  }
  const num = (name: string, fallback: number, min: number): number => {
    const raw = values[name];
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number >= ${min} (got "${raw}")`);
    return value;
  };
  const tasks = Math.floor(num('BENCH_TASKS', 500, 1));
  const signalTasks = Math.floor(num('BENCH_SIGNAL_TASKS', 50, 0));
  if (signalTasks > tasks) throw new Error(`BENCH_SIGNAL_TASKS (${signalTasks}) must not exceed BENCH_TASKS (${tasks})`);
  const deadlineMs = num('BENCH_DEADLINE_MINUTES', 14, 1) * 60_000;
  const longMinutes = num('BENCH_LONG_MINUTES', 5, 1);
  const longRaw = values.BENCH_LONG;
  // On by default only when the long tasks (which run alongside the main run) fit in the deadline.
  const longFits = longMinutes * 60_000 + 3 * 60_000 <= deadlineMs;
  return {
    tasks,
    taskSeconds: num('BENCH_TASK_SECONDS', 60, 1),
    signalTasks,
    long: longRaw === undefined ? longFits : !/^(0|false|no|off)$/i.test(longRaw),
    longExplicit: longRaw !== undefined,
    longTasks: Math.floor(num('BENCH_LONG_TASKS', 5, 1)),
    longSignalTasks: Math.floor(num('BENCH_LONG_SIGNAL_TASKS', 2, 0)),
    signalDelayMs: num('BENCH_SIGNAL_DELAY_SECONDS', 0, 0) * 1000,
    output: resolve(values.BENCH_OUTPUT ?? resolve(__dirname, '../../BENCHMARKS.md')),
    longMinutes,
    longSpanMs: num('BENCH_LONG_SPAN_MS', 60_000, 1_000),
    batch: Math.floor(num('BENCH_BATCH', 50, 1)),
    deadlineMs,
    queueMs: 500,
  };
}

function commandLine(): string {
  const envPart = Object.keys(CONFIG_KEYS)
    .filter((name) => process.env[name] !== undefined && process.env[name] !== '')
    .map((name) => `${name}=${process.env[name]}`);
  const args = process.argv.slice(2);
  const base = process.env.npm_lifecycle_event === 'bench' ? 'npm run bench' : 'node lib/bench/bench.js';
  return [...envPart, base, ...(args.length > 0 && base === 'npm run bench' ? ['--', ...args] : args)].join(' ');
}

// ---------------------------------------------------------------------------------------------
// Small helpers

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}


interface Stats {
  n: number;
  p50: number;
  p99: number;
  max: number;
  min: number;
  mean: number;
}

/** Nearest-rank percentiles. */
function stats(values: number[]): Stats | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
  return {
    n: sorted.length,
    p50: rank(0.5),
    p99: rank(0.99),
    max: sorted.at(-1)!,
    min: sorted[0]!,
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
}

const fmt = (value: number | undefined, digits = 1): string => (value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits));
const fmtMs = (ms: number | undefined): string => (ms === undefined ? 'n/a' : ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);
const mb = (kb: number) => kb / 1024;

function log(message: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

// ---------------------------------------------------------------------------------------------
// The worker process and its resource samples

interface Sample {
  at: number;
  rssKb: number;
  cpuTicks: number;
}

class WorkerProcess {
  readonly samples: Sample[] = [];
  readonly outputTail: string[] = [];
  warnLines = 0;
  errorLines = 0;
  exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  hwmKb: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly clkTck: number;

  private constructor(readonly child: ChildProcess) {
    this.clkTck = clockTicks();
  }

  static async start(env: NodeJS.ProcessEnv, readyTimeoutMs: number): Promise<WorkerProcess> {
    const child = spawn(process.execPath, [resolve(__dirname, '../src/worker.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const worker = new WorkerProcess(child);
    worker.startSampling();
    let ready = false;
    const readyPromise = new Promise<void>((resolvePromise, reject) => {
      const onLine = (line: string) => {
        if (!ready && line.includes('browserai-temporal worker: task queue')) {
          ready = true;
          resolvePromise();
        }
      };
      worker.consume(child.stdout!, onLine);
      worker.consume(child.stderr!, onLine);
      child.once('exit', (code, signal) => {
        worker.exited = { code, signal };
        worker.stopSampling();
        if (!ready) reject(new Error(`the worker exited before it was ready (${code ?? signal}):\n${worker.outputTail.join('\n')}`));
      });
    });
    try {
      await within(readyTimeoutMs, readyPromise, 'worker start-up');
    } catch (err) {
      worker.kill();
      throw err;
    }
    return worker;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Drains a pipe (a full pipe would block the worker) and keeps the last lines for diagnostics. */
  private consume(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
    let buffered = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        if (/\bWARN/i.test(line)) this.warnLines++;
        if (/\bERROR\b/i.test(line)) this.errorLines++;
        this.outputTail.push(line.length > 400 ? `${line.slice(0, 400)}…` : line);
        if (this.outputTail.length > 60) this.outputTail.shift();
        onLine(line);
      }
    });
  }

  private startSampling(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
  }

  private stopSampling(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  sample(): void {
    if (this.exited || this.child.pid === undefined) return;
    try {
      const status = readFileSync(`/proc/${this.child.pid}/status`, 'utf8');
      const stat = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8');
      const rss = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
      const hwm = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
      // Fields after the command name (which may contain spaces): utime and stime are 14 and 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      if (hwm) this.hwmKb = Number(hwm[1]);
      if (rss) this.samples.push({ at: Date.now(), rssKb: Number(rss[1]), cpuTicks: ticks });
    } catch {
      // The process is gone between the check and the read.
    }
  }

  cpuPercent(from: number, to: number): number | undefined {
    return avgCpuPercent(this.samples, this.clkTck, from, to);
  }

  peakCpuPercent(from: number, to: number, windowMs: number): number | undefined {
    return peakCpuPercent(this.samples, this.clkTck, from, to, windowMs);
  }

  peakSampledRssKb(from = 0, to = Infinity): number | undefined {
    const inside = this.samples.filter((s) => s.at >= from && s.at <= to);
    return inside.length > 0 ? Math.max(...inside.map((s) => s.rssKb)) : undefined;
  }

  /** SIGTERM (the worker drains and exits by itself), SIGKILL if it takes too long. */
  async stop(graceMs: number): Promise<void> {
    this.sample();
    if (this.exited) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.kill('SIGTERM');
    try {
      await within(graceMs, exited, 'worker shutdown');
    } catch {
      this.kill();
      await within(5_000, exited, 'worker kill').catch(() => undefined);
    }
    this.stopSampling();
  }

  kill(): void {
    this.stopSampling();
    if (!this.exited) this.child.kill('SIGKILL');
  }
}

/** Average CPU (% of one core) between two moments, from the samples inside them. */
function avgCpuPercent(samples: Sample[], ticksPerSecond: number, from: number, to: number): number | undefined {
  const inside = samples.filter((s) => s.at >= from && s.at <= to);
  if (inside.length < 2) return undefined;
  const first = inside[0]!;
  const last = inside.at(-1)!;
  const seconds = (last.at - first.at) / 1000;
  return seconds > 0 ? ((last.cpuTicks - first.cpuTicks) / ticksPerSecond / seconds) * 100 : undefined;
}

/** Highest CPU (% of one core) over any window of `windowMs` between two moments. */
function peakCpuPercent(samples: Sample[], ticksPerSecond: number, from: number, to: number, windowMs: number): number | undefined {
  const inside = samples.filter((s) => s.at >= from && s.at <= to);
  let peak: number | undefined;
  let j = 0;
  for (let i = 0; i < inside.length; i++) {
    while (inside[i]!.at - inside[j]!.at > windowMs) j++;
    const span = (inside[i]!.at - inside[j]!.at) / 1000;
    if (span * 1000 >= windowMs * 0.8) {
      const pct = ((inside[i]!.cpuTicks - inside[j]!.cpuTicks) / ticksPerSecond / span) * 100;
      peak = Math.max(peak ?? 0, pct);
    }
  }
  return peak;
}

/**
 * Context for the worker's figures: the Temporal dev server (a child process of the bench,
 * `temporal`) and the whole machine (`/proc/stat`, every process, other users' included).
 */
class ContextSampler {
  readonly server: Sample[] = [];
  readonly machine: Sample[] = [];
  readonly clkTck = clockTicks();
  serverPid: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  start(): void {
    this.serverPid = findChild(process.pid, 'temporal');
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private sample(): void {
    const at = Date.now();
    try {
      // cpu  user nice system idle iowait irq softirq steal ...: busy = all but idle and iowait.
      const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
      const busy = fields.slice(0, 8).reduce((a, b) => a + b, 0) - fields[3]! - fields[4]!;
      this.machine.push({ at, rssKb: 0, cpuTicks: busy });
    } catch {
      // not Linux
    }
    if (this.serverPid === undefined) return;
    try {
      const stat = readFileSync(`/proc/${this.serverPid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const status = readFileSync(`/proc/${this.serverPid}/status`, 'utf8');
      this.server.push({ at, rssKb: Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0), cpuTicks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      this.serverPid = undefined;
    }
  }
}

function findChild(parent: number, comm: string): number | undefined {
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid === parent && name === comm) return Number(entry);
      } catch {
        // gone
      }
    }
  } catch {
    // no /proc
  }
  return undefined;
}

function clockTicks(): number {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return value > 0 ? value : 100;
  } catch {
    return 100;
  }
}

// ---------------------------------------------------------------------------------------------
// Tasks

interface TaskRun {
  kind: 'main' | 'long';
  index: number;
  /** Written into the instruction, so the create request can be attributed to this task. */
  tag: string;
  workflowId: string;
  input: BrowserTaskInput;
  signal: boolean;
  code?: string;
  firstRunId?: string;
  startCalledAt?: number;
  startError?: string;
  /** When the bench first saw the workflow report awaiting input. */
  awaitingSeenAt?: number;
  signalCalledAt?: number;
  signalResolvedAt?: number;
  signalError?: string;
  // Collected after the run
  workflowStatus?: string;
  closeTime?: number;
  result?: BrowserTaskResult;
  failure?: string;
  historyEvents?: number;
  runs?: number;
  pollActivities?: number;
  /** History events by type (e.g. `ActivityTaskScheduled`), over every run. */
  eventTypes?: Record<string, number>;
  requests?: number;
  creates?: number;
  taskMinutes?: number;
  appendAt?: number;
  codesReceived?: string[];
  /** Diagnostics: moments (epoch ms) from history event times and emulator request arrivals. */
  marks?: {
    signaled?: number;
    appendScheduled?: number;
    appendStarted?: number;
    lastPollCompleted?: number;
    lastGetTask?: number;
  };
}

function makeTasks(config: Config, runId: string): TaskRun[] {
  const base = { type: 'crawler_automation' as const, project: 'bench', geoLocation: { country: 'US' } };
  const runs: TaskRun[] = [];
  if (config.long) {
    for (let i = 0; i < config.longTasks + config.longSignalTasks; i++) {
      const tag = `#l${i}`;
      const signal = i >= config.longTasks;
      runs.push({
        kind: 'long',
        index: i,
        tag,
        workflowId: `bench-${runId}-long-${i}`,
        signal,
        code: signal ? String(randomInt(100_000, 1_000_000)) : undefined,
        // The one non-default setting of the whole bench, and only in this scenario: a short
        // span, to measure what every further span (1 h by default) adds to the history.
        input: {
          ...base,
          instructions: [{ action: `Benchmark long crawl ${tag} [duration=${config.longMinutes}m]${signal ? ' [needs-code]' : ''}` }],
          polling: { maxSpanMs: config.longSpanMs },
        },
      });
    }
  }
  const { tasks: n, signalTasks: s } = config;
  for (let i = 0; i < n; i++) {
    // Spread the signal tasks evenly over the batches.
    const signal = Math.floor(((i + 1) * s) / n) > Math.floor((i * s) / n);
    const tag = `#m${i}`;
    runs.push({
      kind: 'main',
      index: i,
      tag,
      workflowId: `bench-${runId}-main-${i}`,
      signal,
      code: signal ? String(randomInt(100_000, 1_000_000)) : undefined,
      input: {
        ...base,
        instructions: [{ action: `Benchmark crawl ${tag} [duration=${config.taskSeconds}s]${signal ? ' [needs-code]' : ''}` }],
      },
    });
  }
  return runs;
}

// ---------------------------------------------------------------------------------------------
// The run

interface RunOutcome {
  startedAt: number;
  mainFirstStartAt?: number;
  mainLastCloseAt?: number;
  allStartedAt?: number;
  endedAt: number;
  deadlineHit: boolean;
  workerDied?: string;
  /** 1-minute load averages: the machine may be shared with other processes. */
  loadAtStart?: number;
  loadAtEnd?: number;
}

async function monitor(
  config: Config,
  client: Client,
  tasks: BrowserTasks,
  taskQueue: string,
  runs: TaskRun[],
  worker: WorkerProcess,
  context: ContextSampler,
  deadline: number,
  outcome: RunOutcome,
  emulator: BrowserAIEmulator,
): Promise<void> {
  const closed = new Set<string>();
  const signalsInFlight = new Set<Promise<void>>();
  let lastProgress = 0;
  let lastClosedCheck = 0;
  const expected = () => runs.filter((r) => r.startCalledAt !== undefined && !r.startError);

  for (;;) {
    const now = Date.now();
    if (now > deadline) {
      outcome.deadlineHit = true;
      log('Deadline reached: stopping the run and reporting what finished.');
      break;
    }
    if (worker.exited) {
      outcome.workerDied = `the worker exited (${worker.exited.code ?? worker.exited.signal}) in the middle of the run`;
      log(outcome.workerDied);
      break;
    }

    // Signal tasks: submit the code once BrowserAI (the emulator) asks for it, as a user would
    // who sees the code form, after BENCH_SIGNAL_DELAY_SECONDS (0 by default). Reading the
    // emulator adds no load on Temporal, unlike a visibility query every 500 ms.
    const waiting = runs.filter((r) => r.signal && r.firstRunId && r.signalCalledAt === undefined);
    if (waiting.length > 0) {
      const awaitingTags = new Set(
        emulator
          .listTasks()
          .filter((task) => task.status === 'awaiting')
          .map((task) => /#[ml]\d+\b/.exec(task.instructions.map((i) => i.action).join(' '))?.[0]),
      );
      for (const run of waiting) {
        if (!awaitingTags.has(run.tag)) continue;
        run.awaitingSeenAt ??= Date.now();
        if (Date.now() - run.awaitingSeenAt < config.signalDelayMs) continue;
        run.signalCalledAt = Date.now();
        const p = tasks
          .submitCode(run.workflowId, run.code!)
          .then(
            () => void (run.signalResolvedAt = Date.now()),
            (err: unknown) => void (run.signalError = String(err)),
          )
          .finally(() => signalsInFlight.delete(p));
        signalsInFlight.add(p);
      }
    }

    if (now - lastClosedCheck >= 2_000) {
      lastClosedCheck = now;
      try {
        const query = `TaskQueue = '${taskQueue}' AND ExecutionStatus != 'Running' AND ExecutionStatus != 'ContinuedAsNew'`;
        for await (const info of client.workflow.list({ query, pageSize: 1000 })) closed.add(info.workflowId);
      } catch (err) {
        log(`listing closed workflows failed: ${err}`);
      }
    }
    const started = expected();
    const allStarted = outcome.allStartedAt !== undefined;
    const done = allStarted && started.every((r) => closed.has(r.workflowId)) && signalsInFlight.size === 0;

    if (now - lastProgress >= 10_000 || done) {
      lastProgress = now;
      const last = worker.samples.at(-1);
      const main = runs.filter((r) => r.kind === 'main');
      const long = runs.filter((r) => r.kind === 'long');
      log(
        `started ${main.filter((r) => r.firstRunId).length}/${main.length}` +
          (long.length ? ` (+${long.filter((r) => r.firstRunId).length} long)` : '') +
          `, codes submitted ${main.filter((r) => r.signalCalledAt).length}/${main.filter((r) => r.signal).length}` +
          `, closed ${main.filter((r) => closed.has(r.workflowId)).length}/${main.length}` +
          (long.length ? ` (+${long.filter((r) => closed.has(r.workflowId)).length} long)` : '') +
          `, worker RSS ${last ? fmt(mb(last.rssKb), 0) : '?'} MB, CPU(10 s) worker ${fmt(worker.cpuPercent(now - 10_500, now), 0)} %` +
          ` · server ${fmt(avgCpuPercent(context.server, context.clkTck, now - 10_500, now), 0)} %` +
          ` · machine ${fmt((avgCpuPercent(context.machine, context.clkTck, now - 10_500, now) ?? NaN) / os.cpus().length, 0)} % busy`,
      );
    }
    if (done) break;
    await sleep(SAMPLE_MS);
  }
  await within(30_000, Promise.allSettled([...signalsInFlight]), 'signals in flight').catch(() => undefined);
}

async function startAll(tasks: BrowserTasks, runs: TaskRun[], config: Config, deadline: number, outcome: RunOutcome): Promise<void> {
  const long = runs.filter((r) => r.kind === 'long');
  const main = runs.filter((r) => r.kind === 'main');
  const startOne = async (run: TaskRun) => {
    run.startCalledAt = Date.now();
    try {
      const handle = await within(60_000, tasks.start(run.input, { workflowId: run.workflowId }), `start ${run.workflowId}`);
      // The starter types its handle as a plain WorkflowHandle; the client's start() adds the run ID.
      run.firstRunId = (handle as { firstExecutionRunId?: string }).firstExecutionRunId ?? (await handle.describe()).runId;
    } catch (err) {
      run.startError = String(err);
    }
  };
  // The long tasks first: they set the length of the whole bench.
  await Promise.all(long.map(startOne));
  outcome.mainFirstStartAt = Date.now();
  for (let i = 0; i < main.length; i += config.batch) {
    if (Date.now() > deadline) {
      log('Deadline reached while starting workflows: the rest are not started.');
      break;
    }
    await Promise.all(main.slice(i, i + config.batch).map(startOne));
  }
  outcome.allStartedAt = Date.now();
  const failed = runs.filter((r) => r.startError);
  log(`started ${runs.length - failed.length} workflows in ${fmtMs(outcome.allStartedAt - outcome.mainFirstStartAt)}` + (failed.length ? `; ${failed.length} starts failed: ${failed[0]!.startError}` : ''));
}

async function collect(client: Client, runs: TaskRun[], requests: RecordedRequest[], emulator: BrowserAIEmulator): Promise<void> {
  // Requests by execution ID (every endpoint but create carries it in its path), creates by tag.
  const byExecution = new Map<string, RecordedRequest[]>();
  const createsByTag = new Map<string, number>();
  for (const request of requests) {
    if (request.method === 'POST' && request.path === '/tasks') {
      const text = JSON.stringify(request.body ?? '');
      const tag = /#[ml]\d+\b/.exec(text)?.[0];
      if (tag) createsByTag.set(tag, (createsByTag.get(tag) ?? 0) + 1);
      continue;
    }
    const id = /^\/(?:tasks|results)\/([^/]+)/.exec(request.path)?.[1];
    if (!id) continue;
    const list = byExecution.get(id) ?? [];
    list.push(request);
    byExecution.set(id, list);
  }

  await mapLimit(
    runs.filter((r) => r.firstRunId),
    8,
    async (run) => {
      try {
        const handle = client.workflow.getHandle(run.workflowId);
        const description = await within(30_000, handle.describe(), 'describe');
        run.workflowStatus = description.status.name;
        run.closeTime = description.closeTime?.getTime();
        if (run.workflowStatus === 'COMPLETED') {
          run.result = (await within(30_000, handle.result(), 'result')) as BrowserTaskResult;
        } else if (run.workflowStatus !== 'RUNNING') {
          await handle.result().catch((err: unknown) => void (run.failure = String((err as { cause?: unknown }).cause ?? err)));
        }
        // History, summed over every run of the chain (continue-as-new).
        let runId: string | undefined = run.firstRunId;
        let events = 0;
        let polls = 0;
        let chain = 0;
        const types: Record<string, number> = {};
        const activityTypes = new Map<string, string>();
        const marks: NonNullable<TaskRun['marks']> = {};
        while (runId && chain < 50) {
          chain++;
          const history = await within(30_000, client.workflow.getHandle(run.workflowId, runId).fetchHistory(), 'history');
          runId = undefined;
          for (const event of history.events ?? []) {
            events++;
            const type = eventTypeOf(event as Record<string, unknown>);
            types[type] = (types[type] ?? 0) + 1;
            const at = optionalTsToMs(event.eventTime);
            const scheduled = event.activityTaskScheduledEventAttributes;
            if (scheduled) activityTypes.set(String(event.eventId), scheduled.activityType?.name ?? '');
            if (scheduled?.activityType?.name === 'appendInstructions') marks.appendScheduled ??= at;
            const startedOf = activityTypes.get(String(event.activityTaskStartedEventAttributes?.scheduledEventId ?? ''));
            if (startedOf === 'appendInstructions') marks.appendStarted ??= at;
            if (activityTypes.get(String(event.activityTaskCompletedEventAttributes?.scheduledEventId ?? '')) === 'pollTask') marks.lastPollCompleted = at;
            if (event.workflowExecutionSignaledEventAttributes) marks.signaled ??= at;
            if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'pollTask') polls++;
            const next = event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
            if (next) runId = next;
          }
        }
        run.historyEvents = events;
        run.pollActivities = polls;
        run.runs = chain;
        run.eventTypes = types;
        run.marks = marks;
      } catch (err) {
        run.failure ??= `collecting results failed: ${err}`;
      }
      const executionId = run.result?.executionId;
      run.creates = createsByTag.get(run.tag) ?? 0;
      if (executionId) {
        const mine = byExecution.get(encodeURIComponent(executionId)) ?? [];
        run.requests = run.creates + mine.length;
        run.appendAt = mine.find((r) => r.method === 'POST' && r.path.endsWith('/instructions'))?.at;
        const gets = mine.filter((r) => r.method === 'GET' && r.path.startsWith('/tasks/'));
        if (run.marks) run.marks.lastGetTask = gets.at(-1)?.at;
        run.codesReceived = emulator.task(executionId)?.codesReceived;
        const started = Date.parse(run.result!.started ?? '');
        const completed = Date.parse(run.result!.completed ?? '');
        if (Number.isFinite(started) && Number.isFinite(completed) && completed > started) run.taskMinutes = (completed - started) / 60_000;
      }
    },
  );
}

/** `workflowExecutionStartedEventAttributes` -> `WorkflowExecutionStarted`. */
function eventTypeOf(event: Record<string, unknown>): string {
  const key = Object.keys(event).find((k) => k.endsWith('EventAttributes') && event[k] != null);
  return key ? key[0]!.toUpperCase() + key.slice(1, -'EventAttributes'.length) : `type ${String(event.eventType)}`;
}

/** The event types of the task with the median event count, most frequent first. */
function typicalHistory(runs: TaskRun[]): string {
  const withTypes = runs.filter((r) => r.eventTypes && r.historyEvents !== undefined).sort((a, b) => a.historyEvents! - b.historyEvents!);
  const median = withTypes[Math.floor((withTypes.length - 1) / 2)];
  if (!median) return 'n/a';
  const parts = Object.entries(median.eventTypes!)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([type, count]) => `${type} ${count}`);
  return `${median.historyEvents} events: ${parts.join(', ')}`;
}

const ms0 = (v: number) => fmt(v, 0);

interface SpanCost {
  perPoll: number;
  upsertStep: number;
  basePolls: number;
  longPolls: number;
}

/**
 * What one more span (one more poll activity) adds to the history, from short tasks vs long
 * tasks of the same kind: per poll activity without search-attribute upserts, plus the upserts
 * the long task has in addition (a one-off, not per span).
 */
function spanCost(short: TaskRun[], long: TaskRun[]): SpanCost | undefined {
  const a = short.filter((r) => r.historyEvents !== undefined && r.pollActivities !== undefined);
  const b = long.filter((r) => r.historyEvents !== undefined && r.pollActivities !== undefined);
  if (a.length === 0 || b.length === 0) return undefined;
  const avg = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
  const upserts = (r: TaskRun) => r.eventTypes?.UpsertWorkflowSearchAttributes ?? 0;
  const basePolls = avg(a.map((r) => r.pollActivities!));
  const longPolls = avg(b.map((r) => r.pollActivities!));
  if (longPolls <= basePolls) return undefined;
  return {
    perPoll: (avg(b.map((r) => r.historyEvents! - upserts(r))) - avg(a.map((r) => r.historyEvents! - upserts(r)))) / (longPolls - basePolls),
    upsertStep: Math.max(0, avg(b.map(upserts)) - avg(a.map(upserts))),
    basePolls,
    longPolls,
  };
}

function between(runs: TaskRun[], from: (r: TaskRun) => number | undefined, to: (r: TaskRun) => number | undefined): Stats | undefined {
  const values: number[] = [];
  for (const r of runs) {
    const a = from(r);
    const b = to(r);
    if (a !== undefined && b !== undefined && Number.isFinite(a) && Number.isFinite(b)) values.push(b - a);
  }
  return stats(values);
}

function endOf(r: TaskRun): number | undefined {
  const ms = Date.parse(r.result?.completed ?? '');
  return Number.isFinite(ms) ? ms : undefined;
}

/** When a `[needs-code]` task reached the code form: created, queued, then a short run (the emulator's CODE_WAIT_MS). */
function awaitingOf(r: TaskRun, config: Config): number | undefined {
  const created = Date.parse(r.result?.started ?? '');
  return Number.isFinite(created) ? created + config.queueMs + Math.min(CODE_WAIT_MS, config.taskSeconds * 1000) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Report

interface Row {
  metric: string;
  target: string;
  checked: string;
  measured: string;
  pass: boolean | undefined;
}

function verdict(pass: boolean | undefined): string {
  return pass === undefined ? '—' : pass ? '**PASS**' : '**MISS**';
}

function distribution(label: string, s: Stats | undefined, unit: (v: number) => string): string {
  if (!s) return `| ${label} | 0 | n/a | n/a | n/a | n/a | n/a |`;
  return `| ${label} | ${s.n} | ${unit(s.min)} | ${unit(s.p50)} | ${unit(s.mean)} | ${unit(s.p99)} | ${unit(s.max)} |`;
}

function report(
  config: Config,
  runs: TaskRun[],
  worker: WorkerProcess,
  outcome: RunOutcome,
  env: { temporalVersion: string; codeVersion: string; emulatorRequests: RecordedRequest[]; benchCpuPct?: number; context: ContextSampler },
): string {
  const main = runs.filter((r) => r.kind === 'main');
  const long = runs.filter((r) => r.kind === 'long');
  const ok = (r: TaskRun) => r.workflowStatus === 'COMPLETED' && r.result?.status === 'finalized';
  const completed = main.filter(ok);
  const plain = completed.filter((r) => !r.signal);
  const signalled = completed.filter((r) => r.signal);

  const requests = stats(completed.map((r) => r.requests!).filter((v) => v !== undefined));
  const rpm = stats(completed.filter((r) => r.requests !== undefined && r.taskMinutes).map((r) => r.requests! / r.taskMinutes!));
  const rpmPlain = stats(plain.filter((r) => r.requests !== undefined && r.taskMinutes).map((r) => r.requests! / r.taskMinutes!));
  const rpmSignal = stats(signalled.filter((r) => r.requests !== undefined && r.taskMinutes).map((r) => r.requests! / r.taskMinutes!));
  const events = stats(completed.map((r) => r.historyEvents!).filter((v) => v !== undefined));
  const eventsPlain = stats(plain.map((r) => r.historyEvents!).filter((v) => v !== undefined));
  const eventsSignal = stats(signalled.map((r) => r.historyEvents!).filter((v) => v !== undefined));
  const closeLatency = stats(
    completed.filter((r) => r.closeTime !== undefined && r.result?.completed).map((r) => r.closeTime! - Date.parse(r.result!.completed!)),
  );
  const signalLatency = stats(main.filter((r) => r.signal && r.signalCalledAt !== undefined && r.appendAt !== undefined).map((r) => r.appendAt! - r.signalCalledAt!));
  const signalRpc = stats(main.filter((r) => r.signalResolvedAt !== undefined).map((r) => r.signalResolvedAt! - r.signalCalledAt!));

  const windowEnd = outcome.mainLastCloseAt ?? outcome.endedAt;
  const windowStart = outcome.mainFirstStartAt ?? outcome.startedAt;
  const cpuAvg = worker.cpuPercent(windowStart, windowEnd);
  const cpuPeak = worker.peakCpuPercent(windowStart, windowEnd, 5_000);
  const rssSampled = worker.peakSampledRssKb();
  const rssUnderLoad = worker.peakSampledRssKb(windowStart, windowEnd);
  const rssPeakKb = Math.max(rssSampled ?? 0, worker.hwmKb ?? 0) || undefined;

  const creates = env.emulatorRequests.filter((r) => r.method === 'POST' && r.path === '/tasks');
  const stops = env.emulatorRequests.filter((r) => r.method === 'POST' && r.path.endsWith('/command'));
  const non2xx = env.emulatorRequests.filter((r) => r.status < 200 || r.status >= 300);
  const codesOk = runs.filter((r) => r.signal && r.codesReceived?.length === 1 && r.codesReceived[0] === r.code).length;
  const codesTotal = runs.filter((r) => r.signal).length;
  const signalTotal = main.filter((r) => r.signal).length;

  const longDone = long.filter(ok);
  const spanPlain = spanCost(plain, longDone.filter((r) => !r.signal));
  const spanSignal = spanCost(signalled, longDone.filter((r) => r.signal));
  // A 3-h task at the default 1-h span: its poll activity returns at 1 h, at 2 h and at the end: 2 more than a short task.
  const extraSpans3h = 2;
  const extra = (cost: SpanCost | undefined) => (cost ? extraSpans3h * cost.perPoll + cost.upsertStep : undefined);
  const plain3h = eventsPlain && spanPlain ? eventsPlain.max + extra(spanPlain)! : undefined;
  const signal3h = eventsSignal && spanSignal ? eventsSignal.max + extra(spanSignal)! : undefined;
  const worst3h = Math.max(plain3h ?? -Infinity, signal3h ?? -Infinity);

  const rows: Row[] = [
    {
      metric: '1. API requests per task-minute',
      target: `≤ ${TARGETS.requestsPerTaskMinute}`,
      checked: 'max over tasks',
      measured: rpm ? `p50 ${fmt(rpm.p50, 2)} · p99 ${fmt(rpm.p99, 2)} · max ${fmt(rpm.max, 2)}` : 'n/a',
      pass: rpm ? rpm.max <= TARGETS.requestsPerTaskMinute : false,
    },
    {
      metric: '1a. API requests per task (incl. create)',
      target: '—',
      checked: 'info',
      measured: requests ? `p50 ${requests.p50} · p99 ${requests.p99} · max ${requests.max}` : 'n/a',
      pass: undefined,
    },
    {
      metric: `1b. Baseline: public MCP client polling every ${BASELINE_POLL_SECONDS} s`,
      target: '—',
      checked: 'info',
      measured: `${BASELINE_REQUESTS_PER_MINUTE} per task-minute` + (rpm ? ` = ${fmt(BASELINE_REQUESTS_PER_MINUTE / rpm.p50, 1)}× this worker's p50` : ''),
      pass: undefined,
    },
    {
      metric: '2. History events per task',
      target: `< ${TARGETS.historyEvents}`,
      checked: 'max over tasks',
      measured: events ? `p50 ${events.p50} · p99 ${events.p99} · max ${events.max}` : 'n/a',
      pass: events ? events.max < TARGETS.historyEvents : false,
    },
    {
      metric: '2a. History events per task, 3-h task at the default 1-h span (**extrapolated**)',
      target: `< ${TARGETS.historyEvents}`,
      checked: 'max over task kinds',
      measured:
        plain3h === undefined && signal3h === undefined
          ? 'n/a (needs the long scenario)'
          : `plain ≈ ${fmt(plain3h, 0)} · \`[needs-code]\` ≈ ${fmt(signal3h, 0)} (main-run max + 2 measured spans, see below)`,
      pass: plain3h === undefined && signal3h === undefined ? undefined : worst3h < TARGETS.historyEvents,
    },
    {
      metric: '3. Task end → workflow closed',
      target: `p50 < ${TARGETS.closeLatencyP50Ms / 1000} s`,
      checked: 'p50',
      measured: closeLatency ? `p50 ${fmtMs(closeLatency.p50)} · p99 ${fmtMs(closeLatency.p99)} · max ${fmtMs(closeLatency.max)}` : 'n/a',
      pass: closeLatency ? closeLatency.p50 < TARGETS.closeLatencyP50Ms : false,
    },
    {
      metric: '4. submitCode signal → append request',
      target: `p50 < ${TARGETS.signalLatencyP50Ms} ms`,
      checked: 'p50',
      measured: signalLatency ? `p50 ${fmtMs(signalLatency.p50)} · p99 ${fmtMs(signalLatency.p99)} · max ${fmtMs(signalLatency.max)}` : 'n/a',
      pass: signalTotal === 0 ? undefined : signalLatency ? signalLatency.p50 < TARGETS.signalLatencyP50Ms && signalLatency.n === signalTotal : false,
    },
    {
      metric: '5. Worker peak RSS',
      target: `< ${TARGETS.peakRssMb} MB`,
      checked: 'max(VmHWM, sampled VmRSS)',
      measured: rssPeakKb ? `${fmt(mb(rssPeakKb), 0)} MB (under load: ${fmt(rssUnderLoad && mb(rssUnderLoad), 0)} MB)` : 'n/a',
      pass: rssPeakKb ? mb(rssPeakKb) < TARGETS.peakRssMb : false,
    },
    {
      metric: '5a. Worker CPU (% of one core)',
      target: '—',
      checked: 'info',
      measured: `avg ${fmt(cpuAvg, 1)} % · peak 5-s window ${fmt(cpuPeak, 0)} %`,
      pass: undefined,
    },
    {
      metric: '6. Tasks completed',
      target: `all ${config.tasks}`,
      checked: 'workflow COMPLETED and task finalized',
      measured: `${completed.length} / ${config.tasks}`,
      pass: completed.length === config.tasks,
    },
  ];

  const lines: string[] = [];
  const table = [
    '| Metric | Target | Checked on | Measured | Result |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.metric} | ${r.target} | ${r.checked} | ${r.measured} | ${verdict(r.pass)} |`),
  ];

  const now = new Date();
  const cpus = os.cpus();
  lines.push(
    '# Benchmarks',
    '',
    `Generated by \`bench/bench.ts\` on ${now.toISOString()}. Re-run with \`npm run bench\` (this file is replaced).`,
    '',
    '## Setup',
    '',
    `- **Command:** \`${commandLine()}\``,
    `- **Code measured:** ${env.codeVersion} (as built by this run)`,
    `- **Machine:** ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${fmt(os.totalmem() / 1024 ** 3, 1)} GiB memory, ${os.type()} ${os.release()} ${os.arch()}`,
    `- **Node:** ${process.version}; **Temporal:** ${env.temporalVersion} (local dev server, in-memory SQLite); **SDK:** @temporalio/* ${sdkVersion()}`,
    `- **Main run:** N = ${config.tasks} concurrent \`browserTask\` workflows, each task \`[duration=${config.taskSeconds}s]\` after ${config.queueMs} ms queued; ` +
      `${config.signalTasks} of them are \`[needs-code]\` tasks that stop at a one-time-code form and get a \`submitCode\` signal ` +
      (config.signalDelayMs > 0 ? `**${fmt(config.signalDelayMs / 1000, 0)} s after** ` : 'as soon as ') +
      `BrowserAI (the emulator) shows the task \`awaiting\` its code (the bench looks every ${SAMPLE_MS} ms, in-process, adding no load on Temporal); ` +
      `started in batches of ${config.batch}.`,
    `- **Worker:** one process, \`node lib/src/worker.js\`, default settings (no polling options in the input, no worker tuning env); sampled every ${SAMPLE_MS} ms from \`/proc/<pid>\`.`,
    `- **Load average (1 min), other processes included:** ${fmt(outcome.loadAtStart, 2)} before the bench, ${fmt(outcome.loadAtEnd, 2)} at the end of the run.`,
    `- **Everything on 127.0.0.1:** BrowserAI emulator in the bench process (\`queueMs: ${config.queueMs}\`), Temporal dev server from the \`temporal\` CLI.`,
    `- **Wall time:** ${fmtMs(outcome.endedAt - outcome.startedAt)} in all; main run (first start → last close) ${fmtMs(windowEnd - windowStart)}, of which starting the ${config.tasks} workflows took ${fmtMs((outcome.allStartedAt ?? windowEnd) - windowStart)}.` +
      (outcome.deadlineHit ? ` **The ${fmt(config.deadlineMs / 60_000, 0)}-minute deadline was hit: unfinished tasks count as not completed.**` : '') +
      (outcome.workerDied ? ` **${outcome.workerDied}.**` : ''),
    '',
    '## Results',
    '',
    ...table,
    '',
    '### Distributions (completed main-run tasks)',
    '',
    '| Measure | n | min | p50 | mean | p99 | max |',
    '|---|---|---|---|---|---|---|',
    distribution('API requests per task', requests, (v) => fmt(v, v % 1 ? 1 : 0)),
    distribution('API requests per task-minute', rpm, (v) => fmt(v, 2)),
    distribution(`… plain ${config.taskSeconds}-s tasks`, rpmPlain, (v) => fmt(v, 2)),
    distribution('… `[needs-code]` tasks', rpmSignal, (v) => fmt(v, 2)),
    distribution('History events per task', events, (v) => fmt(v, v % 1 ? 1 : 0)),
    distribution(`… plain ${config.taskSeconds}-s tasks`, eventsPlain, (v) => fmt(v, v % 1 ? 1 : 0)),
    distribution('… `[needs-code]` tasks', eventsSignal, (v) => fmt(v, v % 1 ? 1 : 0)),
    distribution('Task end → workflow closed (ms)', closeLatency, (v) => fmt(v, 0)),
    distribution('submitCode → append request (ms)', signalLatency, (v) => fmt(v, 0)),
    distribution('submitCode RPC round trip (ms)', signalRpc, (v) => fmt(v, 0)),
    '',
    '### Where the latency goes (diagnostics, from history event times and emulator arrivals)',
    '',
    '| Step | n | min | p50 | mean | p99 | max |',
    '|---|---|---|---|---|---|---|',
    distribution('Task end → last `GET /tasks` (polling schedule)', between(completed, (r) => endOf(r), (r) => r.marks?.lastGetTask), ms0),
    distribution('Last `GET /tasks` → pollTask completed', between(completed, (r) => r.marks?.lastGetTask, (r) => r.marks?.lastPollCompleted), ms0),
    distribution('pollTask completed → workflow closed (results fetch, completion)', between(completed, (r) => r.marks?.lastPollCompleted, (r) => r.closeTime), ms0),
    distribution('Task awaiting at the emulator → code submitted by the bench', between(signalled, (r) => awaitingOf(r, config), (r) => r.signalCalledAt), ms0),
    distribution('submitCode call → WorkflowExecutionSignaled', between(signalled, (r) => r.signalCalledAt, (r) => r.marks?.signaled), ms0),
    distribution('Signaled → appendInstructions scheduled (workflow task)', between(signalled, (r) => r.marks?.signaled, (r) => r.marks?.appendScheduled), ms0),
    distribution('Scheduled → activity started (dispatch to the worker)', between(signalled, (r) => r.marks?.appendScheduled, (r) => r.marks?.appendStarted), ms0),
    distribution('Activity started → `POST …/instructions` arrives', between(signalled, (r) => r.marks?.appendStarted, (r) => r.appendAt), ms0),
    ...[
      [0, 10],
      [10, 20],
      [20, Infinity],
    ].map(([lo, hi]) =>
      distribution(
        `submitCode → append, codes sent ${hi === Infinity ? `≥ ${lo} s` : `${lo}–${hi} s`} after the first start`,
        between(
          signalled.filter((r) => {
            const t = (r.signalCalledAt! - windowStart) / 1000;
            return t >= lo! && t < hi!;
          }),
          (r) => r.signalCalledAt,
          (r) => r.appendAt,
        ),
        ms0,
      ),
    ),
    '',
    'Where the history events go (the task with the median count of each kind):',
    '',
    `- plain task: ${typicalHistory(plain)}`,
    `- \`[needs-code]\` task: ${typicalHistory(signalled)}`,
    ...(long.length > 0
      ? [`- long plain task: ${typicalHistory(long.filter((r) => ok(r) && !r.signal))}`, `- long \`[needs-code]\` task: ${typicalHistory(long.filter((r) => ok(r) && r.signal))}`]
      : []),
    '',
  );

  // Long tasks
  lines.push('## History of long tasks (1 minute or 3 hours)', '');
  if (long.length === 0) {
    lines.push(config.longExplicit ? '_Skipped (BENCH_LONG=0)._' : '_Skipped: it does not fit in the deadline (BENCH_DEADLINE_MINUTES)._', '');
  }
  if (long.length > 0) {
    const longPlain = stats(longDone.filter((r) => !r.signal).map((r) => r.historyEvents!).filter((v) => v !== undefined));
    const longSignal = stats(longDone.filter((r) => r.signal).map((r) => r.historyEvents!).filter((v) => v !== undefined));
    const longRpm = stats(longDone.filter((r) => r.requests !== undefined && r.taskMinutes).map((r) => r.requests! / r.taskMinutes!));
    const cell = (cost: SpanCost | undefined, f: (c: SpanCost) => string) => (cost ? f(cost) : 'n/a');
    const verdict3h = (v: number | undefined) => (v === undefined ? 'n/a' : `${fmt(v, 0)} → ${v < TARGETS.historyEvents ? '**PASS**' : '**MISS**'}`);
    lines.push(
      `Measured: ${config.longTasks} plain and ${config.longSignalTasks} \`[needs-code]\` tasks of \`[duration=${config.longMinutes}m]\`, run alongside the main run ` +
        `with \`polling: { maxSpanMs: ${config.longSpanMs} }\` (the only non-default setting in the bench), so their polling activity reports back every ` +
        `${fmt(config.longSpanMs / 60_000, 1)} min instead of every hour. Each kind is compared with the same kind of the main run.`,
      '',
      '| Measure | plain | `[needs-code]` |',
      '|---|---|---|',
      `| Long tasks completed | ${longDone.filter((r) => !r.signal).length} / ${config.longTasks} | ${longDone.filter((r) => r.signal).length} / ${config.longSignalTasks} |`,
      `| History events per task: ${config.taskSeconds}-s main-run task (max) → ${config.longMinutes}-min task (max) | ${fmt(eventsPlain?.max, 0)} → ${fmt(longPlain?.max, 0)} | ${fmt(eventsSignal?.max, 0)} → ${fmt(longSignal?.max, 0)} |`,
      `| Poll activities per task (mean): main run → long | ${cell(spanPlain, (c) => `${fmt(c.basePolls, 1)} → ${fmt(c.longPolls, 1)}`)} | ${cell(spanSignal, (c) => `${fmt(c.basePolls, 1)} → ${fmt(c.longPolls, 1)}`)} |`,
      `| History events per extra poll activity, upserts excluded | ${cell(spanPlain, (c) => fmt(c.perPoll, 1))} | ${cell(spanSignal, (c) => fmt(c.perPoll, 1))} |`,
      `| Extra search-attribute upserts of the long task (one-off, e.g. status queued → running first seen at a span end) | ${cell(spanPlain, (c) => fmt(c.upsertStep, 1))} | ${cell(spanSignal, (c) => fmt(c.upsertStep, 1))} |`,
      `| **Extrapolated**: 3-h task at the default 1-h span = main-run max + ${extraSpans3h} × per-activity + extra upserts (target < ${TARGETS.historyEvents}) | ${verdict3h(plain3h)} | ${verdict3h(signal3h)} |`,
      '',
      `API requests per task-minute of the long tasks: p50 ${fmt(longRpm?.p50, 2)}, max ${fmt(longRpm?.max, 2)}.`,
      '',
    );
  }
  lines.push(
    'Why a 3-hour task costs about as many events as a 1-minute one: every `GET /tasks` poll happens inside one long-running `pollTask` activity, which ' +
      'heartbeats (no history events) and returns only when the task changes category (running → awaiting → ended) or after `maxSpanMs` (default 1 h). ' +
      'A 3-hour task therefore needs 2 more poll activities than a 1-minute task, each adding ActivityTaskScheduled/Started/Completed and one workflow ' +
      'task (Scheduled/Started/Completed): 6 events per extra hour, plus one search-attribute upsert if the status seen at the end of a span differs ' +
      'from the last one published (a plain task is still `queued` when its first poll activity starts). The 3-hour figures are an **extrapolation** ' +
      'from the per-span cost measured with a short span, not a 3-hour run. ' +
      'Note that the default `timeoutMs` is 2 h: a 3-hour task must be started with a larger `timeoutMs`, or it is stopped and fails `TaskTimeout`.',
    '',
  );

  lines.push(
    '## What the columns mean',
    '',
    '- **Checked on**: the statistic compared with the target. Percentiles are nearest-rank over the completed main-run tasks.',
    '- **1. API requests per task-minute**: every request the emulator recorded for the task (`POST /tasks` attributed by a tag in the instruction; ' +
      '`GET /tasks/{id}`, `GET /results/{id}`, `POST|PUT /tasks/{id}/instructions`, `POST /tasks/{id}/command` by execution ID), divided by the task\'s ' +
      'emulated lifetime (`started` → `completed` from `GET /results`, so a `[needs-code]` task\'s minute includes its wait for the code). ' +
      `**1b** is the public MCP client, which polls every ${BASELINE_POLL_SECONDS} s: ${BASELINE_REQUESTS_PER_MINUTE} requests per task-minute before any create or results call.`,
    '- **2. History events per task**: `fetchHistory()` event count, summed over every run of the workflow if it continued as new.',
    '- **3. Task end → workflow closed**: from the moment the emulated task ended (`completed` of `GET /results`, the emulator\'s own end time) to the ' +
      'workflow\'s `closeTime` (`describe()`). It covers the last poll noticing the end, fetching the results and completing the workflow.',
    '- **4. submitCode → append request**: from just before the client sends the `submitCode` signal to the arrival of `POST /tasks/{id}/instructions` ' +
      'at the emulator (same clock: both in the bench process). The code is sent once the emulator shows the task awaiting it, as a user sees the code form, ' +
      'which for these tasks is about a second after their create, i.e. while the worker is still busy with the start of all N workflows; the rows ' +
      '"codes sent … after the first start" split the figure by when the code was sent. `BENCH_SIGNAL_DELAY_SECONDS=25` sends each code 25 s later instead, ' +
      'with the N tasks running but the start burst over.',
    '- **5. Worker peak RSS**: the worker process alone: the larger of its kernel high-water mark (`VmHWM`, includes start-up, when the workflow bundle is built) ' +
      'and the largest `VmRSS` sample; "under load" is the largest sample during the main run. **5a** CPU is `utime + stime` from `/proc/<pid>/stat` over the ' +
      'main run (first start → last close), in % of one core (200 % = both cores of this machine); the peak is the busiest 5-s window.',
    '- **6. Tasks completed**: workflows that completed with the task `finalized`.',
    '',
  );

  const failures = main.filter((r) => !ok(r));
  lines.push(
    '## Checks and notes',
    '',
    `- Creates: ${creates.length} \`POST /tasks\` for ${runs.filter((r) => r.firstRunId).length} workflows; stop commands: ${stops.length}; ` +
      `non-2xx answers: ${non2xx.length}; total API requests: ${env.emulatorRequests.length}.`,
    `- One-time codes typed exactly once: ${codesOk} / ${codesTotal} (main run and long tasks).`,
    `- Continued-as-new: ${runs.filter((r) => (r.runs ?? 1) > 1).length} workflows.`,
    `- Worker log lines with WARN: ${worker.warnLines}, with ERROR: ${worker.errorLines}.`,
    `- CPU around the worker during the main run: Temporal dev server ${fmt(avgCpuPercent(env.context.server, env.context.clkTck, windowStart, windowEnd), 0)} % of one core ` +
      `(peak 5-s window ${fmt(peakCpuPercent(env.context.server, env.context.clkTck, windowStart, windowEnd, 5_000), 0)} %); whole machine, every process ` +
      `${fmt((avgCpuPercent(env.context.machine, env.context.clkTck, windowStart, windowEnd) ?? NaN) / os.cpus().length, 0)} % busy ` +
      `(peak 5-s window ${fmt((peakCpuPercent(env.context.machine, env.context.clkTck, windowStart, windowEnd, 5_000) ?? NaN) / os.cpus().length, 0)} %); ` +
      `bench process (emulator, starters, monitoring) ${fmt(env.benchCpuPct, 1)} % of one core over the whole bench.`,
  );
  if (failures.length > 0) {
    lines.push(`- Not completed: ${failures.length}. First ones:`);
    for (const r of failures.slice(0, 5)) {
      lines.push(`  - \`${r.workflowId}\`: ${r.startError ?? r.failure ?? r.workflowStatus ?? 'not closed'}${r.result ? ` (task ${r.result.status})` : ''}`);
    }
  }
  lines.push('');
  return lines.join('\n');
}

function sdkVersion(): string {
  try {
    return (JSON.parse(readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** The code measured: commit, and the files of src/ that differ from it (others may be editing). */
function codeVersion(): string {
  const root = resolve(__dirname, '../..');
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8', timeout: 10_000 }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: root, encoding: 'utf8', timeout: 10_000 })
      .split('\n')
      .map((line) => line.slice(3).trim())
      .filter(Boolean);
    return `commit \`${head}\`` + (dirty.length > 0 ? ` plus uncommitted changes in ${dirty.map((f) => `\`${f}\``).join(', ')}` : ', src/ unmodified');
  } catch {
    return 'unknown (no git)';
  }
}

function temporalVersion(): string {
  const path = findTemporalCli();
  if (!path) return 'unknown';
  try {
    return execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim().split('\n')[0]!;
  } catch {
    return 'unknown';
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const config = readConfig();
  const startedAt = Date.now();
  const deadline = startedAt + config.deadlineMs;
  const runId = randomUUID().slice(0, 8);
  const taskQueue = `bench-${runId}`;
  const outcome: RunOutcome = { startedAt, endedAt: startedAt, deadlineHit: false, loadAtStart: os.loadavg()[0] };
  let env: TestWorkflowEnvironment | undefined;
  let emulator: BrowserAIEmulator | undefined;
  let worker: WorkerProcess | undefined;
  const context = new ContextSampler();

  const cleanup = async () => {
    context.stop();
    worker?.kill();
    await emulator?.close().catch(() => undefined);
    await within(30_000, env?.teardown() ?? Promise.resolve(), 'Temporal teardown').catch(() => undefined);
  };
  // Backstops: the bench always ends by itself, and never leaves the worker behind.
  process.once('exit', () => worker?.kill());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: cleaning up`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  setTimeout(() => {
    console.error('[bench] hard deadline passed: exiting');
    void within(20_000, cleanup(), 'cleanup').finally(() => process.exit(3));
  }, config.deadlineMs + 4 * 60_000).unref();

  log(
    `N=${config.tasks} tasks of ${config.taskSeconds} s (${config.signalTasks} with submitCode), long scenario ` +
      (config.long ? `${config.longTasks} + ${config.longSignalTasks} (needs-code) × ${config.longMinutes} min at maxSpanMs=${config.longSpanMs}` : 'off') +
      `, deadline ${fmt(config.deadlineMs / 60_000, 0)} min`,
  );
  const benchCpuStart = process.cpuUsage();
  // Taken at start: the code that was just built, not what others may have changed since.
  const build = codeVersion();
  try {
    [env, emulator] = await Promise.all([startTemporal(), BrowserAIEmulator.start({ queueMs: config.queueMs })]);
    log(`Temporal dev server at ${env.address}, emulator at ${emulator.baseUrl}`);
    context.start();
    if (context.serverPid === undefined) log('the Temporal dev server process was not found: its CPU is not reported');

    // Only what the worker needs, and nothing that could point it elsewhere than 127.0.0.1.
    const childEnv: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (!/^(TEMPORAL_|BROWSERAI_|WORKER_)/.test(key)) childEnv[key] = value;
    }
    Object.assign(childEnv, {
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace ?? 'default',
      TEMPORAL_TASK_QUEUE: taskQueue,
      BROWSERAI_BASE_URL: emulator.baseUrl,
      BROWSERAI_API_TOKEN: emulator.apiToken,
    });
    const workerStart = Date.now();
    worker = await WorkerProcess.start(childEnv, 180_000);
    log(`worker pid ${worker.pid} ready in ${fmtMs(Date.now() - workerStart)}`);

    const tasks = new BrowserTasks(env.client, taskQueue);
    const runs = makeTasks(config, runId);
    const starting = startAll(tasks, runs, config, deadline, outcome);
    await Promise.all([starting, monitor(config, env.client, tasks, taskQueue, runs, worker, context, deadline, outcome, emulator!)]);

    worker.sample();
    outcome.loadAtEnd = os.loadavg()[0];
    const hwm = worker.hwmKb;
    log('collecting per-task results and histories');
    const requests = [...emulator.requests];
    await within(Math.max(60_000, deadline + 2 * 60_000 - Date.now()), collect(env.client, runs, requests, emulator), 'collecting results').catch((err) =>
      log(`${err}`),
    );
    const mainCloses = runs.filter((r) => r.kind === 'main' && r.closeTime !== undefined).map((r) => r.closeTime!);
    outcome.mainLastCloseAt = mainCloses.length === runs.filter((r) => r.kind === 'main').length && mainCloses.length > 0 ? Math.max(...mainCloses) : undefined;
    outcome.endedAt = Date.now();
    worker.hwmKb = Math.max(hwm ?? 0, worker.hwmKb ?? 0) || undefined;
    await worker.stop(20_000);

    const benchCpu = process.cpuUsage(benchCpuStart);
    const benchCpuPct = ((benchCpu.user + benchCpu.system) / 1000 / (outcome.endedAt - startedAt)) * 100;
    context.stop();
    const markdown = report(config, runs, worker, outcome, { temporalVersion: temporalVersion(), codeVersion: build, emulatorRequests: requests, benchCpuPct, context });
    if (process.env.BENCH_RAW_JSON) {
      // Optional per-task data for analysis, outside the repository by choice of the caller.
      writeFileSync(process.env.BENCH_RAW_JSON, JSON.stringify({ config, outcome, runs: runs.map(({ input: _input, result, ...rest }) => ({ ...rest, status: result?.status, started: result?.started, completed: result?.completed, executionId: result?.executionId })), samples: worker.samples, server: context.server, machine: context.machine }));
    }
    const file = config.output;
    writeFileSync(file, markdown);
    console.log(`\n${markdown}`);
    log(`written to ${file}`);
  } catch (err) {
    console.error('[bench] failed:', err);
    if (worker) console.error(`[bench] last worker output:\n${worker.outputTail.join('\n')}`);
    process.exitCode = 1;
  } finally {
    await cleanup();
  }
  process.exit(process.exitCode ?? 0);
}

void main();
