import { continueAsNew } from '@temporalio/workflow';
import type { BrowserTaskInput, BrowserTaskResult } from './input';
import { runBrowserTask } from './run-browser-task';

/**
 * One BrowserAI task, durably: see runBrowserTask. Signals, update and query are in messages.ts.
 */
export async function browserTask(input: BrowserTaskInput): Promise<BrowserTaskResult> {
  return runBrowserTask(input, (next) => continueAsNew<typeof browserTask>(next));
}
