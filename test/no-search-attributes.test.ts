// A namespace without our search attributes (a cluster whose operator has not registered them):
// the starter falls back to starting without them, the workflow skips its upserts, and the
// task runs as anywhere else instead of failing its workflow task forever.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BrowserAIStatus } from '../src/contract/search-attributes';
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

test('the code loop works there too: told of the request, the list of waiting tasks asks each task', async () => {
  const handle = await stack.tasks.start(
    taskInput({ instructions: [{ action: 'Log in [needs-code]' }], project: 'no-attributes' }),
  );
  const next = await stack.tasks.nextInputRequest(handle.workflowId);
  assert.ok(next.kind === 'input-requested');
  const waiting = await stack.tasks.listAwaitingInput({ project: 'no-attributes' });
  assert.equal(waiting.length, 1);
  assert.equal(waiting[0]!.workflowId, handle.workflowId);
  assert.deepEqual(waiting[0]!.request, next.request);
  assert.equal(waiting[0]!.since, next.request.since);
  assert.ok(waiting[0]!.waitedMs! >= 0);
  await stack.tasks.submitCode(handle.workflowId, '482913');
  assert.equal((await handle.result()).status, 'finalized');
  assert.deepEqual(await stack.tasks.listAwaitingInput({ project: 'no-attributes' }), []);
});
