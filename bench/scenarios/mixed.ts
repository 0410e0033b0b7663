// Mixed workload on one worker process (issue 17: a worker that has seen other jobs is never worse
// than a fresh one): a 10-minute run of a 2-s kind and a warm-up of other jobs, then kinds not seen
// and then the 2-s kind, each beside the MCP client's loop. The order is in the setup line.
import { sleep } from '../../dev/async';
import { Random } from '../../dev/random';
import { collectFacts } from '../collect';
import { fmt, fmtMs, log } from '../format';
import { PROJECT, uniform } from '../plan';
import { runTasks } from '../run';
import { scenario } from '../scenario';
import { runTargetOf } from '../stack';
import { completedOk, type TaskRecord } from '../task';
import * as twins from '../twins';

const TASK_QUEUE = 'bench-mixed';
const SLACK_MS = 4 * 60_000;
/** The project whose long tasks run beside the first phase's short ones. */
const LONG_PROJECT = 'bench-long';
const SHORT_RANGE_MS = [1_000, 10_000] as const;
const LONG_RANGE_MS = [120_000, 180_000] as const;
const UNSEEN_RANGE_MS = [30_000, 100_000] as const;
const KNOWN_KIND_MS = 2_000;
/** Runs of the 2-s kind before the outlier ends: with it, its last 8 samples. */
const KNOWN_KIND_RUNS = 7;
const KNOWN_KIND_TASKS = 10;
const KNOWN_KIND_TEXT = 'Mixed known job: open https://status.example.com and read the banner';
const TARGETS = { unseen: { maxRatio: 0.75, maxP50Ms: 2_500, maxP99Ms: 5_000 }, known: { maxP50Ms: 1_500 } } as const;

