// `npm run starter`: runs the built CLI at once, compiling first only when a source file is newer
// than the last build (tsc costs about 3 s; the CLI answers `--help` in tens of milliseconds).
// Usage: node scripts/run-built.mjs lib/src/cli/main.js [args...]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const buildInfo = join(root, 'lib/.tsbuildinfo');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const builtAt = statSync(buildInfo, { throwIfNoEntry: false })?.mtimeMs ?? 0;
const changedAt = Math.max(newestSource(join(root, 'src')), statSync(join(root, 'tsconfig.json')).mtimeMs);
if (changedAt > builtAt) {
  const tsc = spawnSync(
    process.execPath,
    [createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', join(root, 'tsconfig.json')],
    {
      stdio: 'inherit',
    },
  );
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  // tsc leaves its build info alone when no output changed: mark the sources as built.
  const now = new Date();
  utimesSync(buildInfo, now, now);
}

const [script, ...args] = process.argv.slice(2);
process.argv = [process.argv[0], resolve(root, script), ...args];
createRequire(import.meta.url)(process.argv[1]);
