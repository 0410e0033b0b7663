// Settings of a bench run: defaults (full or quick), overridden by BENCH_* environment
// variables, overridden by flags (`--realistic-tasks 50` or `--realistic-tasks=50`). Everything is
// checked before anything starts. `--quick` shrinks every scenario to a few short tasks, to
// check that the bench itself works; its figures mean nothing.
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { duration, fraction, integer } from '../dev/flag-values';

export const SCENARIOS = [
  'realistic',
  'learned',
  'mixed',
  'actions',
  'recovery',
  'scale',
  'codeloop',
  'fleet',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface RealisticSettings {
  tasks: number;
  minDurationMs: number;
  maxDurationMs: number;
  /** Share of tasks that stop at a one-time-code form. */
  codeShare: number;
  startSpreadMs: number;
}

export interface LearnedSettings {
  kinds: number;
  tasksPerKind: number;
  rounds: number;
  /** Base durations of the kinds are spread evenly over this range. */
  minDurationMs: number;
  maxDurationMs: number;
  /** Each task's duration is its kind's base ± this fraction (uniform). */
  jitter: number;
  startSpreadMs: number;
  /** The last round runs on a new worker process (what a restart or a deploy does to learning). */
  restartBeforeLast: boolean;
}

export interface MixedSettings {
  shortTasks: number;
  longProjectTasks: number;
  unseenTasks: number;
  /** The long run among the 2-s kind's samples. */
  outlierMs: number;
}

export interface RecoverySettings {
  /** SIGKILLs of one of the two workers, one after the other. */
  kills: number;
  /** How long the Temporal dev server is paused (SIGSTOP) while polls end. */
  outageMs: number;
}

export interface ActionsSettings {
  shortTasks: number;
  shortDurationMs: number;
  longTasks: number;
  longDurationMs: number;
  /** Tasks with a short `maxSpanMs`, to measure what one more polling span costs. */
  spanTasks: number;
  spanTaskDurationMs: number;
  spanMs: number;
}

export interface ScaleSettings {
  tasks: number;
  durationMs: number;
  /** Code tasks whose code is sent as soon as the form shows: during the start burst. */
  burstCodes: number;
  /** Code tasks whose code is sent `lateCodeDelayMs` after the last start. */
  lateCodes: number;
  lateCodeDelayMs: number;
  batch: number;
  emulatorMode: 'documented' | 'observed';
  /** WORKER_MAX_CACHED_WORKFLOWS for the worker; 0: the worker's own default (the SDK's). */
  maxCachedWorkflows: number;
}

export interface CodeLoopSettings {
  /** Code tasks a person answers (webhook and waiting client call timed), all started at once. */
  tasks: number;
  /** TOTP tasks the worker answers itself, started with them. */
  totpTasks: number;
}

export interface FleetSettings {
  /** All tasks: 75 % one project's batch, 20 % another's, 2.5 % a late project, 2.5 % interactive. */
  tasks: number;
  durationMs: number;
  /** BROWSERAI_FLEET_LIMIT of both workers. */
  limit: number;
  /** SIGKILLs of a worker mid-run (each replaced by a new one). */
  kills: number;
  /** How long the Temporal dev server is paused mid-run. */
  outageMs: number;
  /** How long the limiter's ceiling (acquire+release pairs per second) is measured. */
  ceilingMs: number;
}

export interface BenchConfig {
  scenarios: ScenarioName[];
  quick: boolean;
  seed: number;
  output: string;
  rawJson?: string;
  realistic: RealisticSettings;
  learned: LearnedSettings;
  mixed: MixedSettings;
  actions: ActionsSettings;
  recovery: RecoverySettings;
  scale: ScaleSettings;
  codeloop: CodeLoopSettings;
  fleet: FleetSettings;
}

/** Flag → [full default, quick default]. */
const DEFAULTS = {
  scenarios: [SCENARIOS.join(','), SCENARIOS.join(',')],
  seed: ['1', '1'],
  output: ['', ''],
  'raw-json': ['', ''],
  'realistic-tasks': ['100', '6'],
  'realistic-durations': ['30s-100s', '8s-20s'],
  'realistic-code-share': ['0.1', '0.34'],
  'realistic-start-spread': ['60s', '5s'],
  'learned-kinds': ['10', '3'],
  'learned-tasks-per-kind': ['5', '2'],
  'learned-rounds': ['3', '3'],
  'learned-durations': ['30s-100s', '8s-20s'],
  'learned-jitter': ['0.15', '0.15'],
  'learned-start-spread': ['10s', '2s'],
  'learned-restart': ['0', '0'],
  'mixed-short-tasks': ['50', '10'],
  'mixed-long-project-tasks': ['10', '2'],
  'mixed-unseen-tasks': ['100', '10'],
  'mixed-outlier': ['10m', '1m'],
  'recovery-kills': ['5', '1'],
  'recovery-outage': ['60s', '20s'],
  'actions-short-tasks': ['20', '3'],
  'actions-short-duration': ['60s', '20s'],
  'actions-long-tasks': ['5', '2'],
  'actions-long-duration': ['5m', '2m'],
  'actions-span-tasks': ['3', '2'],
  'actions-span-task-duration': ['6m', '2m'],
  'actions-span': ['2m', '40s'],
  'scale-tasks': ['2000', '60'],
  'scale-duration': ['60s', '20s'],
  'scale-burst-codes': ['100', '5'],
  'scale-late-codes': ['100', '5'],
  'scale-late-code-delay': ['20s', '5s'],
  'scale-batch': ['50', '50'],
  'scale-emulator-mode': ['documented', 'documented'],
  'scale-cached-workflows': ['0', '0'],
  'codeloop-tasks': ['200', '10'],
  'codeloop-totp-tasks': ['50', '4'],
  'fleet-tasks': ['2000', '120'],
  'fleet-duration': ['30s', '8s'],
  'fleet-limit': ['50', '10'],
  'fleet-kills': ['1', '1'],
  'fleet-outage': ['20s', '10s'],
  'fleet-ceiling': ['20s', '5s'],
} as const;
type Flag = keyof typeof DEFAULTS | 'quick';

export const USAGE = `node lib/bench/main.js [flags]      (each flag also reads BENCH_<NAME>, e.g. BENCH_SCENARIOS=realistic)

  --scenarios LIST              which to run, in this order: ${SCENARIOS.join(',')} (default all)
  --quick                       a few short tasks per scenario, to check the bench works (BENCH_QUICK=1);
                                writes to $TMPDIR/BENCHMARKS.quick.md unless --output is given
  --seed N                      seeds plans, durations and codes (default 1)
  --output FILE                 Markdown file whose scenario sections are replaced (default BENCHMARKS.md)
  --raw-json FILE               also write every per-task fact as JSON

  realistic (emulator default mode, durations spread, one-time codes; vs the MCP client's loop):
  --realistic-tasks N (100)  --realistic-durations A-B (30s-100s)  --realistic-code-share F (0.1)  --realistic-start-spread D (60s)
  learned (one job repeated; each round's durations within ±jitter of each kind's base; vs the MCP client):
  --learned-kinds N (10)  --learned-tasks-per-kind N (5)  --learned-rounds N (3)  --learned-durations A-B (30s-100s)
  --learned-jitter F (0.15)  --learned-start-spread D (10s)  --learned-restart 1 (restart the worker before the last round)
  mixed (one worker: short tasks and another project's long ones, then kinds not seen, then a 2-s kind with an outlier):
  --mixed-short-tasks N (50)  --mixed-long-project-tasks N (10)  --mixed-unseen-tasks N (100)  --mixed-outlier D (10m)
  recovery (two workers: SIGKILL one, time until its polls run elsewhere; then a Temporal outage while polls end):
  --recovery-kills N (5)  --recovery-outage D (60s)
  actions (Temporal actions and history events per task; short, long and short-span tasks, each in its own namespace):
  --actions-short-tasks N (20)  --actions-short-duration D (60s)  --actions-long-tasks N (5)  --actions-long-duration D (5m)
  --actions-span-tasks N (3)  --actions-span-task-duration D (6m)  --actions-span D (2m: their polling.maxSpanMs)
  scale (one worker, many concurrent tasks, one-time codes during and after the start burst):
  --scale-tasks N (2000)  --scale-duration D (60s)  --scale-burst-codes N (100)  --scale-late-codes N (100)
  --scale-late-code-delay D (20s)  --scale-batch N (50)  --scale-emulator-mode documented|observed (documented)
  --scale-cached-workflows N (0: the worker's default)
  codeloop (code form shown -> webhook received, -> waiting client call returned; TOTP: form shown -> code typed):
  --codeloop-tasks N (200)  --codeloop-totp-tasks N (50)
  fleet (two workers under BROWSERAI_FLEET_LIMIT; two batches, a late project, interactive tasks; a kill, an outage):
  --fleet-tasks N (2000)  --fleet-duration D (30s)  --fleet-limit N (50)  --fleet-kills N (1)  --fleet-outage D (20s)
  --fleet-ceiling D (20s: how long the limiter's acquire+release ceiling is measured)

Quick defaults: realistic 6 × 8–20 s; learned 3 kinds × 2 × 3 rounds of 8–20 s; actions 3 × 20 s, 2 × 2 min,
2 × 2 min at a 40-s span; scale 60 × 20 s with 5 + 5 codes; fleet 120 × 8 s at limit 10, a 10-s outage. Durations: 500ms, 30s, 12m; a bare number is seconds.`;

/** Flag values as given: environment first, flags over it. */
function givenValues(argv: string[], env: NodeJS.ProcessEnv): Map<Flag, string> {
  const values = new Map<Flag, string>();
  const flags = [...Object.keys(DEFAULTS), 'quick'] as Flag[];
  for (const flag of flags) {
    const value = env[`BENCH_${flag.toUpperCase().replace(/-/g, '_')}`];
    if (value) values.set(flag, value);
  }
  for (let i = 0; i < argv.length; i++) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]!);
    const flag = match?.[1] as Flag | undefined;
    if (!match || !flag || !flags.includes(flag)) throw new Error(`Unknown argument "${argv[i]}"\n\n${USAGE}`);
    if (flag === 'quick') {
      values.set('quick', match[2] ?? '1');
      continue;
    }
    const value = match[2] ?? argv[++i];
    if (value === undefined) throw new Error(`--${flag} needs a value\n\n${USAGE}`);
    values.set(flag, value);
  }
  return values;
}

