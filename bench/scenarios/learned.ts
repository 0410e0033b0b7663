// Learned rounds: one job repeated. Every round runs every kind (one instruction text each) again,
// each task near its kind's base duration, on the same worker process (what it learns is per
// worker, in memory), beside the MCP client's loop, one round after the other.
import { Random } from '../../dev/random';
import { fmt, fmtMs, fmtRatio, log } from '../format';
import { PROJECT, uniform } from '../plan';
import { row } from '../report/markdown';
import { scenario } from '../scenario';
import { runTargetOf } from '../stack';
import * as twins from '../twins';

const TASK_QUEUE = 'bench-learned';
/** The targets: what the first round may cost, and what the third must reach once durations are learned. */
const FIRST = { round: 1, maxRatio: 0.75, maxP50Ms: 2_500 } as const;
const LEARNED = { round: 3, maxRatio: 0.4, maxP50Ms: 1_500, maxP99Ms: 4_000 } as const;

export const measureLearned = scenario({
  heading: '## Learned rounds: one job repeated, beside the MCP client',
  /** The kinds: one instruction text each, and the duration its tasks run about. */
  plan(_stack, { config: { learned: settings } }) {
    const { kinds } = settings;
    const [min, max] = settings.durations;
    return Array.from({ length: kinds }, (_, k) => ({
      text: `Learned job ${k + 1}: open https://catalog${k + 1}.example.com, page through the listing and export every item as JSON`,
      baseMs: kinds === 1 ? (min + max) / 2 : min + (k * (max - min)) / (kinds - 1),
    }));
  },
  async measure(stack, kinds, { config: { learned: settings, seed } }) {
    const { tasksPerKind, jitter } = settings;
    const target = runTargetOf(stack, await stack.startWorker('default', TASK_QUEUE), TASK_QUEUE, PROJECT);
    const rounds: twins.SideBySide[] = [];
    for (let round = 1; round <= settings.rounds && !target.worker.exited; round++) {
      if (settings.restart && round === settings.rounds && round > 1) {
        log('learned: restarting the worker before the last round');
        await target.worker.stop();
        target.worker = await stack.startWorker('default', TASK_QUEUE);
      }
      // Every kind `tasksPerKind` times, durations drawn for this round from a seed of its own.
      const rng = new Random(seed * 1000 + round);
      const planned = twins.plannedTwins(stack, kinds.length * tasksPerKind, (j) => {
        const [k, i] = [Math.floor(j / tasksPerKind), j % tasksPerKind];
        return {
          workflowId: `bench-learned-r${round}-k${k + 1}-${i}`,
          group: `round ${round}`,
          startAtMs: Math.round(uniform(rng, 0, settings.startSpreadMs)),
          shape: { text: kinds[k].text, durationMs: Math.round(kinds[k].baseMs * (1 + uniform(rng, -jitter, jitter))) },
        };
      });
      log(`learned: round ${round}/${settings.rounds}, ${planned.ours.length} tasks of ${kinds.length} kinds`);
      const deadlineAt = Date.now() + settings.startSpreadMs + settings.durations[1] * (1 + jitter) * 2 + 4 * 60_000;
      rounds.push(await twins.runSideBySide(target, planned, { label: `learned round ${round}`, deadlineAt }));
    }
    return { kinds, rounds };
  },
  report({ kinds, rounds }, stack, { config: { learned: settings } }) {
    const comparisons = rounds.map(twins.compare);
    const [c1, c3] = [comparisons[FIRST.round - 1], comparisons[LEARNED.round - 1]];
    const records = rounds.flatMap((r) => r.records);
    const [r1, r3] = [`Round ${FIRST.round}: `, `Round ${LEARNED.round}: `];
    const restart = settings.restart
      ? `, except round ${settings.rounds}: **right after a worker restart** (a new process).`
      : '.';
    const bases = kinds.map((k) => fmt(k.baseMs / 1000, 0)).join(', ');
    const [min, max] = settings.durations.map((d) => fmt(d / 1000, 0));
    // prettier-ignore
    return {
      rows: [
        twins.completedRow('Workflows completed, every round', records),
        ...(c1 ? [twins.ratioRow(r1, c1, FIRST.maxRatio), twins.closeRow(r1, c1, FIRST.maxP50Ms)] : []),
        ...(c3
          ? [twins.ratioRow(r3, c3, LEARNED.maxRatio), twins.closeRow(r3, c3, LEARNED.maxP50Ms, LEARNED.maxP99Ms)]
          : [row(`Round ${LEARNED.round} targets`, `ratio ≤ ${fmtRatio(LEARNED.maxRatio)}, p50 ≤ ${fmtMs(LEARNED.maxP50Ms)}, p99 ≤ ${fmtMs(LEARNED.maxP99Ms)}`, `not run (${comparisons.length} rounds)`)]),
      ],
      setup: [
        `- **Job:** ${kinds.length} kinds of task (one instruction text each), base durations spread evenly over ${min}–${max} s (${bases} s); ${settings.tasksPerKind} tasks of each kind per round, each within ±${fmt(settings.jitter * 100, 0)} % of its kind's base (uniform), started at random over ${fmt(settings.startSpreadMs / 1000, 0)} s; ${settings.rounds} rounds one after the other on the **same worker process** (at its defaults)${restart}`,
        twins.MCP_COUNTING,
      ],
      details: [
        ...twins.phaseTables('Round', comparisons.map((c, i) => [`Round ${i + 1}`, c])),
        ...twins.fairnessChecks(stack, records, rounds),
      ],
      raw: { kinds, rounds, features: stack.features },
    };
  },
});
