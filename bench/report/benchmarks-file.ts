// BENCHMARKS.md holds one `## ` section per scenario (and the chaos run's own section). A run
// replaces the sections of the scenarios it ran, in place, and leaves every other one alone;
// a new section goes before the chaos section.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const FILE_HEADER =
  '# Benchmarks\n\n' +
  'Each section is written by the run it names: `npm run bench` (bench/main.ts; one scenario alone with `--scenarios NAME`) ' +
  'and `npm run chaos` (test/chaos: a correctness harness, not a benchmark). A run replaces only its own sections.\n';
const CHAOS_HEADING = '## Chaos';

export function replaceSection(file: string, heading: string, section: string): void {
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (!text.trim()) text = FILE_HEADER;
  const body = `${section.replace(/\n*$/, '')}\n`;
  const start = findHeading(text, heading);
  if (start >= 0) {
    const next = text.indexOf('\n## ', start + heading.length);
    writeFileSync(file, `${text.slice(0, start)}${body}${next < 0 ? '' : `\n${text.slice(next + 1)}`}`);
    return;
  }
  const chaos = findHeading(text, CHAOS_HEADING);
  if (chaos >= 0) writeFileSync(file, `${text.slice(0, chaos)}${body}\n${text.slice(chaos)}`);
  else writeFileSync(file, `${text.replace(/\n*$/, '')}\n\n${body}`);
}

/** Index of the line that starts with `heading` (a whole heading, not a prefix of a longer one). */
function findHeading(text: string, heading: string): number {
  for (let at = text.indexOf(heading); at >= 0; at = text.indexOf(heading, at + 1)) {
    const lineStart = at === 0 || text[at - 1] === '\n';
    const rest = text.slice(at + heading.length, at + heading.length + 1);
    if (lineStart && (rest === '\n' || rest === ' ' || rest === '')) return at;
  }
  return -1;
}
