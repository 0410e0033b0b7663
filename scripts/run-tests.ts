// `npm test`: every test file, against one Temporal dev server and one workflow bundle made for the
// whole run, several files at a time. Each file still gets an empty namespace of its own on that
// server (test/helpers/temporal.ts), so files stay as independent as with a server each, without
// ~30 server starts and ~55 bundles one after another.
//
//   node lib/scripts/run-tests.js [FILE ...]          (default: every lib/test/**/*.test.js)
//   node lib/scripts/run-tests.js --unit [FILE ...]   (only the files tagged UNIT_TAG, no server)
//
// The emulator answers as BrowserAI was seen to (observed mode) unless BROWSERAI_EMULATOR_MODE
// says otherwise. The few files whose behaviour differs between the emulator's two modes carry the
// line BOTH_MODES_TAG; without BROWSERAI_EMULATOR_MODE set, they run a second time against the
// documented answers (estimates, `started`, 409 for an ended task), so the project is proven
// against whichever BrowserAI turns out to give, at the price of those files only.
//
// A file that must be slow says why in a line starting SLOW_TAG; those files start first, so the
// run lasts about as long as the slowest of them rather than it plus what was left.
//
// TEST_CONCURRENCY sets how many files run at once (default 4: most of a test's time is spent
// waiting for tasks, timers and polls, not on the CPU). TEMPORAL_TEST_ADDRESS already set runs the
// files on that server instead of starting one.
import { spawn } from 'node:child_process';
import { existsSync, globSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startTemporal as startDevServer } from '../dev/dev-server';
import { SHARED_ADDRESS_ENV, TEST_WORKFLOW_BUNDLE_ENV } from '../test/helpers/temporal';
import { writeWorkflowBundle } from './build-workflow-bundle';
import { ensureTemporalCli } from './ensure-temporal-cli';

const DEFAULT_FILES = 'lib/test/**/*.test.js';
const DEFAULT_CONCURRENCY = 4;
/** The line a test file carries when it must also run against the emulator's documented answers. */
const BOTH_MODES_TAG = '// Runs against both emulator modes.';
/** The line a test file carries when it needs no Temporal server: `npm run test:unit` runs those alone. */
const UNIT_TAG = '// Unit tests: no Temporal server.';
/** The start of the line in which a slow test file says why it is slow. */
const SLOW_TAG = /^\/\/ Slow: /m;
/** The documented answers, with the ended-task answer the interface text implies (409). */
const DOCUMENTED_MODE = { BROWSERAI_EMULATOR_MODE: 'documented', BROWSERAI_EMULATOR_ENDED_ANSWER: '409' };

interface Phase {
  label: string;
  files: string[];
  env: NodeJS.ProcessEnv;
  concurrency: number;
}

