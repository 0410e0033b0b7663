// Learning that survives a restart and spans the fleet: a workflow whose task of a known kind
// ended publishes where it ended in the upsert of its final status, and a worker that has never
// seen the kind (a fresh process, another machine) reads it from visibility.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { TaskDurations, taskKind } from '../src/activities/task-durations';
import { readDurations } from '../src/activities/visibility-durations';
import { BrowserAIEndMs, BrowserAIKind } from '../src/contract/search-attributes';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

test('a fresh worker learns a kind from the closed workflows of others, at no extra upsert', async () => {
  // A kind of this run only: a server other test runs share holds ends of other kinds, and of
  // this one from earlier runs.
  const input = taskInput({ instructions: [{ action: `Read the status page ${randomUUID()} [duration=1500ms]` }] });
  const kind = taskKind(input);
  const workflows = {
    list: (options: { query: string; pageSize?: number }) =>
      stack.env.client.workflow.list({ ...options, query: `${options.query} AND ${BrowserAIKind.name} = '${kind}'` }),
  };
  for (let i = 0; i < 2; i++) {
    const handle = await stack.tasks.start(input);
    assert.equal((await handle.result()).status, 'finalized');
    const description = await handle.describe();
    assert.equal(description.typedSearchAttributes.get(BrowserAIKind), kind);
    const endMs = description.typedSearchAttributes.get(BrowserAIEndMs)!;
    assert.ok(endMs > 0 && endMs < 10_000, `ended ${endMs} ms after its create`);
    // Published with the final status: the create's upsert and the end's, no third.
    const history = await handle.fetchHistory();
    const upserts = history.events?.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes) ?? [];
    assert.equal(upserts.length, 2);
  }

  const fresh = new TaskDurations();
  assert.equal(fresh.expectedEnd(kind).basis, 'prior');
  await eventually('the ends are visible', async () => {
    await readDurations(workflows, fresh, Date.now() - 3_600_000);
    return fresh.size.samples === 2;
  });
  const window = fresh.expectedEnd(kind);
  assert.equal(window.basis, 'kind');
  assert.ok(window.toMs > window.fromMs && window.toMs < 10_000, JSON.stringify(window));
  // Read again (the next minute's read overlaps the last): each end counts once.
  await readDurations(workflows, fresh, Date.now() - 3_600_000);
  assert.equal(fresh.size.samples, 2);
});
