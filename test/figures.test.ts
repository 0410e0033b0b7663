// Each figure is stated once: BENCHMARKS.md (`npm run bench`) and CHAOS.md (`npm run chaos`) own
// what they measured, and every other page and comment links to their section instead of copying
// a figure, which would go stale at the next run (docs/design/documentation.md). The figures are the numbers with a unit in the generated
// tables (`94.1 %`, `220.2/s`, `8809 ms`, `588 MB`; a unit in the row's name counts, as in
// "Wait for a slot (ms)"), less those a page states for other reasons: whole decimals and round
// numbers (`60.0 s`, `500 ms`, `2,000`) are settings, and numbers under 100 without a decimal are
// too common to tell apart. Files only, no network.
// Unit tests: no Temporal server.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { test } from 'node:test';

/** The repository root: this file runs as lib/test/figures.test.js. */
const ROOT = resolve(__dirname, '..', '..');
/** The generated files, each written whole by its run. */
const OWNERS = ['BENCHMARKS.md', 'CHAOS.md'];
/** What may not copy their figures: the pages, and the code's comments (bench/ writes BENCHMARKS.md). */
const PAGES = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md'];
const DIRS = [
  { dir: 'docs', ext: '.md' },
  { dir: 'src', ext: '.ts' },
  { dir: 'test', ext: '.ts' },
  { dir: 'dev', ext: '.ts' },
  { dir: 'scripts', ext: '.ts' },
];

const UNIT = String.raw`%|ms|s|min|h|KB|MB|GB|KiB|MiB|GiB|/s`;
const WITH_UNIT = new RegExp(String.raw`(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s?(${UNIT})(?![\w/])`, 'g');
const HAS_UNIT = new RegExp(WITH_UNIT.source);
const BARE = /(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w.]|\.\d)/g;

/** `94.1%`, `8809ms`: a number and its unit as a figure, or undefined for a setting or a common number. */
function figure(number: string, unit: string): string | undefined {
  const digits = number.replaceAll(',', '');
  if (digits.includes('.') ? /^\d+\.0+$/.test(digits) : Number(digits) < 100 || Number(digits) % 10 === 0)
    return undefined;
  return `${digits}${unit}`;
}

/** The figures of a text, with where each stands. */
function figuresIn(text: string): Array<{ at: number; figure: string }> {
  return [...text.matchAll(WITH_UNIT)].flatMap((match) => {
    const found = figure(match[1]!, match[2]!);
    return found ? [{ at: match.index, figure: found }] : [];
  });
}

/** The figures a generated file measured: its tables' cells but the first, which names the measure. */
function measuredFigures(markdown: string): Set<string> {
  const figures = new Set<string>();
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) continue;
    const [name = '', ...cells] = line
      .trim()
      .replace(/^\||\|$/g, '')
      .split('|');
    // "Wait for a slot, batch-a (ms) | 1500 | 900 | ...": the row's name gives its numbers' unit.
    const rowUnit = new RegExp(String.raw`\((${UNIT})\)\s*$`).exec(name.trim())?.[1];
    for (const cell of cells) {
      for (const { figure: found } of figuresIn(cell)) figures.add(found);
      if (rowUnit && !HAS_UNIT.test(cell))
        for (const match of cell.matchAll(BARE)) {
          const found = figure(match[1]!, rowUnit);
          if (found) figures.add(found);
        }
    }
  }
  return figures;
}

/** Where `text` states one of `figures`: `line 12: 94.1%`. */
function copiedFigures(text: string, figures: Set<string>): string[] {
  return figuresIn(text)
    .filter(({ figure: found }) => figures.has(found))
    .map(({ at, figure: found }) => `line ${text.slice(0, at).split('\n').length}: ${found}`);
}

function filesIn(dir: string, ext: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(ext))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const owned = new Set(OWNERS.flatMap((file) => [...measuredFigures(read(file))]));

test('the generated files have figures to protect (the check reads their tables)', () => {
  // A bench report whose tables the reader no longer understands would make the check pass on nothing.
  assert.ok(measuredFigures(read('BENCHMARKS.md')).size >= 20, [...measuredFigures(read('BENCHMARKS.md'))].join(' '));
});

test('a page that copies a measured figure is caught, in any spelling of its unit', () => {
  const [some] = [...owned].filter((found) => found.endsWith('%') || found.endsWith('ms'));
  assert.ok(some, 'a figure in % or ms to copy');
  const number = some.replace(/%|ms$/, '');
  const unit = some.slice(number.length);
  assert.deepEqual(copiedFigures(`intro\nthe run measured ${number} ${unit} then`, owned), [`line 2: ${some}`]);
  assert.deepEqual(copiedFigures(`the run measured ${number}${unit}`, owned), [`line 1: ${some}`]);
  // A setting beside it is not a figure.
  assert.deepEqual(copiedFigures('tasks of 60.0 s, a limit of 500 ms, 2,000 tasks', owned), []);
});

test('no page or comment copies a figure that BENCHMARKS.md or CHAOS.md owns: each links to the section', () => {
  const copies = [...PAGES, ...DIRS.flatMap(({ dir, ext }) => filesIn(dir, ext))]
    .filter((path) => path !== 'test/figures.test.ts')
    .flatMap((path) => copiedFigures(read(path), owned).map((where) => `${path} ${where}`));
  assert.deepEqual(
    copies,
    [],
    'These state a figure a generated file measured; link to its section instead (BENCHMARKS.md#...), so the next run cannot leave them stale',
  );
});
