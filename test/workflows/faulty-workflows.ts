// Test-only workflows, bundled by test/invariants-session.test.ts for a worker of its own.
// `faultyBrowserTask` is browserTask with a bug planted where the workflow hands over to
// continue-as-new: the hand-over throws a TypeError, as a bug in workflow code would. It runs
// through the real session code (create, poll, endSession), so it shows how an unexpected error
// in workflow code ends a workflow whose BrowserAI task is already running.
import { runBrowserTask } from '../../src/workflows/browser-task';
import type { BrowserTaskInput, BrowserTaskResult } from '../../src/contract/input';

export { browserTask } from '../../src/workflows/browser-task';

export async function faultyBrowserTask(input: BrowserTaskInput): Promise<BrowserTaskResult> {
  return runBrowserTask(input, undefined, () => {
    throw new TypeError('simulated bug');
  });
}
