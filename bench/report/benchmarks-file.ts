// BENCHMARKS.md is written whole, once, at the end of one run: a header (command, commit, whether
// the tree was clean, machine and load), a summary of the targets, then one section per scenario
// in the order run. Nothing of an earlier run is kept (git keeps it); `npm run chaos` writes CHAOS.md.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { fmt } from '../format';
import type { ScenarioReport } from '../scenario';
import { headerLines, type RunEnvironment } from './environment';

export interface ScenarioOutcome {
  name: string;
  startedAt: number;
  endedAt: number;
  report?: ScenarioReport;
  error?: string;
}

export function writeBenchmarks(file: string, env: RunEnvironment, outcomes: ScenarioOutcome[], loadBefore?: number) {
  const count = (o: ScenarioOutcome, met: boolean) => o.report?.rows.filter((r) => r.met === met).length ?? 0;
  const text = [
    '# Benchmarks',
    '',
    `Written whole by one \`npm run bench\` run (bench/main.ts; \`-- --help\` lists the scenarios and their settings); regenerate it rather than edit it. The chaos run, a correctness harness, writes [CHAOS.md](CHAOS.md).`,
    '',
    ...(env.changes.length ? ['> **The tree was not clean: these figures are of uncommitted code.**', ''] : []),
    ...headerLines(env, Date.now(), { before: loadBefore, after: os.loadavg()[0] }),
    '',
    '| Scenario | Targets met | Targets missed | Minutes |',
    '|---|---|---|---|',
    ...outcomes.map(
      (o) =>
        `| ${o.report ? o.report.heading.replace(/^## /, '') : `${o.name}: **failed**`} | ${count(o, true)} | ${count(o, false)} | ${fmt((o.endedAt - o.startedAt) / 60_000, 1)} |`,
    ),
    '',
    ...outcomes.map((o) =>
      o.report ? `${o.report.markdown.replace(/\n*$/, '')}\n` : `## ${o.name}\n\n**The scenario failed:** ${o.error}\n`,
    ),
  ];
  writeFileSync(file, `${text.join('\n').replace(/\n*$/, '')}\n`);
}