export function readConfig(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const values = givenValues(argv, env);
  const quick = /^(1|true|yes|on)$/i.test(values.get('quick') ?? '0');
  const get = (flag: keyof typeof DEFAULTS) => values.get(flag) ?? DEFAULTS[flag][quick ? 1 : 0];
  const range = (flag: keyof typeof DEFAULTS) => durationRange(flag, get(flag));
  const [realisticMin, realisticMax] = range('realistic-durations');
  const [learnedMin, learnedMax] = range('learned-durations');
  const repoRoot = resolve(__dirname, '../..'); // lib/bench -> the repository
  const config: BenchConfig = {
    scenarios: scenarioList(get('scenarios')),
    quick,
    seed: integer('seed', get('seed'), 0),
    output: resolve(
      get('output') || (quick ? resolve(tmpdir(), 'BENCHMARKS.quick.md') : resolve(repoRoot, 'BENCHMARKS.md')),
    ),
    rawJson: get('raw-json') ? resolve(get('raw-json')) : undefined,
    realistic: {
      tasks: integer('realistic-tasks', get('realistic-tasks'), 1),
      minDurationMs: realisticMin,
      maxDurationMs: realisticMax,
      codeShare: fraction('realistic-code-share', get('realistic-code-share')),
      startSpreadMs: duration('realistic-start-spread', get('realistic-start-spread'), 0),
    },
    learned: {
      kinds: integer('learned-kinds', get('learned-kinds'), 1),
      tasksPerKind: integer('learned-tasks-per-kind', get('learned-tasks-per-kind'), 1),
      rounds: integer('learned-rounds', get('learned-rounds'), 1),
      minDurationMs: learnedMin,
      maxDurationMs: learnedMax,
      jitter: fraction('learned-jitter', get('learned-jitter')),
      startSpreadMs: duration('learned-start-spread', get('learned-start-spread'), 0),
      restartBeforeLast: /^(1|true|yes|on)$/i.test(get('learned-restart')),
    },
    mixed: {
      shortTasks: integer('mixed-short-tasks', get('mixed-short-tasks'), 0),
      longProjectTasks: integer('mixed-long-project-tasks', get('mixed-long-project-tasks'), 0),
      unseenTasks: integer('mixed-unseen-tasks', get('mixed-unseen-tasks'), 1),
      outlierMs: duration('mixed-outlier', get('mixed-outlier'), 1_000),
    },
    recovery: {
      kills: integer('recovery-kills', get('recovery-kills'), 0),
      outageMs: duration('recovery-outage', get('recovery-outage'), 0),
    },
    actions: {
      shortTasks: integer('actions-short-tasks', get('actions-short-tasks'), 1),
      shortDurationMs: duration('actions-short-duration', get('actions-short-duration')),
      longTasks: integer('actions-long-tasks', get('actions-long-tasks'), 1),
      longDurationMs: duration('actions-long-duration', get('actions-long-duration')),
      spanTasks: integer('actions-span-tasks', get('actions-span-tasks'), 0),
      spanTaskDurationMs: duration('actions-span-task-duration', get('actions-span-task-duration')),
      spanMs: duration('actions-span', get('actions-span'), 250),
    },
    scale: {
      tasks: integer('scale-tasks', get('scale-tasks'), 1),
      durationMs: duration('scale-duration', get('scale-duration')),
      burstCodes: integer('scale-burst-codes', get('scale-burst-codes'), 0),
      lateCodes: integer('scale-late-codes', get('scale-late-codes'), 0),
      lateCodeDelayMs: duration('scale-late-code-delay', get('scale-late-code-delay'), 0),
      batch: integer('scale-batch', get('scale-batch'), 1),
      emulatorMode: emulatorMode(get('scale-emulator-mode')),
      maxCachedWorkflows: integer('scale-cached-workflows', get('scale-cached-workflows'), 0),
    },
    codeloop: {
      tasks: integer('codeloop-tasks', get('codeloop-tasks'), 1),
      totpTasks: integer('codeloop-totp-tasks', get('codeloop-totp-tasks'), 0),
    },
    fleet: {
      tasks: integer('fleet-tasks', get('fleet-tasks'), 40),
      durationMs: duration('fleet-duration', get('fleet-duration'), 1_000),
      limit: integer('fleet-limit', get('fleet-limit'), 1),
      kills: integer('fleet-kills', get('fleet-kills'), 0),
      outageMs: duration('fleet-outage', get('fleet-outage'), 0),
      ceilingMs: duration('fleet-ceiling', get('fleet-ceiling'), 0),
    },
  };
  if (config.scale.burstCodes + config.scale.lateCodes > config.scale.tasks)
    throw new Error('--scale-burst-codes plus --scale-late-codes must not exceed --scale-tasks');
  if (config.actions.longDurationMs <= config.actions.shortDurationMs)
    throw new Error(
      '--actions-long-duration must be longer than --actions-short-duration (the slope is measured between them)',
    );
  return config;
}

