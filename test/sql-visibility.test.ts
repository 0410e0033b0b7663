// What a production-shaped Temporal (SQL visibility on PostgreSQL or MySQL, limit.maxIDLength 255)
// refuses or drops, and the dev server does not: a Keyword value over 255 characters (the workflow
// then has no visibility row), a workflow ID over the server's limit, a search attribute type
// whose columns are all taken. Runs on the dev server, and on such a server with
// TEMPORAL_TEST_ADDRESS (scripts/release-check-postgres.sh), sharing it with other test files:
// every name here is unique to its test.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { AwaitingTask } from '../src/starters/awaiting-input';
import { keywordValue, MAX_KEYWORD_CHARS } from '../src/workflows/keyword-value';
import { BrowserAIProject, BrowserAIStatus } from '../src/contract/search-attributes';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';

const ROOT = resolve(__dirname, '../..');
const CLI = resolve(__dirname, '../src/cli/main.js');
const run = promisify(execFile);

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

/** The environment the CLI gets: this stack's server, namespace and task queue. */
function cliEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: stack.env.address,
    TEMPORAL_NAMESPACE: stack.env.namespace ?? 'default',
    TEMPORAL_TASK_QUEUE: stack.taskQueue,
  };
}

/** Runs the CLI; resolves with its exit code and output whatever the code. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: cliEnv() });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const { code, stdout, stderr } = err as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

/** A project name of `chars` characters, unique to this run. */
function longProject(chars: number, last = 'x'): string {
  const start = `long-project-${randomUUID()}-`;
  return start + 'p'.repeat(chars - start.length - 1) + last;
}

describe('Keyword values fit SQL visibility (VARCHAR(255))', () => {
  test('keywordValue: unchanged up to 255 characters; longer, cut to 255 with its length and a hash of the whole', () => {
    const fits = 'a'.repeat(MAX_KEYWORD_CHARS);
    assert.equal(keywordValue(fits), fits);
    for (const value of ['b'.repeat(256), 'é'.repeat(512), '😀'.repeat(256), `${'c'.repeat(250)}😀😀😀😀😀😀`]) {
      const kept = keywordValue(value);
      assert.ok(kept.length <= MAX_KEYWORD_CHARS, `${kept.length} UTF-16 units`);
      assert.ok(value.startsWith(kept.slice(0, 150)), 'keeps the beginning, and no half of a surrogate pair');
      assert.doesNotThrow(() => encodeURIComponent(kept), 'no lone surrogate');
      assert.match(kept, new RegExp(`cut by browserai-temporal: ${value.length} characters in all, #[0-9a-f]{16}\\]$`));
      assert.equal(keywordValue(value), kept, 'deterministic');
    }
    const project = longProject(300);
    assert.notEqual(keywordValue(project), keywordValue(`${project.slice(0, -1)}y`), 'differing ends stay apart');
  });

  test('a 300-character project: stored in 255 characters, and `waiting --project` lists that task alone, under its whole name', async () => {
    // Broke: BrowserAIProject held all 300 characters; SQL visibility refused the row, so the task
    // was in no list at all (the server retries the write for an hour, then drops it).
    const project = longProject(300);
    const twin = `${project.slice(0, -1)}y`; // the same first 299 characters
    const handles = await Promise.all(
      [project, twin].map((p) =>
        stack.tasks.start(taskInput({ instructions: [{ action: 'Log in [needs-code]' }], project: p })),
      ),
    );
    try {
      await Promise.all(handles.map((h) => stack.tasks.nextInputRequest(h.workflowId)));
      const stored = (await handles[0]!.describe()).typedSearchAttributes.get(BrowserAIProject)!;
      assert.ok(stored.length <= MAX_KEYWORD_CHARS, `BrowserAIProject of ${stored.length} characters`);
      assert.equal(stored, keywordValue(project));

      const listed = await eventually('visibility lists the task', async () => {
        const found = await stack.tasks.listAwaitingInput({ project });
        return found.length > 0 ? found : undefined;
      });
      assert.deepEqual(
        listed.map((task) => [task.workflowId, task.project]),
        [[handles[0]!.workflowId, project]],
      );

      const { code, stdout, stderr } = await cli(['waiting', '--project', project]);
      assert.equal(code, 0, stderr);
      const waiting = JSON.parse(stdout) as AwaitingTask[];
      assert.deepEqual(
        waiting.map((task) => [task.workflowId, task.project]),
        [[handles[0]!.workflowId, project]],
      );
      const twinListed = await stack.tasks.listAwaitingInput({ project: twin });
      assert.deepEqual(
        twinListed.map((task) => [task.workflowId, task.project]),
        [[handles[1]!.workflowId, twin]],
      );
    } finally {
      await Promise.all(handles.map((h) => stack.tasks.cancel(h.workflowId).catch(() => undefined)));
    }
  });

  test('a status of 3,000 characters: BrowserAIStatus holds 255 at most, its beginning first', async () => {
    // Broke: the status was kept as 256 characters plus the cut mark (about 300): every upsert of it
    // failed SQL visibility's write.
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: `${randomUUID()} crawl [long-status=3000] [duration=3s]` }] }),
    );
    const shown = await eventually('the long status shown', async () => {
      const status = (await handle.describe()).typedSearchAttributes.get(BrowserAIStatus);
      return typeof status === 'string' && status.includes('cut by browserai-temporal') ? status : undefined;
    });
    assert.ok(shown.length <= MAX_KEYWORD_CHARS, `BrowserAIStatus of ${shown.length} characters`);
    assert.match(shown, /^(queued|running) \(the engine/);
    assert.equal((await handle.result()).status, 'finalized');
  });
});

