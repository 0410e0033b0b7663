// `npm run check-package`: packs the package as `npm publish` would (which runs `prepare`, the
// src-only build of tsconfig.build.json) and checks the tarball:
//   - its file list: every `exports`/`bin`/`main`/`types` target is in it, and nothing that is not
//     for users (tests, benchmarks, scripts, dev/, build info);
//   - the bin starts with a `#!/usr/bin/env node` line;
//   - publint (--strict: warnings fail too);
//   - @arethetypeswrong/cli on every entry point, for every resolution mode (node10, node16 CJS
//     and ESM, bundler). No rule is ignored.
// Plain JavaScript, so it runs before (and without) a build of its own.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const bin = (name) => join(root, 'node_modules', '.bin', name);
const problems = [];

function run(command, args, { capture = false } = {}) {
  console.log(`\n$ ${[command.startsWith(root) ? command.slice(root.length + 1) : command, ...args].join(' ')}`);
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'],
    encoding: 'utf8',
  });
  if (result.error) throw result.error;
  return result;
}

const out = mkdtempSync(join(tmpdir(), 'browserai-temporal-pack-'));
try {
  const pack = run('npm', ['pack', '--json', '--pack-destination', out], { capture: true });
  if (pack.status !== 0) {
    process.stdout.write(pack.stdout ?? '');
    throw new Error(`npm pack failed (exit ${pack.status})`);
  }
  // npm prints the `prepare` script's output before the JSON.
  const [packed] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('[')));
  const tarball = join(out, packed.filename);
  const files = new Set(packed.files.map((f) => f.path));
  console.log(
    `${packed.filename}: ${packed.entryCount} files, ${(packed.size / 1024).toFixed(0)} KiB packed, ${(packed.unpackedSize / 1024).toFixed(0)} KiB unpacked`,
  );

  // What users need is there...
  const targets = new Set([
    'package.json',
    'README.md',
    'LICENSE',
    pkg.main,
    pkg.types,
    ...Object.values(pkg.bin ?? {}),
  ]);
  for (const entry of Object.values(pkg.exports))
    for (const target of typeof entry === 'string' ? [entry] : Object.values(entry)) targets.add(target);
  for (const paths of Object.values(pkg.typesVersions?.['*'] ?? {})) for (const target of paths) targets.add(target);
  for (const target of targets) {
    const path = target.replace(/^\.\//, '');
    if (path.includes('*')) {
      // A subpath pattern (the JSON Schemas): at least one file must match it.
      const pattern = new RegExp(
        `^${path
          .split('*')
          .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
          .join('[^/]+')}$`,
      );
      if (![...files].some((file) => pattern.test(file))) problems.push(`nothing in the package matches ${path}`);
      continue;
    }
    if (!files.has(path)) problems.push(`${path} is not in the package`);
    else if (
      path.endsWith('.js') &&
      !files.has(path.replace(/\.js$/, '.d.ts')) &&
      !Object.values(pkg.bin ?? {}).includes(target)
    ) {
      problems.push(`${path} has no .d.ts beside it`);
    }
  }
  // ...and nothing else.
  const unwanted =
    /^(lib\/(test|bench|scripts|dev)\/|dev\/|test\/|bench\/|scripts\/|deploy\/|docs\/|\.ci\/)|\.tsbuildinfo$|^(Dockerfile|docker-compose\.yml|tsconfig[^/]*\.json|package-lock\.json)$/;
  for (const path of files) if (unwanted.test(path)) problems.push(`${path} should not be in the package`);

  // The bin runs as a command only with a shebang (npm makes it executable on install).
  for (const target of Object.values(pkg.bin ?? {})) {
    // The packed file is the one `prepare` just built.
    const text = readFileSync(join(root, target), 'utf8');
    if (!text.startsWith('#!/usr/bin/env node\n'))
      problems.push(`${target} (bin) does not start with #!/usr/bin/env node`);
  }

  if (run(bin('publint'), ['run', '--strict', tarball]).status !== 0) problems.push('publint failed');
  if (run(bin('attw'), [tarball]).status !== 0) problems.push('attw (Are the types wrong?) failed');
} finally {
  rmSync(out, { recursive: true, force: true });
}

if (problems.length > 0) {
  console.error(`\ncheck-package: ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}
console.log('\ncheck-package: the package is fine (contents, bin, publint, attw).');
