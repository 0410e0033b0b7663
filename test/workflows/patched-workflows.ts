// Test-only, for test/replay.test.ts: the same change as changed-workflows.ts made with care, behind
// patched(): new runs sleep, and workflows already running (whose histories have no patch marker)
// skip the sleep on replay, so they replay as they ran.
import { continueAsNew, patched, sleep } from '@temporalio/workflow';
import { runBrowserTask } from '../../src/workflows/browser-task';
import type { BrowserTaskInput, BrowserTaskResult } from '../../src/contract/input';
import type { CarriedState } from '../../src/workflows/session/task-session';

export async function browserTask(input: BrowserTaskInput, carried?: CarriedState): Promise<BrowserTaskResult> {
  if (patched('pause-before-create')) await sleep(10);
  return runBrowserTask(input, carried, (next, state) => continueAsNew<typeof browserTask>(next, state));
}