test("a workflow ID the server refuses: the CLI prints the server's reason, not only that the start failed", async () => {
  // Broke: the CLI printed "Failed to start Workflow" and nothing else. 1,001 characters are over
  // the dev server's limit (1,000) and SQL persistence's (255).
  const { code, stdout, stderr } = await cli([
    'start',
    '--instruction',
    'Open example.com',
    '--project',
    'demo',
    '--country',
    'US',
    '--id',
    `id-${'i'.repeat(998)}`,
  ]);
  assert.equal(code, 1, stdout);
  assert.match(
    stderr,
    /Failed to start Workflow: .*INVALID_ARGUMENT: WorkflowId (length exceeds limit|exceeds maximum allowed length)/,
  );
});

test('temporal-setup.sh: a search attribute type with no free column fails at once, with the reason', async () => {
  // Broke: the refusal was taken for a server not ready yet, and retried for 3 minutes.
  const address = stack.env.address;
  const namespace = `setup-full-${randomUUID().slice(0, 8)}`;
  await run('temporal', ['operator', 'namespace', 'create', '--namespace', namespace, '--address', address]);
  // Every Int column the namespace has (3 in SQL visibility and on the dev server), taken.
  await eventually(
    'the namespace takes search attributes',
    () =>
      run('temporal', [
        'operator',
        'search-attribute',
        'create',
        '--namespace',
        namespace,
        '--address',
        address,
        ...[1, 2, 3].flatMap((n) => ['--name', `TakenInt${n}`, '--type', 'Int']),
      ]).then(
        () => true,
        () => false,
      ),
    30_000,
  );
  const started = Date.now();
  const outcome = await run('/bin/sh', [resolve(ROOT, 'deploy/temporal-setup.sh')], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_SETUP_SLEEP_SECONDS: '1',
      TEMPORAL_SETUP_MAX_ATTEMPTS: '20',
    },
  }).then(
    () => assert.fail('temporal-setup.sh succeeded on a namespace with no free Int column'),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
  assert.equal(outcome.code, 1);
  assert.match(outcome.stderr, /BrowserAIEndMs \(Int\): the namespace has no free search attribute of this type/);
  assert.match(outcome.stderr, /cannot have more than 3 search attribute of type Int/i);
  assert.doesNotMatch(outcome.stdout, /BrowserAIEndMs \(Int\): not yet/, 'not retried');
  assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms`);
});
