// Test-only workflows for test/plugin.test.ts: a team's own workflows that use ours, the way the
// docs/your-own-worker.md, "Add it to your own worker", shows. Bundled with ours re-exported beside them.
import { condition, defineSignal, proxyActivities, setHandler, startChild, workflowInfo } from '@temporalio/workflow';
import {
  browserTaskAwaitingInputSignal,
  submitCodeSignal,
  type AwaitingInputNotice,
  type BrowserAIActivities,
  type BrowserTaskInput,
} from '../../src/workflows';
import { browserTask } from '../../src/workflows/browser-task';

export * from '../../src/workflows';

/** What the test, playing the person with the phone, sends once the parent says a code is needed. */
export const codeFromUserSignal = defineSignal<[string]>('codeFromUser');

const { browserAIGetTask } = proxyActivities<BrowserAIActivities>({ startToCloseTimeout: '30 seconds' });

/** Runs a task as a child, learns without polling that it awaits a code, and passes the user's code on. */
export async function loginParent(
  input: BrowserTaskInput,
): Promise<{ notices: AwaitingInputNotice[]; status: string; lookedUp: string }> {
  const notices: AwaitingInputNotice[] = [];
  let code: string | undefined;
  setHandler(browserTaskAwaitingInputSignal, (notice) => void notices.push(notice));
  setHandler(codeFromUserSignal, (received) => void (code = received));
  const child = await startChild(browserTask, { args: [input], workflowId: `${workflowInfo().workflowId}-task` });
  await condition(() => notices.length > 0 && code !== undefined);
  await child.signal(submitCodeSignal, { code: code! });
  const result = await child.result();
  // One activity called directly, as a team's own workflow may.
  const lookedUp = await browserAIGetTask(result.executionId);
  return { notices, status: result.status, lookedUp: lookedUp.status };
}

/** A workflow that is not the task's parent, named by `notifyWorkflowId`: returns the first notice. */
export async function noticeListener(): Promise<AwaitingInputNotice> {
  let notice: AwaitingInputNotice | undefined;
  setHandler(browserTaskAwaitingInputSignal, (received) => void (notice ??= received));
  await condition(() => notice !== undefined);
  return notice!;
}

/** A workflow named by `notifyWorkflowId` that returns the first `count` notices (a refused code is told again). */
export async function noticeCollector(count: number): Promise<AwaitingInputNotice[]> {
  const notices: AwaitingInputNotice[] = [];
  setHandler(browserTaskAwaitingInputSignal, (received) => void notices.push(received));
  await condition(() => notices.length >= count);
  return notices;
}
