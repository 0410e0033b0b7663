// Settings of a chaos run: defaults, overridden by CHAOS_* environment variables, overridden by
// flags (`--workflows 30` or `--workflows=30`). Everything is checked before anything starts.
import { resolve } from 'node:path';
import { commandLine as sharedCommandLine, duration, flagValues, fraction, integer } from '../../dev/flag-values';
import type { WorkflowKind } from './plan';

export type Mix = Record<WorkflowKind, number>;

export interface ChaosConfig {
  workflows: number;
  workers: number;
  seed: number;
  /** From the first workflow start; then the run stops and reports what it has. */
  deadlineMs: number;
  /** Shares of plain, one-time-code, cancelled, failing and TOTP workflows (any scale: normalised). */
  mix: Mix;
  /** Chance that an emulator request gets a random fault. */
  faultRate: number;
  /** Workflow starts are spread uniformly over this long. */
  startSpreadMs: number;
  /** A worker is SIGKILLed every killMinMs–killMaxMs (uniform, seeded). */
  killMinMs: number;
  killMaxMs: number;
  /** When the one rolling SIGTERM restart of every worker begins, from the first start. */
  deployAtMs: number;
  /** WORKER_SHUTDOWN_GRACE_MS of the workers. */
  shutdownGraceMs: number;
  /** BROWSERAI_REQUEST_TIMEOUT_MS of the workers: ends requests the emulator leaves hanging. */
  requestTimeoutMs: number;
  /** From the first start: Temporal SIGKILLed and restarted on its database, right after a create, then an append, alternately. */
  temporalRestartsAtMs: number[];
  /** From the first start: Temporal paused (SIGSTOP) for `temporalPauseForMs` (0: never). */
  temporalPauseAtMs: number;
  temporalPauseForMs: number;
  output: string;
  rawJson?: string;
}

export const USAGE = `npm run chaos -- [flags]      (each flag also reads CHAOS_<NAME>, e.g. CHAOS_WORKFLOWS=30)

  --workflows N         workflows started (default 300)
  --workers N           worker processes on the task queue (default 3)
  --seed N              seeds the plan, the kill schedule and the emulator's faults (default 1)
  --deadline D          stop and report after this long from the first start (default 8m)
  --mix P,O,C,F,T       shares of plain, one-time-code, cancelled, failing, TOTP workflows
                        (default 40,25,15,10,10; TOTP ones start around the deploy)
  --fault-rate R        chance of a random emulator fault per request (default 0.05)
  --start-spread D      spread the starts over this long (default 30s)
  --kill-every A-B      SIGKILL one worker every A to B (default 5s-10s)
  --deploy-at D         the one rolling SIGTERM restart of all workers (default 40s)
  --grace D             the workers' WORKER_SHUTDOWN_GRACE_MS (default 5s)
  --request-timeout D   the workers' BROWSERAI_REQUEST_TIMEOUT_MS (default 5s)
  --temporal-restarts L Temporal SIGKILLed and restarted on its database at these times, right after
                        a create, then an append, alternately (default 15s,30s; "none" for none)
  --temporal-pause D+L  Temporal paused (SIGSTOP) at D for L (default 60s+30s; "none" for none)
  --output FILE         Markdown file the report is written to, whole (default CHAOS.md)
  --raw-json FILE       also write every per-workflow fact as JSON

Durations: 500ms, 30s, 8m; a bare number is seconds.`;

const FLAGS = [
  'workflows',
  'workers',
  'seed',
  'deadline',
  'mix',
  'fault-rate',
  'start-spread',
  'kill-every',
  'deploy-at',
  'grace',
  'request-timeout',
  'temporal-restarts',
  'temporal-pause',
  'output',
  'raw-json',
] as const;
type Flag = (typeof FLAGS)[number];

export function readConfig(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): ChaosConfig {
  const values = flagValues(argv, env, { prefix: 'CHAOS', known: FLAGS, usage: USAGE }) as Map<Flag, string>;
  const get = (flag: Flag, fallback: string) => values.get(flag) ?? fallback;
  const [killMinMs, killMaxMs] = get('kill-every', '5s-10s')
    .split('-')
    .map((part) => duration('kill-every', part));
  if (killMinMs === undefined || killMaxMs === undefined || killMinMs > killMaxMs || killMinMs < 500) {
    throw new Error('--kill-every must be "A-B" with 500ms <= A <= B, e.g. 5s-10s');
  }
  const restarts = get('temporal-restarts', '15s,30s');
  const pause = get('temporal-pause', '60s+30s');
  const [pauseAt, pauseFor] = pause === 'none' ? ['0', '0'] : pause.split('+');
  if (pauseAt === undefined || pauseFor === undefined)
    throw new Error('--temporal-pause must be "D+L", e.g. 60s+30s, or "none"');
  const repoRoot = resolve(__dirname, '../../..'); // lib/test/chaos -> the repository
  return {
    workflows: integer('workflows', get('workflows', '300'), 1),
    workers: integer('workers', get('workers', '3'), 1),
    seed: integer('seed', get('seed', '1'), 0),
    deadlineMs: duration('deadline', get('deadline', '8m')),
    mix: mix(get('mix', '40,25,15,10,10')),
    faultRate: fraction('fault-rate', get('fault-rate', '0.05')),
    startSpreadMs: duration('start-spread', get('start-spread', '30s'), 0),
    killMinMs,
    killMaxMs,
    deployAtMs: duration('deploy-at', get('deploy-at', '40s'), 0),
    shutdownGraceMs: duration('grace', get('grace', '5s')),
    requestTimeoutMs: duration('request-timeout', get('request-timeout', '5s')),
    temporalRestartsAtMs:
      restarts === 'none' ? [] : restarts.split(',').map((part) => duration('temporal-restarts', part, 0)),
    temporalPauseAtMs: duration('temporal-pause', pauseAt, 0),
    temporalPauseForMs: duration('temporal-pause', pauseFor, 0),
    output: resolve(values.get('output') ?? resolve(repoRoot, 'CHAOS.md')),
    rawJson: values.has('raw-json') ? resolve(values.get('raw-json')!) : undefined,
  };
}

/** `40,25,15,10,10` or `plain=40,otp=25,cancel=15,fail=10,totp=10` (kinds left out get 0). */
function mix(raw: string): Mix {
  const kinds: WorkflowKind[] = ['plain', 'otp', 'cancel', 'fail', 'totp'];
  const result: Mix = { plain: 0, otp: 0, cancel: 0, fail: 0, totp: 0 };
  const parts = raw.split(',').map((part) => part.trim());
  parts.forEach((part, i) => {
    const named = /^([a-z]+)=(.+)$/.exec(part);
    const kind = (named ? named[1] : kinds[i]) as WorkflowKind | undefined;
    const value = Number(named ? named[2] : part);
    if (!kind || !kinds.includes(kind) || !Number.isFinite(value) || value < 0) {
      throw new Error(
        `--mix must be up to five shares "P,O,C,F,T" or "plain=..,otp=..,cancel=..,fail=..,totp=.." (got "${raw}")`,
      );
    }
    result[kind] = value;
  });
  if (kinds.every((kind) => result[kind] === 0)) throw new Error('--mix must give at least one kind a share');
  return result;
}

/** How the run was asked for, for the report: the npm command when run through npm. */
export function commandLine(): string {
  return sharedCommandLine('chaos', 'lib/test/chaos/main.js', 'CHAOS');
}