function scenarioList(raw: string): ScenarioName[] {
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(SCENARIOS as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0)
    throw new Error(`--scenarios must list some of ${SCENARIOS.join(', ')} (got "${raw}")`);
  return [...new Set(names)] as ScenarioName[];
}

function emulatorMode(raw: string): 'documented' | 'observed' {
  if (raw !== 'documented' && raw !== 'observed')
    throw new Error(`--scale-emulator-mode must be documented or observed (got "${raw}")`);
  return raw;
}

function durationRange(flag: string, raw: string): [number, number] {
  const [a, b] = raw.split('-').map((part) => duration(flag, part));
  if (a === undefined || b === undefined || a > b)
    throw new Error(`--${flag} must be "A-B" with A <= B, e.g. 30s-100s (got "${raw}")`);
  return [a, b];
}

/** How the run was asked for, for the report. */
export function commandLine(): string {
  const fromEnv = Object.keys(process.env)
    .filter((name) => name.startsWith('BENCH_') && process.env[name])
    .map((name) => `${name}=${process.env[name]}`);
  const args = process.argv.slice(2);
  const base = process.env.npm_lifecycle_event === 'bench' ? 'npm run bench' : 'node lib/bench/main.js';
  return [...fromEnv, base, ...(args.length > 0 && base === 'npm run bench' ? ['--', ...args] : args)].join(' ');
}
