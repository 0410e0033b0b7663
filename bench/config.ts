// Settings of a bench run: one table of every scenario's settings (full and quick defaults, how
// each is read), overridden by BENCH_* environment variables, overridden by flags
// (`--realistic-tasks 50` or `--realistic-tasks=50`); a setting `fooMs` of scenario `bar` is the
// flag `--bar-foo`. Everything is checked before anything starts. `--quick` shrinks every scenario
// to a few short tasks, to check that the bench itself works; its figures mean nothing.
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { duration, flagValues, fraction, integer } from '../dev/flag-values';

type Setting<T> = { full: string; quick: string; read(flag: string, raw: string): T };
const setting = <T>(full: unknown, quick: unknown, read: Setting<T>['read']): Setting<T> => ({
  full: String(full),
  quick: String(quick),
  read,
});
const int = (full: number, quick: number, min = 1) => setting(full, quick, (flag, raw) => integer(flag, raw, min));
const share = (full: number, quick: number) => setting(full, quick, fraction);
const ms = (full: string, quick: string, min = 1) => setting(full, quick, (flag, raw) => duration(flag, raw, min));
const range = (full: string, quick: string) => setting(full, quick, durationRange);
const yes = (raw: string) => /^(1|true|yes|on)$/i.test(raw);

/** Every scenario, in the order a full run runs them, with what it measures and its settings. */
const SETTINGS = {
  realistic: {
    about: "emulator default mode, durations spread, one-time codes; vs the MCP client's loop",
    tasks: int(100, 6),
    durations: range('30s-100s', '8s-20s'),
    codeShare: share(0.1, 0.34), // of tasks that stop at a one-time-code form
    startSpreadMs: ms('60s', '5s', 0),
  },
  learned: {
    about: "one job repeated; each round's durations within ±jitter of each kind's base; vs the MCP client",
    kinds: int(10, 3),
    tasksPerKind: int(5, 2),
    rounds: int(3, 3),
    durations: range('30s-100s', '8s-20s'), // the kinds' base durations, spread evenly over it
    jitter: share(0.15, 0.15), // each task's duration is its kind's base ± this fraction (uniform)
    startSpreadMs: ms('10s', '2s', 0),
    /** 1: the last round runs on a new worker process (what a restart or a deploy does to learning). */
    restart: setting(0, 0, (_flag, raw) => yes(raw)),
  },
  mixed: {
    about: "one worker: short tasks, another project's long ones, then kinds not seen, then a 2-s kind with an outlier",
    shortTasks: int(50, 10, 0),
    longProjectTasks: int(10, 2, 0),
    unseenTasks: int(100, 10),
    outlierMs: ms('10m', '1m', 1_000), // the long run among the 2-s kind's samples
  },
  actions: {
    about: 'Temporal actions and history events per task; short, long and short-span tasks, each in its own namespace',
    shortTasks: int(20, 3),
    shortDurationMs: ms('60s', '20s'),
    longTasks: int(5, 2),
    longDurationMs: ms('5m', '2m'),
    spanTasks: int(3, 2, 0), // tasks with a short maxSpanMs: what one more polling span costs
    spanTaskDurationMs: ms('6m', '2m'),
    spanMs: ms('2m', '40s', 250), // their polling.maxSpanMs
  },
  recovery: {
    about: 'two workers: SIGKILL one, time until its polls run elsewhere; then a Temporal outage while polls end',
    kills: int(5, 1, 0), // SIGKILLs of one of the two workers, one after the other
    outageMs: ms('60s', '20s', 0), // how long the Temporal dev server is paused (SIGSTOP) while polls end
  },
  scale: {
    about: 'one worker, many concurrent tasks, one-time codes during and after the start burst',
    tasks: int(2000, 60),
    durationMs: ms('60s', '20s'),
    burstCodes: int(100, 5, 0), // code tasks whose code is sent as soon as the form shows: in the start burst
    lateCodes: int(100, 5, 0), // code tasks whose code is sent `lateCodeDelayMs` after the last start
    lateCodeDelayMs: ms('20s', '5s', 0),
    batch: int(50, 50),
    emulatorMode: setting('documented', 'documented', emulatorMode),
    cachedWorkflows: int(0, 0, 0), // WORKER_MAX_CACHED_WORKFLOWS; 0: the worker's own default (the SDK's)
  },
  signals: {
    about: 'one worker, many short tasks at once, every n-th sent appendInstructions while it runs',
    tasks: int(200, 20),
    durationMs: ms('10s', '10s', 1_000),
    signalEvery: int(10, 5), // every n-th task gets a signal
    emulatorMode: setting('documented', 'documented', emulatorMode),
  },
  codeloop: {
    about:
      'code form shown -> webhook received, -> waiting client call returned; TOTP: form shown -> code typed; inbox: message received -> code typed',
    tasks: int(200, 10), // code tasks a person answers (webhook and waiting client call timed), started at once
    totpTasks: int(50, 4, 0), // TOTP tasks the worker answers itself, started with them
    inboxTasks: int(200, 10, 0), // tasks whose site texts the code to the inbox, started at once after the others
  },
  fleet: {
    about:
      'two workers under one BROWSERAI_FLEET_LIMIT: two batches, a late project, interactive tasks; a kill, an outage',
    /** All tasks: 75 % one project's batch, about 20 % another's, 2.5 % a late project, 2.5 % interactive. */
    tasks: int(2000, 120, 40),
    durationMs: ms('30s', '8s', 1_000),
    limit: int(50, 10),
    kills: int(1, 1, 0), // SIGKILLs of a worker mid-run (each replaced by a new one)
    outageMs: ms('20s', '10s', 0), // how long the Temporal dev server is paused mid-run
    ceilingMs: ms('20s', '5s'), // how long callers acquire and release through a limiter as fast as they can
    callers: int(32, 8),
    costTasks: int(6, 6, 3), // one-second tasks run without a limit, under one nobody reaches, under a limit of 2
    /** Items of the batch the CLI runs after the rest (0: none), each this long; the CLI is killed once. */
    batchItems: int(10_000, 200, 0),
    batchDurationMs: ms('1s', '1s'),
  },
  line: {
    about: 'a line of thousands: tasks started at once with tasks.start under one limit on two workers',
    tasks: int(10_000, 300, 50),
    durationMs: ms('5s', '2s', 1_000),
    limit: int(50, 10),
  },
} as const;

