// Realistic: every task a job of its own (nothing to learn from another), running 30 to 100 s as
// BrowserAI's dashboard shows, arriving over a minute, some stopping at a one-time-code form; our
// workflows and the MCP client's loop side by side on the same tasks.
import { Random } from '../../dev/random';
import { fmt, fmtMs, mb } from '../format';
import { CodeMaker, PROJECT, uniform } from '../plan';
import { distributionRow, row, spread } from '../report/markdown';
import { scenario } from '../scenario';
import { runTargetOf } from '../stack';
import { between, stats } from '../statistics';
import { at, completedOk, count } from '../task';
import * as twins from '../twins';

const TASK_QUEUE = 'bench-realistic';
const CLOSE_P50_TARGET_MS = 3_000;
const HISTORY_EVENTS_TARGET = 60;

export const measureRealistic = scenario({
  heading: '## Realistic: BrowserAI as observed, beside the MCP client',
  plan(stack, { config: { realistic: settings, seed } }) {
    const rng = new Random(seed);
    const codes = new CodeMaker(new Random(seed + 1));
    return twins.plannedTwins(stack, settings.tasks, (i) => {
      // Code tasks spread evenly over the list (and so over the start window).
      const needsCode = Math.floor((i + 1) * settings.codeShare) > Math.floor(i * settings.codeShare);
      const tag = `#rl${i}`;
      const text = `Realistic job ${tag}: open https://shop${i}.example.com, search for "desk lamp" and list the first 10 prices`;
      return {
        workflowId: `bench-realistic-${i}`,
        group: needsCode ? 'one-time code' : 'plain',
        startAtMs: Math.round(uniform(rng, 0, settings.startSpreadMs)),
        shape: { text, durationMs: Math.round(uniform(rng, ...settings.durations)), needsCode },
        code: needsCode ? { value: codes.next(), tag, when: 'awaiting', delayMs: 0 } : undefined,
      };
    });
  },
  async measure(stack, planned, { config: { realistic: settings } }) {
    const target = runTargetOf(stack, await stack.startWorker('default', TASK_QUEUE), TASK_QUEUE, PROJECT);
    const deadlineAt = Date.now() + settings.startSpreadMs + settings.durations[1] * 2 + 5 * 60_000;
    return twins.runSideBySide(target, planned, { label: 'realistic', deadlineAt });
  },
  report(side, stack, { config: { realistic: settings } }) {
    const c = twins.compare(side);
    const codeTasks = side.records.filter((r) => r.plan.code);
    const events = stats(side.records.filter(completedOk).map(count.events));
    const append = between(codeTasks, at.codeSent, at.appended);
    const codes = append && `${spread(append, fmtMs)} (${append.n} codes)`;
    const [min, max] = settings.durations.map((d) => fmt(d / 1000, 0));
    // prettier-ignore
    return {
      rows: [
        twins.completedRow('Workflows completed, task finalized', side.records),
        twins.ratioRow('', c),
        twins.closeRow('', c, CLOSE_P50_TARGET_MS),
        row('History events per task', `< ${HISTORY_EVENTS_TARGET}`, events ? `p50 ${events.p50} · max ${events.max}` : 'n/a', !!events && events.max < HISTORY_EVENTS_TARGET),
        ...(codeTasks.length ? [row('submitCode → append request', '—', codes || 'n/a')] : []),
        row('Worker peak RSS', '—', `${fmt(mb(stack.workers[0]?.sampler.peakEverKb() ?? NaN), 0)} MB`),
      ],
      setup: [
        `- **Tasks:** ${settings.tasks}, each a job of its own (its own instruction text, so nothing learned from one applies to another), running ${min}–${max} s (uniform), started at random over ${fmt(settings.startSpreadMs / 1000, 0)} s; ${codeTasks.length} stop at a one-time-code form and get their code as soon as the emulator shows the form.`,
        '- **Worker:** one process of `node lib/src/worker.js`, default settings; no polling options in the input.',
        twins.MCP_COUNTING,
      ],
      details: [
        ...twins.comparisonDistributions(c),
        distributionRow('History events per task', events),
        ...twins.fairnessChecks(stack, side.records, [side]),
      ],
      raw: { records: side.records, mcp: side.mcp, features: stack.features },
    };
  },
});
