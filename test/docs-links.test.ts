// Every relative link of the user-facing Markdown (README.md, CONTRIBUTING.md, docs/*.md and the
// design notes in docs/design/*.md) leads to a file of this repository, and to a heading of it where
// the link names one; every `docs/...` path cited in the code and the deployment files
// (docker-compose.yml, deploy/, Dockerfile, .ci/run) exists, with the heading it names
// (`docs/browserai.md, "Statuses"`, `docs/design/memory.md, "The four settings"`). Pages move and
// headings get renamed: this catches the link left behind. The design index lists every design
// page, each a short page with a title, and nothing names DESIGN.md, which docs/design/ replaced.
// No server, no network.
// Unit tests: no Temporal server.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';

/** The repository root: this file runs as lib/test/docs-links.test.js. */
const ROOT = resolve(__dirname, '..', '..');
/** The Markdown files of a folder of the repository, as repository paths. */
function markdownIn(dir: string): string[] {
  return readdirSync(join(ROOT, dir))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `${dir}/${name}`);
}
const DESIGN_DIR = 'docs/design';
const DESIGN_INDEX = `${DESIGN_DIR}/README.md`;
/** The largest design note: a topic page, not a notebook (docs/design/documentation.md). */
const MAX_DESIGN_PAGE_BYTES = 5 * 1024;
const PAGES = ['README.md', 'CONTRIBUTING.md', ...markdownIn('docs'), ...markdownIn(DESIGN_DIR)];
const CODE_DIRS = ['src', 'dev', 'test', 'bench', 'scripts', 'deploy'];
/** Files outside those folders whose comments cite pages too. */
const CODE_FILES = ['docker-compose.yml', 'Dockerfile', '.ci/run'];

/** Markdown without its fenced code blocks and inline code, where a `[x](y)` is not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The headings of a Markdown file, as written (without the #s). */
function headings(markdown: string): string[] {
  const fenced = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '');
  return [...fenced.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)].map((match) => match[1]!);
}

/** The anchors a Markdown file offers: its headings' (GitHub numbers repeats -1, -2...) and `<a id>`s. */
function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const heading of headings(markdown)) {
    const base = slug(heading.replace(/`/g, ''));
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(match[1]!);
  return found;
}

/** What is wrong with a relative link from `page` (a repository path), or undefined when it resolves. */
function brokenLink(page: string, target: string): string | undefined {
  const [path = '', anchor] = target.split('#', 2);
  const file = path === '' ? join(ROOT, page) : resolve(ROOT, dirname(page), decodeURIComponent(path));
  if (!file.startsWith(ROOT)) return `${target} leaves the repository`;
  if (!existsSync(file)) return `${target}: no file ${relative(ROOT, file)}`;
  if (anchor === undefined) return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md'))
    return `${target}: an anchor into a file that is not Markdown`;
  if (!anchors(readFileSync(file, 'utf8')).has(anchor))
    return `${target}: ${relative(ROOT, file)} has no heading #${anchor}`;
  return undefined;
}

function codeFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (path !== 'test/histories') files.push(...codeFiles(path));
    } else if (/\.(ts|mts|cts|js|mjs|cjs|ya?ml|sh)$/.test(entry.name)) files.push(path);
  }
  return files;
}

describe('documentation links', () => {
  test('every relative link of README.md, CONTRIBUTING.md, docs/*.md and docs/design/*.md resolves, anchors included', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = prose(readFileSync(join(ROOT, page), 'utf8'));
      for (const match of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = match[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not ours to check offline
        const problem = brokenLink(page, target);
        if (problem) broken.push(`${page}: ${problem}`);
      }
    }
    assert.deepEqual(broken, [], `broken links:\n  ${broken.join('\n  ')}`);
  });

  test('every docs/ path cited in the code and the deployment files exists, with the heading it names', () => {
    const broken: string[] = [];
    let citations = 0;
    let designCitations = 0;
    for (const file of [...CODE_DIRS.flatMap(codeFiles), ...CODE_FILES]) {
      if (file === 'test/docs-links.test.ts') continue; // its comments cite examples
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/(?<![\w./-])docs\/[\w./-]*\w(?:,\s*(?:\/\/\s*|\*\s*)?"([^"]+)")?/g)) {
        citations++;
        if (match[0].startsWith(`${DESIGN_DIR}/`)) designCitations++;
        const [cited, heading] = [match[0].split(',')[0]!, match[1]];
        const at = `${file}:${text.slice(0, match.index).split('\n').length}`;
        const path = join(ROOT, cited);
        if (!existsSync(path)) broken.push(`${at}: ${cited} does not exist`);
        else if (heading !== undefined && !headings(readFileSync(path, 'utf8')).includes(heading))
          broken.push(`${at}: ${cited} has no heading "${heading}"`);
      }
    }
    assert.ok(citations > 0, 'found no docs/ citation at all: the pattern is wrong');
    assert.ok(designCitations > 0, 'found no docs/design/ citation at all: the pattern is wrong');
    assert.deepEqual(broken, [], `broken citations:\n  ${broken.join('\n  ')}`);
  });

  test('the design index links every design page, each a titled page of at most 5 KiB', () => {
    const problems: string[] = [];
    const index = prose(readFileSync(join(ROOT, DESIGN_INDEX), 'utf8'));
    const linked = new Set([...index.matchAll(/\]\(\s*<?([^)\s>#]+)/g)].map((match) => match[1]!));
    for (const page of markdownIn(DESIGN_DIR)) {
      if (page === DESIGN_INDEX) continue;
      const name = page.slice(DESIGN_DIR.length + 1);
      const text = readFileSync(join(ROOT, page), 'utf8');
      if (!linked.has(name)) problems.push(`${page}: not linked from ${DESIGN_INDEX} (add one line for it)`);
      if (!/^# \S/.test(text)) problems.push(`${page}: does not start with a "# Title" line`);
      const bytes = Buffer.byteLength(text);
      if (bytes > MAX_DESIGN_PAGE_BYTES)
        problems.push(`${page}: ${bytes} bytes, over ${MAX_DESIGN_PAGE_BYTES}: split it into topics`);
    }
    assert.deepEqual(problems, [], `design notes:\n  ${problems.join('\n  ')}`);
  });

  test('nothing names DESIGN.md, which the pages of docs/design/ replaced', () => {
    const found: string[] = [];
    for (const file of [...CODE_DIRS.flatMap(codeFiles), ...CODE_FILES, ...PAGES, 'CHANGELOG.md']) {
      if (file === 'test/docs-links.test.ts') continue; // names it to look for it
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const match of text.matchAll(/\bDESIGN\.md\b/g))
        found.push(`${file}:${text.slice(0, match.index).split('\n').length}`);
    }
    assert.deepEqual(found, [], `DESIGN.md is gone: cite a page of docs/design/ instead, at:\n  ${found.join('\n  ')}`);
  });
});
