// Runs test files with node:test's run(), in the order given, `concurrency` at a time: what
// scripts/run-tests.ts starts for each phase of `npm test`. `node --test FILE...` would sort the
// files by name, so a slow file named late would start late; run() keeps the order.
//
//   node lib/scripts/run-test-files.js CONCURRENCY SPEC_DEST TAP_FILE TIMES_FILE FILE...
//
// SPEC_DEST is `stdout` or a file. Each failed test's name, file and error also go to
// TAP_FILE.failures, which `npm test` prints last (where a CI log's tail shows them). The process
// exits 1 when a test failed.
import { createWriteStream, writeFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { finished } from 'node:stream/promises';
import { run } from 'node:test';
import { spec, tap } from 'node:test/reporters';
import fileTimes from './file-times-reporter';

/** The longest a test may take unless it sets its own timeout. */
const TEST_TIMEOUT_MS = 5 * 60_000;

async function main([concurrency, specTo, tapFile, timesFile, ...files]: string[]): Promise<number> {
  if (!concurrency || !specTo || !tapFile || !timesFile || files.length === 0) {
    console.error('Usage: run-test-files.js CONCURRENCY SPEC_DEST TAP_FILE TIMES_FILE FILE...');
    return 2;
  }
  let failed = false;
  const failures: string[] = [];
  // A test that hangs fails after TEST_TIMEOUT_MS instead of holding the run (and CI) open; a
  // test that needs longer sets its own timeout.
  const stream = run({ files, concurrency: Number(concurrency), isolation: 'process', timeout: TEST_TIMEOUT_MS });
  // Three reporters read the one stream, each adding its listeners: more than Node's default warns of.
  stream.setMaxListeners(32);
  stream.on('test:fail', (event) => {
    failed = true;
    // A suite fails because a test in it did (or a hook): the test's own entry says why.
    if (event.details.type === 'suite' && !isHookFailure(event.details.error)) return;
    const { error: wrapper } = event.details;
    const error = inspect((wrapper as { cause?: unknown }).cause ?? wrapper, { depth: 4 })
      .split('\n')
      .slice(0, 40)
      .join('\n');
    failures.push(`✖ ${event.name}\n  ${event.file ?? ''}\n${error}\n`);
  });
  const outputs = [
    stream.compose(spec()).pipe(specTo === 'stdout' ? process.stdout : createWriteStream(specTo)),
    stream.compose(tap).pipe(createWriteStream(tapFile)),
    stream.compose(fileTimes).pipe(createWriteStream(timesFile)),
  ];
  await Promise.all(outputs.map((output) => (output === process.stdout ? finished(stream) : finished(output))));
  writeFileSync(`${tapFile}.failures`, failures.join('\n'));
  return failed ? 1 : 0;
}

/** A suite's own failure (a before/after hook), not one of its tests'. */
function isHookFailure(error: unknown): boolean {
  return (error as { failureType?: string } | undefined)?.failureType !== 'subtestsFailed';
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
