// The crash-recovery section: how long after a SIGKILL the dead worker's polls run elsewhere, and
// how long after a Temporal outage the workflows whose tasks ended meanwhile close.
import type { RecoverySettings } from '../../config';
import { fmt, fmtMs } from '../../format';
import {
  DISTRIBUTION_HEADER,
  distributionRow,
  missLines,
  quickBanner,
  targetTable,
  type TargetRow,
} from '../../report/markdown';
import { environmentLines } from '../../report/environment';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import type { BenchStack } from '../../stack';
import { stats } from '../../statistics';
import { DEFAULTS } from '../../../src/contract/input';

export const RECOVERY_HEADING = '## Crash recovery: a killed worker, a Temporal outage';

/** Issue 17: at the defaults, a killed worker's polls resume elsewhere within a minute, and so do lost poll results. */
const TARGET_MS = 60_000;

export interface KillTrial {
  polls: number;
  /** Per poll the killed worker held: kill → its next attempt started on another worker (NaN: never). */
  resumedAfterMs: number[];
}

export interface OutageTask {
  workflowId: string;
  endedAt?: number;
  closedAt?: number;
}

interface RecoveryInputs {
  context: ScenarioContext;
  settings: RecoverySettings;
  stack: BenchStack;
  trials: KillTrial[];
  outage?: { outageMs: number; resumedAt: number; tasks: OutageTask[] };
  load: { before?: number; after?: number };
}

export function renderRecovery(inputs: RecoveryInputs): ScenarioReport {
  const { context, settings, trials, outage } = inputs;
  // A kill is recovered once the last of its polls runs again.
  const perKill = trials.map((t) => Math.max(...t.resumedAfterMs));
  const killStats = stats(perKill.filter(Number.isFinite));
  const afterOutage = outage?.tasks.map((t) => (t.closedAt !== undefined ? t.closedAt - outage.resumedAt : NaN)) ?? [];
  const endToClose =
    outage?.tasks.map((t) => (t.closedAt !== undefined && t.endedAt !== undefined ? t.closedAt - t.endedAt : NaN)) ??
    [];
  const rows: TargetRow[] = [
    {
      measure: `SIGKILL of one of two workers → all its polls running on another worker, median of ${trials.length} kills`,
      target: `≤ ${fmtMs(TARGET_MS)}`,
      measured: killStats
        ? `p50 ${fmtMs(killStats.p50)} · max ${fmtMs(killStats.max)} (${perKill.map((ms) => fmtMs(ms)).join(', ')})`
        : 'n/a',
      met: killStats && perKill.every(Number.isFinite) ? killStats.p50 <= TARGET_MS : false,
    },
  ];
  if (outage)
    rows.push({
      measure: `Temporal outage of ${fmtMs(outage.outageMs)} while ${outage.tasks.length} tasks end: server back → workflow closed, max`,
      target: `≤ ${fmtMs(TARGET_MS)}`,
      measured: afterOutage.length
        ? `max ${fmtMs(Math.max(...afterOutage))} (${afterOutage.map((ms) => fmtMs(ms)).join(', ')})`
        : 'n/a',
      met: afterOutage.length > 0 && afterOutage.every((ms) => ms <= TARGET_MS),
    });
  const lines = [
    RECOVERY_HEADING,
    '',
    ...quickBanner(context.config.quick),
    ...environmentLines(context.env, inputs.load),
    `- **Setup:** two worker processes at their defaults (\`polling.heartbeatTimeoutMs\` ${fmtMs(DEFAULTS.heartbeatTimeoutMs)}) on one task queue, 8 tasks of an hour being polled; emulator queued ${QUEUE_MS} ms.`,
    `- **Kills:** ${settings.kills} times, 5–50 s (uniform) after the last recovery, a SIGKILL to a worker holding polls; measured per poll it held, from the kill to the start of its next attempt on another worker (the server's \`lastStartedTime\` of the pending activity, read every 250 ms); a kill is recovered when its last poll is. A new worker replaces the dead one after each kill.`,
    ...(outage
      ? [
          `- **Outage:** ${outage.tasks.length} tasks planned to end inside a ${fmtMs(outage.outageMs)} pause of the dev server (SIGSTOP, then SIGCONT: the server is unreachable but keeps its state); their polls see the end and cannot report it (the SDK gives up after about 10 s). Measured from SIGCONT to each workflow's close time.`,
        ]
      : []),
    '',
    ...targetTable(rows),
    '',
    ...missLines(rows),
    '',
    ...DISTRIBUTION_HEADER,
    distributionRow(
      'Kill → a poll it held runs elsewhere (ms), every poll',
      stats(trials.flatMap((t) => t.resumedAfterMs).filter(Number.isFinite)),
      (v) => fmt(v, 0),
    ),
    distributionRow('Polls held by the killed worker', stats(trials.map((t) => t.polls))),
    ...(outage
      ? [
          distributionRow('Server back → workflow closed (ms)', stats(afterOutage.filter(Number.isFinite)), (v) =>
            fmt(v, 0),
          ),
          distributionRow(
            'Task end → workflow closed, across the outage (ms)',
            stats(endToClose.filter(Number.isFinite)),
            (v) => fmt(v, 0),
          ),
        ]
      : []),
  ];
  return { heading: RECOVERY_HEADING, markdown: lines.join('\n'), rows, raw: { trials, outage } };
}
