// A namespace with some of our search attributes: an operator who registered last release's five
// and not the two added since. Starts keep the ones that exist (the workflow publishes them), the
// worker says which are missing and what each costs, and the waiting list still finds tasks that
// publish nothing. Real workers, a real dev server, the emulator over HTTP.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { warnOfMissingSearchAttributes } from '../src/search-attributes-check';
import {
  ALL_SEARCH_ATTRIBUTES,
  BrowserAIEndMs,
  BrowserAIKind,
  BrowserAIProject,
} from '../src/contract/search-attributes';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';

/** All but the two that learning from other workers added. */
const LAST_RELEASES_FIVE = ALL_SEARCH_ATTRIBUTES.filter((key) => key !== BrowserAIKind && key !== BrowserAIEndMs);

let stack: Stack;
before(async () => {
  stack = await startStack({ searchAttributes: LAST_RELEASES_FIVE });
});
after(async () => {
  await stack?.stop();
});

const codeTask = (project: string) =>
  taskInput({
    instructions: [{ action: 'Log in [needs-code]' }],
    project,
    polling: { initialIntervalMs: 250, maxIntervalMs: 250, heartbeatTimeoutMs: 5_000 },
  });

test('a start keeps the search attributes the namespace has; the task publishes them and is listed from visibility', async () => {
  const project = `partial-${randomUUID()}`;
  const handle = await stack.tasks.start(codeTask(project));
  const next = await stack.tasks.nextInputRequest(handle.workflowId);
  assert.ok(next.kind === 'input-requested');
  const attributes = (await handle.describe()).typedSearchAttributes;
  assert.equal(attributes.get(BrowserAIProject), project);
  assert.equal(attributes.get(BrowserAIKind), undefined);
  const [listed] = await eventually('the task is listed as waiting', async () => {
    const waiting = await stack.tasks.listAwaitingInput({ project });
    return waiting.length === 1 && waiting;
  });
  assert.equal(listed!.workflowId, handle.workflowId);
  assert.equal(listed!.request, undefined, 'read from visibility, not asked');
  assert.equal(listed!.since, next.request.since);
  await stack.tasks.submitCode(handle.workflowId, '482913');
  assert.equal((await handle.result()).status, 'finalized');
  const history = await handle.fetchHistory();
  assert.equal(history.events?.filter((e) => e.workflowTaskFailedEventAttributes).length, 0, 'no upsert failed');
});

test('the worker names the missing search attributes and what each costs', async () => {
  const warnings: { message: string; meta?: Record<string, unknown> }[] = [];
  await warnOfMissingSearchAttributes(stack.env.client.workflow, 'default', {
    warn: (message, meta) => warnings.push({ message, meta }),
  });
  assert.equal(warnings.length, 1);
  const [{ message, meta }] = warnings as [(typeof warnings)[number]];
  assert.deepEqual(meta, { missingSearchAttributes: [BrowserAIKind.name, BrowserAIEndMs.name] });
  assert.match(message, /BrowserAIKind \(Keyword\): learning from other workers/);
  assert.match(message, /BrowserAIEndMs \(Int\)/);
  assert.match(
    message,
    /temporal operator search-attribute create --namespace default --name BrowserAIKind --type Keyword/,
  );
  assert.doesNotMatch(message, /BrowserAIStatus|BrowserAIProject/);
});

test('the waiting list asks the tasks that publish nothing (started without search attributes)', async () => {
  const project = `silent-${randomUUID()}`;
  // As a caller in another language may start it: no search attributes at all.
  const handle = await stack.env.client.workflow.start('browserTask', {
    workflowId: `silent-${randomUUID()}`,
    taskQueue: stack.taskQueue,
    args: [codeTask(project)],
  });
  const next = await stack.tasks.nextInputRequest(handle.workflowId);
  assert.ok(next.kind === 'input-requested');
  const [listed] = await eventually('the silent task is listed as waiting', async () => {
    const waiting = await stack.tasks.listAwaitingInput({ project });
    return waiting.length === 1 && waiting;
  });
  assert.equal(listed!.workflowId, handle.workflowId);
  assert.deepEqual(listed!.request, next.request);
  await stack.tasks.submitCode(handle.workflowId, '482913');
  await handle.result();
});
