// The setup lines every section starts with: what code was measured, on what machine, with
// which Temporal and SDK, and how busy the machine was (it may be shared).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { findTemporalCli } from '../../dev/temporal-cli';
import { fmt } from '../format';

/** Taken when the bench starts: the code just built, not what others may have changed since. */
export function codeVersion(): string {
  const root = resolve(__dirname, '../../..');
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 10_000,
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 10_000,
    })
      .split('\n')
      .map((line) => line.slice(3).trim())
      .filter(Boolean);
    return (
      `commit \`${head}\`` +
      (dirty.length > 0
        ? ` plus uncommitted changes in ${dirty.map((f) => `\`${f}\``).join(', ')}`
        : ', src/ unmodified')
    );
  } catch {
    return 'unknown (no git)';
  }
}

export function temporalVersion(): string {
  const path = findTemporalCli();
  if (!path) return 'unknown';
  try {
    return execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim().split('\n')[0]!;
  } catch {
    return 'unknown';
  }
}

function sdkVersion(): string {
  try {
    return (JSON.parse(readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    return 'unknown';
  }
}

export interface RunEnvironment {
  command: string;
  code: string;
  temporal: string;
  startedAt: number;
}

/** `- **Machine:** …` lines; `load` is the 1-min load average before and after the scenario. */
export function environmentLines(env: RunEnvironment, load: { before?: number; after?: number }): string[] {
  const cpus = os.cpus();
  return [
    `- **Command:** \`${env.command}\`; ${new Date(env.startedAt).toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
    `- **Code measured:** ${env.code} (as built for this run).`,
    `- **Machine:** ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${fmt(os.totalmem() / 1024 ** 3, 1)} GiB, ${os.type()} ${os.release()}; ` +
      `load average (1 min, every process) ${fmt(load.before, 2)} before, ${fmt(load.after, 2)} after.`,
    `- **Software:** Node ${process.version}; Temporal ${env.temporal} (dev server, in memory); @temporalio/* ${sdkVersion()}.`,
  ];
}
