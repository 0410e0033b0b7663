// `npm run bench`: measures browserTask workflows on real worker processes against the BrowserAI
// emulator and a Temporal dev server, all on 127.0.0.1, scenario by scenario, each on a fresh
// stack: `realistic`, `learned` and `mixed` beside the public MCP client's polling loop, `actions`
// (Temporal actions and history per task), `recovery` (a killed worker, a Temporal outage), `scale` (many concurrent tasks on one worker),
// `codeloop` (how fast a one-time-code request reaches a webhook and a waiting client), `fleet`
// (the fleet limit on two workers through a kill and an outage). Each
// scenario's section of BENCHMARKS.md is replaced as soon as it finishes. Exits 1 when a target
// is missed. `--help` lists the settings; `--quick` checks the bench itself in a few minutes.
import { writeFileSync } from 'node:fs';
import { errorText } from '../dev/async';
import { commandLine, readConfig, USAGE, type BenchConfig, type ScenarioName } from './config';
import { log } from './format';
import { replaceSection } from './report/benchmarks-file';
import { codeVersion, temporalVersion, type RunEnvironment } from './report/environment';
import type { ScenarioContext, ScenarioReport } from './scenario';
import { measureActions } from './scenarios/actions/measure';
import { measureLearned } from './scenarios/learned/measure';
import { measureMixed } from './scenarios/mixed/measure';
import { measureRecovery } from './scenarios/recovery/measure';
import { measureRealistic } from './scenarios/realistic/measure';
import { measureScale } from './scenarios/scale/measure';
import { measureCodeLoop } from './scenarios/codeloop/measure';
import { measureFleet } from './scenarios/fleet/measure';
import { stopLiveStacks } from './stack';

const MEASURE: Record<ScenarioName, (context: ScenarioContext) => Promise<ScenarioReport>> = {
  realistic: measureRealistic,
  learned: measureLearned,
  mixed: measureMixed,
  actions: measureActions,
  recovery: measureRecovery,
  scale: measureScale,
  codeloop: measureCodeLoop,
  fleet: measureFleet,
};

async function bench(config: BenchConfig): Promise<number> {
  const env: RunEnvironment = {
    command: commandLine(),
    code: codeVersion(),
    temporal: temporalVersion(),
    startedAt: Date.now(),
  };
  const raw: Record<string, unknown> = {};
  let missed = 0;
  let failed = 0;
  for (const name of config.scenarios) {
    const startedAt = Date.now();
    log(`scenario ${name}${config.quick ? ' (quick)' : ''}`);
    try {
      const report = await MEASURE[name]({ config, env: { ...env, startedAt } });
      replaceSection(config.output, report.heading, report.markdown);
      console.log(`\n${report.markdown}\n`);
      const misses = report.rows.filter((row) => row.met === false);
      missed += misses.length;
      log(
        `${name}: ${Math.round((Date.now() - startedAt) / 1000)} s; ${misses.length ? `MISSED ${misses.map((r) => r.measure).join('; ')}` : 'no target missed'}; written to ${config.output}`,
      );
      raw[name] = report.raw;
    } catch (err) {
      failed++;
      console.error(`[bench] scenario ${name} failed: ${errorText(err)}`);
      if (err instanceof Error && err.stack) console.error(err.stack);
    }
  }
  if (config.rawJson) writeFileSync(config.rawJson, JSON.stringify({ config, raw }, null, 1));
  return failed > 0 || missed > 0 ? 1 : 0;
}

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(USAGE);
    return;
  }
  let config: BenchConfig;
  try {
    config = readConfig();
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(2);
  }
  // Ctrl+C or a kill must not leave a dev server or a worker behind.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping everything`);
      void stopLiveStacks().finally(() => process.exit(130));
    });
  }
  const exitCode = await bench(config);
  await stopLiveStacks();
  process.exit(exitCode);
}

void main();
