// Test-only, for test/replay.test.ts: the next release's browserTask as a careless change would
// make it. It sleeps a moment before the task starts: a timer where the histories of workflows
// already running have none, so replaying them fails with non-determinism.
import { continueAsNew, sleep } from '@temporalio/workflow';
import { runBrowserTask } from '../../src/workflows/browser-task';
import type { BrowserTaskInput, BrowserTaskResult } from '../../src/contract/input';
import type { CarriedState } from '../../src/workflows/session/task-session';

export async function browserTask(input: BrowserTaskInput, carried?: CarriedState): Promise<BrowserTaskResult> {
  await sleep(10);
  return runBrowserTask(input, carried, (next, state) => continueAsNew<typeof browserTask>(next, state));
}