export const measureMixed = scenario({
  heading: '## Mixed workload on one worker, beside the MCP client',
  plan(stack, { config: { mixed: settings, seed } }) {
    const rng = new Random(seed * 7919 + 17);
    const spread = (ms: number) => Math.round(uniform(rng, 0, ms));
    const knownRun = () => Math.round(KNOWN_KIND_MS * (1 + uniform(rng, -0.1, 0.1)));
    const spec = (group: string, text: string, durationMs: number, startAtMs: number, project?: string) => ({
      workflowId: `bench-mixed-${group}`,
      group: group.replace(/-\d+$/, ''),
      startAtMs,
      shape: { text, durationMs, project },
    });
    const job = (...args: Parameters<typeof spec>) => twins.plannedTask(stack, spec(...args));
    const outlier = job('outlier', KNOWN_KIND_TEXT, settings.outlierMs, 0);
    // prettier-ignore
    const warmUp = [
      ...Array.from({ length: settings.shortTasks }, (_, i) => job(`short-${i}`, `Mixed short job ${i}: open https://s${i}.example.com and read the title`, Math.round(uniform(rng, ...SHORT_RANGE_MS)), spread(10_000))),
      ...Array.from({ length: settings.longProjectTasks }, (_, i) => job(`long-${i}`, `Mixed long job ${i}: crawl https://l${i}.example.com and export it`, Math.round(uniform(rng, ...LONG_RANGE_MS)), spread(10_000), LONG_PROJECT)),
      // After the outlier's create: the book gives the kind's durations out in create order.
      ...Array.from({ length: KNOWN_KIND_RUNS }, (_, i) => job(`known-warm-${i}`, KNOWN_KIND_TEXT, knownRun(), 2_000 + i * 1_500)),
    ];
    // Each start drawn before its duration, as before: a seed plans what it planned.
    const unseen = twins.plannedTwins(stack, settings.unseenTasks, (i) => {
      const startAtMs = spread(60_000);
      const text = `Mixed new job ${i}: open https://n${i}.example.com, search the catalogue and export the hits`;
      return spec(`unseen-${i}`, text, Math.round(uniform(rng, ...UNSEEN_RANGE_MS)), startAtMs);
    });
    const known = twins.plannedTwins(stack, KNOWN_KIND_TASKS, (i) => {
      const startAtMs = spread(5_000);
      return { ...spec(`known-${i}`, KNOWN_KIND_TEXT, knownRun(), startAtMs), group: 'known kind' };
    });
    return { outlier, warmUp, unseen, known };
  },
  async measure(stack, plan, { config: { mixed: settings } }) {
    const target = runTargetOf(stack, await stack.startWorker('default', TASK_QUEUE), TASK_QUEUE, PROJECT);
    const due = (ms: number) => Date.now() + ms + SLACK_MS; // a phase's deadline: its own time and some slack
    const outlier: TaskRecord[] = [{ plan: plan.outlier }];
    const label = 'mixed: the 2-s kind, long run';
    const outlierRun = runTasks(outlier, target, { batch: 1, deadlineAt: due(settings.outlierMs), label });
    // Its create must come first: the book hands the kind's durations out in create order.
    while (!stack.emulator.requests.some((r) => r.method === 'POST' && r.path === '/tasks')) await sleep(100);
    log(`mixed: warm-up, ${plan.warmUp.length} tasks (short, another project's long ones, the 2-s kind)`);
    const warmUp = plan.warmUp.map((p): TaskRecord => ({ plan: p }));
    const warmOutcome = await runTasks(warmUp, target, { deadlineAt: due(200_000), label: 'mixed warm-up' });
    const unseen = await twins.runSideBySide(target, plan.unseen, { label: 'mixed unseen', deadlineAt: due(160_000) });
    log('mixed: waiting for the 2-s kind’s long run to end');
    const outlierOutcome = await outlierRun;
    const known = await twins.runSideBySide(target, plan.known, { label: 'mixed known', deadlineAt: due(60_000) });
    await collectFacts(target.client, [...outlier, ...warmUp], stack.emulator);
    return { outlier, warmUp, unseen, known, outcomes: [warmOutcome, outlierOutcome] };
  },
  report({ outlier, warmUp, unseen, known, outcomes }, stack, { config: { mixed: settings } }) {
    const [unseenC, knownC] = [twins.compare(unseen), twins.compare(known)];
    const ours = [...outlier, ...warmUp, ...unseen.records, ...known.records];
    const range = (r: readonly [number, number]) => `${fmt(r[0] / 1000, 0)}–${fmt(r[1] / 1000, 0)} s`;
    return {
      rows: [
        twins.completedRow('Workflows completed', ours),
        twins.ratioRow('Kinds not seen: ', unseenC, TARGETS.unseen.maxRatio),
        twins.closeRow('Kinds not seen: ', unseenC, TARGETS.unseen.maxP50Ms, TARGETS.unseen.maxP99Ms),
        twins.closeRow('The 2-s kind with a 10-minute outlier among its samples: ', knownC, TARGETS.known.maxP50Ms),
      ],
      setup: [
        `- **Workload, on one worker process** (at its defaults), in order: a task of a 2-s kind that runs ${fmtMs(settings.outlierMs)} (started first); meanwhile ${settings.shortTasks} short tasks of ${range(SHORT_RANGE_MS)} (project \`${PROJECT}\`, a kind each), ${settings.longProjectTasks} long tasks of ${range(LONG_RANGE_MS)} of another project (\`${LONG_PROJECT}\`) and ${KNOWN_KIND_RUNS} normal runs of the 2-s kind, all started over 10 s; then **${settings.unseenTasks} tasks of kinds not seen** (${range(UNSEEN_RANGE_MS)}, project \`${PROJECT}\`, started over 60 s); then, once the long run ended (so its last 8 samples hold it), **${KNOWN_KIND_TASKS} tasks of the 2-s kind** (±10 %, started over 5 s).`,
        `${twins.MCP_COUNTING} The warm-up and the long run have no twins.`,
      ],
      details: [
        ...twins.phaseTables('Phase', [
          ['Kinds not seen', unseenC],
          ['The 2-s kind with an outlier', knownC],
        ]),
        ...twins.fairnessChecks(stack, ours, [unseen, known]),
        `- Warm-up and long run completed: ${[...outlier, ...warmUp].filter(completedOk).length} / ${outlier.length + warmUp.length}.`,
        ...outcomes.flatMap((o, i) => twins.outcomeLines(o, i ? 'Long run: ' : 'Warm-up: ')),
      ],
      raw: { unseen, known, features: stack.features },
    };
  },
});
