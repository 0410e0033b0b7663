// The report: settings, the target table, outcomes by kind and every miss by name. It writes
// CHAOS.md whole, as `npm run bench` writes BENCHMARKS.md: earlier runs live in git, not in the
// file (docs/design/documentation.md).
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import type { ChaosConfig } from './config';
import type { ChaosFacts } from './facts';
import type { KillerReport } from './killer';
import type { TemporalFaultsReport } from './temporal-faults';
import { countsByKind, KINDS, type PlannedWorkflow } from './plan';
import type { TargetRow } from './targets';
import { formatDuration } from './log';

export const SECTION_HEADING = '## Chaos (`npm run chaos`)';
const MAX_LISTED = 25;

export interface RunSummary {
  command: string;
  startedAt: number;
  /** Every workflow closed (or the deadline) */
  endedAt: number;
  allClosed: boolean;
  plans: PlannedWorkflow[];
  killer: KillerReport;
  temporal: TemporalFaultsReport;
  workerStarts: number;
  workerCrashes: number;
}

export function renderSection(config: ChaosConfig, run: RunSummary, facts: ChaosFacts, rows: TargetRow[]): string {
  const lines = [
    SECTION_HEADING,
    '',
    `Run: \`${run.command}\`, ${new Date(run.startedAt).toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
    '',
  ];
  lines.push(...settings(config, run, facts), '');
  lines.push('| Measure | Target | Measured | Met |', '|---|---|---|---|');
  for (const row of rows)
    lines.push(
      `| ${row.measure} | ${row.target} | ${row.measured} | ${row.met === undefined ? '—' : row.met ? 'yes' : '**MISSED**'} |`,
    );
  lines.push('', ...outcomes(facts), '');
  lines.push('### Misses', '');
  const missed = rows.filter((row) => row.met === false);
  if (missed.length === 0) lines.push('None: every target was met.');
  for (const row of missed)
    lines.push(`- **${row.measure}** (target ${row.target}): ${row.misses.length}`, ...listed(row.misses));
  const ambiguous = rows.find((row) => row.met === undefined && row.misses.length > 0);
  if (ambiguous) lines.push('', `${ambiguous.measure}, for reference:`, ...listed(ambiguous.misses));
  return `${lines.join('\n')}\n`;
}

function listed(items: string[]): string[] {
  const shown = items.slice(0, MAX_LISTED).map((item) => `  - ${item}`);
  if (items.length > MAX_LISTED)
    shown.push(`  - … and ${items.length - MAX_LISTED} more (all of them with \`--raw-json FILE\`)`);
  return shown;
}

function settings(config: ChaosConfig, run: RunSummary, facts: ChaosFacts): string[] {
  const counts = countsByKind(config.workflows, config.mix);
  const cancelAt = (when: string) => run.plans.filter((p) => p.cancelAt === when).length;
  const kills = run.killer.kills.filter((k) => k.signal === 'SIGKILL');
  const byTrigger = (trigger: string) => kills.filter((k) => k.trigger === trigger).length;
  const deploy = run.killer.deploy;
  const deployKills = run.killer.kills.filter((k) => k.trigger === 'deploy');
  const faults =
    Object.entries(facts.faultsByKind)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ') || 'none recorded';
  const faultTotal = Object.values(facts.faultsByKind).reduce((a, b) => a + b, 0);
  return [
    `- **Workflows**: ${config.workflows}, started over the first ${formatDuration(config.startSpreadMs)} through \`BrowserTasks.start\`: ` +
      `${counts.plain} plain (\`[duration=3–20s]\`), ${counts.otp} one-time-code (\`[needs-code]\`, a unique 6-digit code submitted once the task awaits it), ` +
      `${counts.cancel} cancelled (${cancelAt('create')} right as their create reached BrowserAI, ${cancelAt('running')} a random 1–5 s after their task was seen running), ` +
      `${counts.fail} failing (\`[fail]\`), ${counts.totp} TOTP (\`[needs-totp=chaos] [rejects-code]\`: the worker types the code, the first is refused, ` +
      `so it waits up to a 30-s step for the next; started over the 30 s from 15 s before the deploy). Polling 0.5–3 s, heartbeat timeout 10 s.`,
    `- **Workers**: ${config.workers} processes of \`node lib/src/worker.js\` on one task queue; WORKER_SHUTDOWN_GRACE_MS ${config.shutdownGraceMs}, ` +
      `BROWSERAI_REQUEST_TIMEOUT_MS ${config.requestTimeoutMs}; ${run.workerStarts} worker processes started in all; ` +
      `${run.workerCrashes} exited without being told to.`,
    `- **Kills**: ${kills.length} SIGKILLs, one every ${formatDuration(config.killMinMs)}–${formatDuration(config.killMaxMs)} (seeded), each worker restarted at once: ` +
      `${byTrigger('timer')} on the timer, ${byTrigger('create')} right after a \`POST /tasks\` reached the emulator, ${byTrigger('append')} right after a \`POST /tasks/{id}/instructions\` ` +
      `(the victim is a random ready worker, not necessarily the sender); ${run.killer.skipped} skipped with no worker ready. ` +
      (deploy
        ? `Deploy at ${formatDuration(deploy.startedAt - run.startedAt)}: ${deployKills.length} workers SIGTERMed one after the other, each replacement ready before the next (${formatDuration(deploy.endedAt - deploy.startedAt)}${deploy.completed ? '' : ', cut short by the end of the run'}).`
        : 'Deploy: not reached (the run ended first).'),
    temporalLine(config, run),
    `- **Faults**: each emulator request has a ${(config.faultRate * 100).toFixed(1)} % chance of a random fault: ${faults} (${faultTotal} of ${facts.requests.total} requests; ` +
      `${facts.requests.creates} creates, ${facts.requests.appends} appends).`,
    `- **Run**: seed ${config.seed}, deadline ${formatDuration(config.deadlineMs)}; ${run.allClosed ? 'every workflow closed after' : 'stopped at the deadline after'} ${formatDuration(run.endedAt - run.startedAt)}.`,
    `- **Machine**: ${os.availableParallelism()} CPUs (\`nproc\`), ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}, ${os.platform()} ${os.release()}.`,
  ];
}

function temporalLine(config: ChaosConfig, run: RunSummary): string {
  const at = (ms: number) => formatDuration(ms - run.startedAt);
  const restarts = run.temporal.restarts.map(
    (r) =>
      `at ${at(r.at)} (${r.trigger === 'timer' ? 'no create or append within 30 s' : `right after a${r.trigger === 'create' ? ' create' : 'n append'} reached the emulator`}; down ${formatDuration(r.downMs)})`,
  );
  const planned = config.temporalRestartsAtMs.length;
  const outage = run.temporal.outage;
  return (
    `- **Temporal**: the dev server runs on a database file; ${restarts.length} of ${planned} SIGKILL-and-restart(s) on it, same ports` +
    (restarts.length > 0 ? `: ${restarts.join(', ')}` : '') +
    '. ' +
    (outage
      ? `Outage: paused (SIGSTOP) at ${at(outage.at)} for ${formatDuration(outage.pausedMs)}, then SIGCONT.`
      : config.temporalPauseForMs > 0
        ? 'Outage: not reached (the run ended first).'
        : 'No outage.') +
    ' Workers and the client reconnect by themselves.'
  );
}

function outcomes(facts: ChaosFacts): string[] {
  const lines = ['Outcomes by kind:', '', '| Kind | Workflows | Expected | Outcomes |', '|---|---|---|---|'];
  for (const kind of KINDS) {
    const of = facts.workflows.filter((w) => w.kind === kind);
    if (of.length === 0) continue;
    const tally = new Map<string, number>();
    for (const w of of) tally.set(w.outcome, (tally.get(w.outcome) ?? 0) + 1);
    const text = [...tally]
      .sort((a, b) => b[1] - a[1])
      .map(([outcome, n]) => `${outcome} ${n}`)
      .join(' · ');
    lines.push(`| ${kind} | ${of.length} | ${of[0]!.expected} | ${text} |`);
  }
  return lines;
}

/** What CHAOS.md says before the run's section. */
const INTRO = `# Chaos

What \`npm run chaos\` (test/chaos) found: a correctness run, not a benchmark. Worker processes are
SIGKILLed and restarted, Temporal is killed, restarted and paused, and the BrowserAI emulator answers
with random faults, while workflows of every kind run; then BrowserAI's side is checked: every task
created once, every code typed once, every cancel stopped once. The run writes this file whole;
earlier runs are in git. Throughput and cost figures are in [BENCHMARKS.md](BENCHMARKS.md), which
\`npm run bench\` alone writes.`;

/** Writes the report file whole: the introduction, then this run's section. */
export function writeReport(file: string, section: string): void {
  writeFileSync(file, `${INTRO}\n\n${section.replace(/\n*$/, '')}\n`);
}
