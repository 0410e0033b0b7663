// `npm test`: every test file, against one Temporal dev server and one workflow bundle made for the
// whole run, several files at a time. Each file still gets an empty namespace of its own on that
// server (test/helpers/temporal.ts), so files stay as independent as with a server each, without
// ~30 server starts and ~55 bundles one after another.
//
//   node lib/scripts/run-tests.js [FILE ...]        (default: every lib/test/**/*.test.js)
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
import { globSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTemporal as startDevServer } from '../dev/dev-server';
import { SHARED_ADDRESS_ENV, TEST_WORKFLOW_BUNDLE_ENV } from '../test/helpers/temporal';
import { writeWorkflowBundle } from './build-workflow-bundle';
import { ensureTemporalCli } from './ensure-temporal-cli';

const DEFAULT_FILES = 'lib/test/**/*.test.js';
const DEFAULT_CONCURRENCY = 4;
/** The line a test file carries when it must also run against the emulator's documented answers. */
const BOTH_MODES_TAG = '// Runs against both emulator modes.';
/** The start of the line in which a slow test file says why it is slow. */
const SLOW_TAG = /^\/\/ Slow: /m;
/** The documented answers, with the ended-task answer the interface text implies (409). */
const DOCUMENTED_MODE = { BROWSERAI_EMULATOR_MODE: 'documented', BROWSERAI_EMULATOR_ENDED_ANSWER: '409' };

interface Phase {
  label: string;
  files: string[];
  env: NodeJS.ProcessEnv;
}

async function main(argv: string[]): Promise<number> {
  const concurrency = Number(process.env.TEST_CONCURRENCY ?? DEFAULT_CONCURRENCY);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    console.error(`TEST_CONCURRENCY must be a whole number of 1 or more; got ${process.env.TEST_CONCURRENCY}`);
    return 2;
  }
  const files = slowestFirst(argv.length ? argv : globSync(DEFAULT_FILES).sort());
  const dir = mkdtempSync(join(tmpdir(), 'browserai-tests-'));
  const bundlePath = join(dir, 'workflow-bundle.js');
  const given = process.env[SHARED_ADDRESS_ENV]?.trim();
  if (!given) ensureTemporalCli();
  const started = Date.now();
  const [server] = await Promise.all([given ? undefined : startDevServer(), writeWorkflowBundle(bundlePath)]);
  const address = given ?? server!.address;
  console.log(
    `Tests on Temporal at ${address}, one workflow bundle, ${concurrency} files at a time (set up in ${Date.now() - started} ms)`,
  );
  const env = { ...process.env, [SHARED_ADDRESS_ENV]: address, [TEST_WORKFLOW_BUNDLE_ENV]: bundlePath };
  const phases: Phase[] = [{ label: 'every file', files, env }];
  const bothModes = files.filter((file) => readFileSync(file, 'utf8').includes(BOTH_MODES_TAG));
  if (!process.env.BROWSERAI_EMULATOR_MODE && bothModes.length) {
    phases.push({
      label: 'the files tagged for both emulator modes, in documented mode',
      files: bothModes,
      env: { ...env, ...DOCUMENTED_MODE },
    });
  }
  try {
    const totals = { passed: 0, failed: 0, code: 0 };
    for (const [i, phase] of phases.entries()) {
      console.log(`\n${phase.label} (${phase.files.length} files)`);
      const outcome = await runNodeTests(phase, concurrency, join(dir, `phase-${i}.tap`));
      totals.passed += outcome.passed;
      totals.failed += outcome.failed;
      totals.code ||= outcome.code;
    }
    console.log(`\nTests: ${totals.passed} passed, ${totals.failed} failed`);
    return totals.code || (totals.failed ? 1 : 0);
  } finally {
    await server?.teardown();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The files tagged slow first, each group in its given order. */
function slowestFirst(files: string[]): string[] {
  const slow = files.filter((file) => SLOW_TAG.test(readFileSync(file, 'utf8')));
  return [...slow, ...files.filter((file) => !slow.includes(file))];
}

/** One `node --test` run: the spec reporter on the terminal, TAP into `tapFile` for the counts. */
async function runNodeTests(
  phase: Phase,
  concurrency: number,
  tapFile: string,
): Promise<{ passed: number; failed: number; code: number }> {
  const args = [
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=tap',
    `--test-reporter-destination=${tapFile}`,
    ...phase.files,
  ];
  const child = spawn(process.execPath, args, { stdio: 'inherit', env: phase.env });
  // Ctrl-C reaches the test runner too (same process group): let it end its files and report.
  const ignore = () => undefined;
  process.on('SIGINT', ignore);
  const code = await new Promise<number>((resolve) => child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
  process.off('SIGINT', ignore);
  const tap = readFileSync(tapFile, 'utf8');
  const count = (name: string) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(tap)?.[1] ?? 0);
  return { passed: count('pass'), failed: count('fail') + count('cancelled'), code };
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