export type ScenarioName = keyof typeof SETTINGS;
export const SCENARIOS = Object.keys(SETTINGS) as ScenarioName[];
type SettingsOf<S> = { [K in keyof S as K extends 'about' ? never : K]: S[K] extends Setting<infer T> ? T : never };
export type ScenarioSettings<N extends ScenarioName> = SettingsOf<(typeof SETTINGS)[N]>;

/** Every scenario's settings by its name, and the run's own: what `readConfig` gives. */
export type BenchConfig = ReturnType<typeof readConfig>;

const flagOf = (scenario: string, key: string) =>
  `${scenario}-${key.replace(/Ms$/, '').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
const GENERAL = ['scenarios', 'busy', 'busy-hogs', 'seed', 'output', 'raw-json', 'quick', 'allow-dirty'];
/** Scenarios run a second time beside CPU hogs unless --busy says otherwise: where a tail shows first. */
const BUSY_DEFAULT = 'scale,signals';
const SCENARIO_FLAGS = new Map(
  SCENARIOS.flatMap((name) =>
    Object.entries(SETTINGS[name])
      .filter(([key]) => key !== 'about')
      .map(([key, setting]) => [flagOf(name, key), { name, key, setting: setting as Setting<unknown> }] as const),
  ),
);

export const USAGE = `node lib/bench/main.js [flags]      (each flag also reads BENCH_<NAME>, e.g. BENCH_SCENARIOS=realistic)

  --scenarios LIST   which to run, in this order: ${SCENARIOS.join(',')} (default all)
  --busy LIST        of those, which also run a second time on a busy machine, beside CPU hogs the
                     bench starts (default ${BUSY_DEFAULT}; none: no busy runs)
  --busy-hogs N      the CPU hogs of a busy run, each spinning one core (default 1)
  --quick            a few short tasks per scenario, to check the bench works (BENCH_QUICK=1);
                     writes to $TMPDIR/BENCHMARKS.quick.md unless --output is given
  --seed N           seeds plans, durations and codes (default 1)
  --output FILE      the Markdown file the run writes, whole, at its end (default BENCHMARKS.md)
  --raw-json FILE    also write every per-task fact as JSON
  --allow-dirty      measure a tree with uncommitted changes (refused otherwise, but with --quick);
                     the report's header says so in bold