async function main(argv: string[]): Promise<number> {
  const concurrency = Number(process.env.TEST_CONCURRENCY ?? DEFAULT_CONCURRENCY);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    console.error(`TEST_CONCURRENCY must be a whole number of 1 or more; got ${process.env.TEST_CONCURRENCY}`);
    return 2;
  }
  const unitOnly = argv[0] === '--unit';
  const given = unitOnly ? argv.slice(1) : argv;
  const found = given.length ? given : globSync(DEFAULT_FILES).sort();
  const files = slowestFirst(unitOnly ? found.filter((file) => tagged(file, UNIT_TAG)) : found);
  const dir = mkdtempSync(join(tmpdir(), 'browserai-tests-'));
  let server: TestWorkflowEnvironment | undefined;
  try {
    if (unitOnly) {
      console.log(`Unit tests: no Temporal server, ${concurrency} files at a time`);
      return await runPhases(dir, [{ label: 'unit test files', files, env: process.env, concurrency }]);
    }
    const bundlePath = join(dir, 'workflow-bundle.js');
    const existing = process.env[SHARED_ADDRESS_ENV]?.trim();
    if (!existing) ensureTemporalCli();
    const started = Date.now();
    [server] = await Promise.all([existing ? undefined : startDevServer(), writeWorkflowBundle(bundlePath)]);
    const address = existing ?? server!.address;
    console.log(
      `Tests on Temporal at ${address}, one workflow bundle, ${concurrency} files at a time (set up in ${Date.now() - started} ms)`,
    );
    const env = { ...process.env, [SHARED_ADDRESS_ENV]: address, [TEST_WORKFLOW_BUNDLE_ENV]: bundlePath };
    const phases: Phase[] = [{ label: 'every file', files, env, concurrency }];
    const bothModes = files.filter((file) => tagged(file, BOTH_MODES_TAG));
    if (!process.env.BROWSERAI_EMULATOR_MODE && bothModes.length) {
      // At the same time as the rest: these files wait on tasks far more than they compute.
      phases.push({
        label: 'the files tagged for both emulator modes, in documented mode',
        files: bothModes,
        env: { ...env, ...DOCUMENTED_MODE },
        concurrency: bothModes.length,
      });
    }
    return await runPhases(dir, phases);
  } finally {
    await server?.teardown();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs the phases at once; the first reports on the terminal as it goes, the others once it is
 * done (their spec output kept in a file meanwhile). Ends with one line of counts for them all.
 */
async function runPhases(dir: string, phases: Phase[]): Promise<number> {
  const outcomes = await Promise.all(
    phases.map((phase, i) => {
      if (i === 0) console.log(`\n${phase.label} (${phase.files.length} files)`);
      return runNodeTests(phase, join(dir, `phase-${i}`), i === 0 ? 'stdout' : join(dir, `phase-${i}.spec`));
    }),
  );
  for (const [i, phase] of phases.entries()) {
    if (i === 0) continue;
    console.log(`\n${phase.label} (${phase.files.length} files)`);
    process.stdout.write(readFileSync(join(dir, `phase-${i}.spec`), 'utf8'));
  }
  printSlowest(
    phases.flatMap((_, i) =>
      Object.entries(outcomes[i]!.fileMs).map(([file, ms]) => ({
        file: `${relative('.', file)}${i ? ' (documented)' : ''}`,
        ms,
      })),
    ),
  );
  // Last, so that the tail of a long log (all a CI summary may keep) says what failed and why.
  const failures = phases.map((_, i) => readIfThere(join(dir, `phase-${i}.tap.failures`))).join('');
  if (failures) console.log(`\nFailed tests:\n${failures}`);
  const passed = outcomes.reduce((sum, o) => sum + o.passed, 0);
  const failed = outcomes.reduce((sum, o) => sum + o.failed, 0);
  console.log(`\nTests: ${passed} passed, ${failed} failed`);
  return outcomes.find((o) => o.code !== 0)?.code ?? (failed ? 1 : 0);
}

/** The ten files whose tests took longest, so a file that grows slow is seen at once. */
function printSlowest(times: { file: string; ms: number }[]): void {
  const slowest = times.sort((a, b) => b.ms - a.ms).slice(0, 10);
  if (!slowest.length) return;
  console.log("\nSlowest files (their tests' time):");
  for (const { file, ms } of slowest) console.log(`  ${(ms / 1_000).toFixed(1).padStart(6)} s  ${file}`);
}

function readIfThere(file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

function tagged(file: string, tag: string | RegExp): boolean {
  const text = readFileSync(file, 'utf8');
  return typeof tag === 'string' ? text.includes(tag) : tag.test(text);
}

/** The files tagged slow first, each group in its given order. */
function slowestFirst(files: string[]): string[] {
  const slow = files.filter((file) => tagged(file, SLOW_TAG));
  return [...slow, ...files.filter((file) => !slow.includes(file))];
}

/** One run of `files` in their order (run-test-files.ts): the spec reporter to `specTo`, TAP and file times into files. */
async function runNodeTests(
  phase: Phase,
  base: string,
  specTo: string,
): Promise<{ passed: number; failed: number; code: number; fileMs: Record<string, number> }> {
  const tapFile = `${base}.tap`;
  const timesFile = `${base}.times.json`;
  const args = [
    join(__dirname, 'run-test-files.js'),
    String(phase.concurrency),
    specTo,
    tapFile,
    timesFile,
    ...phase.files,
  ];
  const child = spawn(process.execPath, args, { stdio: 'inherit', env: phase.env });
  // Ctrl-C reaches the test runner too (same process group): let it end its files and report.
  const ignore = () => undefined;
  process.on('SIGINT', ignore);
  const code = await new Promise<number>((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
  process.off('SIGINT', ignore);
  const tap = existsSync(tapFile) ? readFileSync(tapFile, 'utf8') : '';
  const count = (name: string) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(tap)?.[1] ?? 0);
  const fileMs = existsSync(timesFile)
    ? (JSON.parse(readFileSync(timesFile, 'utf8') || '{}') as Record<string, number>)
    : {};
  return { passed: count('pass'), failed: count('fail') + count('cancelled'), code, fileMs };
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
