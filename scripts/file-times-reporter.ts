// A node:test reporter (`--test-reporter=./lib/scripts/file-times-reporter.js`) that adds up, per
// test file, the time of its top-level tests and suites, and writes them as one JSON object
// ({ file: ms }) when the run ends. scripts/run-tests.ts prints the slowest files from it, so a
// file that grows slow is seen at once.
import type { TestEvent } from 'node:test/reporters';

async function* fileTimes(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const totals: Record<string, number> = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, name, details } = event.data;
    // A file's own entry (named by its path) comes only when it fails, and holds its tests' time.
    if (!file || nesting !== 0 || name === file) continue;
    totals[file] = (totals[file] ?? 0) + details.duration_ms;
  }
  yield JSON.stringify(totals);
}

// node:test loads a reporter as the module's default export: module.exports itself, for CommonJS.
export = fileTimes;