${SCENARIOS.map(
  (name) =>
    `\n  ${name} (${SETTINGS[name].about}):\n  ` +
    [...SCENARIO_FLAGS]
      .filter(([, s]) => s.name === name)
      .map(([f, s]) => `--${f} (${s.setting.full}; quick ${s.setting.quick})`)
      .join('  '),
).join('')}

Durations: 500ms, 30s, 12m; a bare number is seconds. Ranges: 30s-100s.`;

export function readConfig(argv = process.argv.slice(2), env = process.env) {
  const known = [...GENERAL, ...SCENARIO_FLAGS.keys()];
  const values = flagValues(argv, env, { prefix: 'BENCH', known, booleans: ['quick', 'allow-dirty'], usage: USAGE });
  const quick = yes(values.get('quick') ?? '0');
  const scenarios: Record<string, Record<string, unknown>> = Object.fromEntries(SCENARIOS.map((n) => [n, {}]));
  for (const [name, { name: scenario, key, setting }] of SCENARIO_FLAGS)
    scenarios[scenario]![key] = setting.read(name, values.get(name) ?? (quick ? setting.quick : setting.full));
  const [output, rawJson] = [values.get('output'), values.get('raw-json')];
  const defaultOutput = quick ? resolve(tmpdir(), 'BENCHMARKS.quick.md') : resolve(__dirname, '../../BENCHMARKS.md');
  const config = {
    ...(scenarios as { [N in ScenarioName]: ScenarioSettings<N> }),
    scenarios: scenarioList(values.get('scenarios') ?? SCENARIOS.join(',')),
    busy: values.get('busy') === 'none' ? [] : scenarioList(values.get('busy') ?? BUSY_DEFAULT, 'busy'),
    busyHogs: integer('busy-hogs', values.get('busy-hogs') ?? '1', 1),
    quick,
    seed: integer('seed', values.get('seed') ?? '1', 0),
    output: resolve(output || defaultOutput),
    rawJson: rawJson ? resolve(rawJson) : undefined,
    allowDirty: yes(values.get('allow-dirty') ?? '0'), // measure uncommitted code anyway (the report says so loudly)
  };
  if (config.scale.burstCodes + config.scale.lateCodes > config.scale.tasks)
    throw new Error('--scale-burst-codes plus --scale-late-codes must not exceed --scale-tasks');
  if (config.actions.longDurationMs <= config.actions.shortDurationMs)
    throw new Error('--actions-long-duration must be longer than --actions-short-duration (the slope is between them)');
  return config;
}

function scenarioList(raw: string, flag = 'scenarios'): ScenarioName[] {
  const names = raw.split(',').flatMap((n) => n.trim() || []);
  if (names.length === 0 || names.some((n) => !(SCENARIOS as string[]).includes(n)))
    throw new Error(`--${flag} must list some of ${SCENARIOS.join(', ')} (got "${raw}")`);
  return [...new Set(names)] as ScenarioName[];
}

function emulatorMode(flag: string, raw: string): 'documented' | 'observed' {
  if (raw === 'documented' || raw === 'observed') return raw;
  throw new Error(`--${flag} must be documented or observed (got "${raw}")`);
}

function durationRange(flag: string, raw: string): [number, number] {
  const [a, b] = raw.split('-').map((part) => duration(flag, part));
  if (a === undefined || b === undefined || a > b)
    throw new Error(`--${flag} must be "A-B" with A <= B, e.g. 30s-100s (got "${raw}")`);
  return [a, b];
}
