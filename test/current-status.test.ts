// What the Temporal UI and the `state` query show is current: BrowserAIStatus, the query and the
// current details follow queued -> running -> awaiting -> ended within seconds of BrowserAI
// reporting each, on a real worker and dev server, against the emulator over HTTP.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { stateQuery } from '../src/contract/messages';
import { BrowserAIAwaitingInput, BrowserAIStatus } from '../src/contract/search-attributes';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';

let stack: Stack;
before(async () => {
  // A queue long enough to be seen, and a run long enough to be seen running.
  stack = await startStack({ emulator: { queueMs: 6_000 } });
});
after(async () => {
  await stack?.stop();
});

/** Everything a user looks at, read at once. */
async function shown(handle: WorkflowHandle) {
  const [description, state, metadata] = await Promise.all([
    handle.describe(),
    handle.query(stateQuery),
    handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata'),
  ]);
  return {
    searchAttribute: description.typedSearchAttributes.get(BrowserAIStatus),
    awaitingInput: description.typedSearchAttributes.get(BrowserAIAwaitingInput),
    query: state.status,
    details: metadata.currentDetails ?? '',
    logs: state.progress.logs,
    executionId: state.executionId,
  };
}

/** Waits until BrowserAI reports `status`, then gives the workflow `withinMs` to show it everywhere. */
async function showsWithin(handle: WorkflowHandle, status: string, withinMs: number) {
  const executionId = await eventually('created', async () => (await shown(handle)).executionId ?? undefined);
  await eventually(`BrowserAI reports ${status}`, () => stack.emulator.task(executionId)?.status === status, 30_000);
  const reportedAt = Date.now();
  const seen = await eventually(
    `${status} shown in the search attribute, the query and the details`,
    async () => {
      const now = await shown(handle);
      return now.searchAttribute === status && now.query === status && now.details.includes(status) ? now : undefined;
    },
    withinMs,
  );
  return { ...seen, lagMs: Date.now() - reportedAt };
}

test('queued, then running (with its progress lines), then ended: each shown within seconds of BrowserAI reporting it', async () => {
  const handle = await stack.tasks.start(
    taskInput({ instructions: [{ action: 'Crawl the catalogue [duration=8s]' }] }),
  );
  await showsWithin(handle, 'queued', 5_000);
  const running = await showsWithin(handle, 'running', 5_000);
  assert.ok(running.logs.length > 0, 'progress lines are shown while it runs');
  // A user filtering BrowserAIStatus = "running" finds it (visibility is eventually consistent).
  await eventually('found by a visibility query', async () => {
    for await (const wf of stack.env.client.workflow.list({
      query: `WorkflowId = "${handle.workflowId}" AND BrowserAIStatus = "running"`,
    }))
      return wf;
    return undefined;
  });
  await showsWithin(handle, 'finalized', 5_000);
  assert.equal((await handle.result()).status, 'finalized');
});

test('awaiting is shown, with BrowserAIAwaitingInput, while the task waits for a code', async () => {
  const handle = await stack.tasks.start(taskInput({ instructions: [{ action: 'Log in [needs-code]' }] }));
  const awaiting = await showsWithin(handle, 'awaiting', 5_000);
  assert.equal(awaiting.awaitingInput, true);
  await stack.tasks.submitCode(handle.workflowId, '246810');
  await showsWithin(handle, 'finalized', 10_000);
});
