// What was measured and where: the commit and whether the tree was clean (taken when the bench
// starts, right after the build), the machine, Temporal and the SDK, and how busy the machine
// was (it may be shared). The file's header states them once; each section its own load.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { findTemporalCli } from '../../dev/temporal-cli';
import { fmt } from '../format';
import { existing } from '../sampling';

export type RunEnvironment = ReturnType<typeof runEnvironment>;

/** `code`: `commit \`abc1234\`, clean tree` or the changes it had; `changes`: `git status --porcelain` lines. */
export function runEnvironment(command: string) {
  const cwd = resolve(__dirname, '../../..');
  const git = (...args: string[]) =>
    existing(() => execFileSync('git', args, { cwd, encoding: 'utf8', timeout: 10_000 }));
  const commit = git('rev-parse', '--short', 'HEAD')?.trim(); // no git: the header says so
  const changes = git('status', '--porcelain')?.split('\n').filter(Boolean) ?? []; // none: clean
  const listed = changes.slice(0, 8).map((c) => `\`${c.slice(3)}\``);
  const tree = changes.length
    ? `**NOT CLEAN: ${changes.length} uncommitted changes** (${listed.join(', ')})`
    : 'clean tree';
  const code = commit ? `commit \`${commit}\`, ${tree}` : 'unknown (no git)';
  return { command, code, commit, changes, temporal: temporalVersion(), startedAt: Date.now() };
}

function temporalVersion(cli = findTemporalCli()): string {
  const version = cli && existing(() => execFileSync(cli, ['--version'], { encoding: 'utf8', timeout: 10_000 }));
  return version?.trim().split('\n')[0] ?? 'unknown';
}

const sdkPackage = () => JSON.parse(readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8'));
const sdkVersion = () => (existing(sdkPackage) as { version?: string } | undefined)?.version ?? 'unknown';

const utc = (at: number) => new Date(at).toISOString().slice(0, 16).replace('T', ' ');

/** The header's `- **…:**` lines; `load` is the 1-min load average at the start and the end of the run. */
export function headerLines(env: RunEnvironment, endedAt: number, load: { before?: number; after?: number }): string[] {
  const cpus = os.cpus();
  return [
    `- **Command:** \`${env.command}\`; ${utc(env.startedAt)} to ${utc(endedAt).slice(11)} UTC (${fmt((endedAt - env.startedAt) / 60_000, 0)} min).`,
    `- **Code measured:** ${env.code}, as built for this run.`,
    `- **Machine:** ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${fmt(os.totalmem() / 1024 ** 3, 1)} GiB, ${os.type()} ${os.release()}; load average (1 min, every process: the machine may be shared) ${fmt(load.before, 2)} at the start, ${fmt(load.after, 2)} at the end; each section gives its own.`,
    `- **Software:** Node ${process.version}; Temporal ${env.temporal} (dev server, in memory, one per scenario); @temporalio/* ${sdkVersion()}.`,
  ];
}

/** A section's own line: when it ran and how busy the machine was meanwhile. */
export function environmentLines(
  env: RunEnvironment,
  load: { before?: number; after?: number; busyPercent?: number },
): string[] {
  return [
    `- **Ran:** ${utc(env.startedAt)} UTC, ${fmt((Date.now() - env.startedAt) / 60_000, 1)} min; load average (1 min) ${fmt(load.before, 2)} before, ${fmt(load.after, 2)} after; the whole machine ${fmt(load.busyPercent, 0)} % busy meanwhile (every process).`,
  ];
}
