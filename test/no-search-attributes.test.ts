// A namespace without our search attributes (a cluster whose operator has not registered them):
// the starter falls back to starting without them, the workflow skips its upserts, and the
// task runs as anywhere else instead of failing its workflow task forever.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BrowserAIStatus } from '../src/workflows/search-attributes';
import { startStack, taskInput, type Stack } from './helpers/stack';

let stack: Stack;
before(async () => {
  stack = await startStack({ searchAttributes: false });
});
after(async () => {
  await stack?.stop();
});

test('runs a task on a namespace that lacks the BrowserAI search attributes', async () => {
  const handle = await stack.tasks.start(taskInput());
  const result = await handle.result();
  assert.equal(result.status, 'finalized');
  const description = await handle.describe();
  assert.equal(description.typedSearchAttributes.get(BrowserAIStatus), undefined);
  const history = await handle.fetchHistory();
  const failedTasks = history.events?.filter((e) => e.workflowTaskFailedEventAttributes) ?? [];
  assert.equal(failedTasks.length, 0, 'no workflow task failed');
});
