// `npm run bench`: measures browserTask workflows on real worker processes against the BrowserAI
// emulator and a Temporal dev server, all on 127.0.0.1, scenario by scenario, each on a fresh
// stack (the list: `--help`, or bench/config.ts). It measures committed code: a tree with
// uncommitted changes is refused (but with --quick or --allow-dirty, and the header says so).
// BENCHMARKS.md is written whole at the end; each section is printed as its scenario finishes.
// Exits 1 when a target is missed or a scenario failed; `--quick` checks the bench itself.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { errorText } from '../dev/async';
import { commandLine } from '../dev/flag-values';
import { runHarness } from '../dev/harness';
import { readConfig, USAGE, type BenchConfig, type ScenarioName } from './config';
import { log } from './format';
import { writeBenchmarks, type ScenarioOutcome } from './report/benchmarks-file';
import { runEnvironment } from './report/environment';
import type { ScenarioContext, ScenarioReport } from './scenario';
import { measureActions } from './scenarios/actions';
import { measureCodeLoop } from './scenarios/codeloop';
import { measureFleet } from './scenarios/fleet';
import { measureLine } from './scenarios/fleet-line';
import { measureLearned } from './scenarios/learned';
import { measureMixed } from './scenarios/mixed';
import { measureRealistic } from './scenarios/realistic';
import { measureRecovery } from './scenarios/recovery';
import { measureScale } from './scenarios/scale';
import { measureSignals } from './scenarios/signals';
import { stopLiveStacks } from './stack';

const MEASURE: Record<ScenarioName, (context: ScenarioContext) => Promise<ScenarioReport>> = {
  realistic: measureRealistic,
  learned: measureLearned,
  mixed: measureMixed,
  actions: measureActions,
  recovery: measureRecovery,
  scale: measureScale,
  signals: measureSignals,
  codeloop: measureCodeLoop,
  fleet: measureFleet,
  line: measureLine,
};

/** package.json's `engines`: an older `node` (the system's, run by hand) starts workers the report would misdescribe. */
const MIN_NODE_MAJOR = 22;

async function bench(config: BenchConfig): Promise<number> {
  if (Number(process.versions.node.split('.')[0]) < MIN_NODE_MAJOR) {
    console.error(
      `[bench] this is Node ${process.version}; the workers need Node ${MIN_NODE_MAJOR} or later (and the memory probe 22.16). Run it as \`npm run bench\`, which takes node from node_modules/.bin.`,
    );
    return 2;
  }
  const env = runEnvironment(commandLine('bench', 'lib/bench/main.js', 'BENCH'));
  if (env.changes.length > 0 && !config.quick && !config.allowDirty) {
    console.error(
      `[bench] the tree has uncommitted changes; BENCHMARKS.md measures one commit. Commit or stash them (or pass --allow-dirty, and the report says so):\n  ${env.changes.join('\n  ')}`,
    );
    return 2;
  }
  const loadBefore = os.loadavg()[0];
  const outcomes: ScenarioOutcome[] = [];
  // Each scenario on the machine as it is, then, if listed in --busy, beside CPU hogs.
  const runs = config.scenarios.flatMap((name) =>
    [0, ...(config.busy.includes(name) ? [config.busyHogs] : [])].map((hogs) => ({ name, hogs })),
  );
  for (const { name: scenario, hogs } of runs) {
    const name = hogs ? `${scenario} (busy)` : scenario;
    const outcome: ScenarioOutcome = { name, startedAt: Date.now(), endedAt: 0 };
    outcomes.push(outcome);
    log(`scenario ${name}${config.quick ? ' (quick)' : ''}`);
    try {
      const context = { config, env: { ...env, startedAt: outcome.startedAt }, hogs };
      outcome.report = await MEASURE[scenario](context);
      console.log(`\n${outcome.report.markdown}\n`);
      const misses = outcome.report.rows.filter((row) => row.met === false);
      log(`${name}: ${misses.length ? `MISSED ${misses.map((r) => r.measure).join('; ')}` : 'no target missed'}`);
    } catch (err) {
      outcome.error = errorText(err);
      console.error(`[bench] scenario ${name} failed: ${outcome.error}`);
      if (err instanceof Error && err.stack) console.error(err.stack);
    }
    outcome.endedAt = Date.now();
  }
  writeBenchmarks(config.output, env, outcomes, loadBefore);
  log(`written to ${config.output}`);
  const raw = { config, raw: outcomes.map((o) => [o.name, o.report?.raw]) };
  if (config.rawJson) writeFileSync(config.rawJson, JSON.stringify(raw, null, 1));
  return outcomes.some((o) => o.error || o.report?.rows.some((row) => row.met === false)) ? 1 : 0;
}

void runHarness({ usage: USAGE, readConfig, run: bench, stop: stopLiveStacks, log });
