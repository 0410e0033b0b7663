// A lint rule: no import cycle, type-only imports counted. import-x/no-cycle skips `import type`,
// yet a circle of type imports still ties layers together (a file cannot move below one whose
// types it names), and that is how an 11-file circle grew unseen. TypeScript's own pre-processor
// lists every module a file names: imports and exports (type-only too), require() and import() types.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Each file's relative imports (resolved to .ts files), kept while the file is unchanged. */
const importsOf = new Map();

function resolveImport(fromFile, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(fromFile), specifier);
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, `${base}/index.ts`])
    if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
  return undefined;
}

/** The files `file` imports, each with where the import stands in the text. */
function imports(file, text) {
  const mtimeMs = text === undefined ? statSync(file).mtimeMs : -1;
  const cached = importsOf.get(file);
  if (cached && cached.mtimeMs === mtimeMs && mtimeMs !== -1) return cached.targets;
  const { importedFiles } = ts.preProcessFile(text ?? readFileSync(file, 'utf8'), true, true);
  const targets = importedFiles
    .map(({ fileName, pos }) => ({ target: resolveImport(file, fileName), pos }))
    .filter(({ target }) => target !== undefined);
  importsOf.set(file, { mtimeMs, targets });
  return targets;
}

/** The shortest import path from `start` back to `file`, or undefined. */
function pathBack(start, file) {
  const cameFrom = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const current = queue.shift();
    if (current === file) {
      const route = [];
      for (let at = current; at !== undefined; at = cameFrom.get(at)) route.unshift(at);
      return route;
    }
    for (const { target } of imports(current))
      if (!cameFrom.has(target)) {
        cameFrom.set(target, current);
        queue.push(target);
      }
  }
  return undefined;
}

const importCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid import cycles, counting type-only imports.' },
    schema: [],
    messages: {
      cycle:
        'Import cycle (type-only imports count): {{route}}. Move what both sides need down a layer (src/contract holds what every layer shares).',
    },
  },
  create(context) {
    const file = context.physicalFilename;
    return {
      Program() {
        const text = context.sourceCode.text;
        const seen = new Set();
        for (const { target, pos } of imports(file, text)) {
          if (seen.has(target)) continue;
          seen.add(target);
          const route = pathBack(target, file);
          if (!route) continue;
          const names = [file, ...route].map((f) => relative(context.cwd, f));
          const start = context.sourceCode.getLocFromIndex(pos);
          context.report({ loc: { start, end: start }, messageId: 'cycle', data: { route: names.join(' -> ') } });
        }
      },
    };
  },
};

export default { rules: { 'import-cycle': importCycle } };
