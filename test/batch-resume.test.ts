// A batch loses nothing when its client or every worker is killed mid-batch: the same `batch run`
// resumes it (pages already taken are not added twice), a new worker finishes it, and no item's
// task is created twice (docs/fleet.md, "Batches").
// Slow: the CLI run twice and two worker processes, each as a process of its own, waited for.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { BrowserTasks } from '../src/starters/tasks';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import type { BatchItem, BatchState } from '../src/contract/batch-messages';
import type { BatchItemOutcome } from '../src/starters/batch';
import { CLI, batchTestKit, exitCode, itemsOf } from './helpers/batch';
import { ending, eventually } from './helpers/stack';

const kit = batchTestKit();

describe('batch resume', () => {
  it('the CLI killed mid-batch: the same command resumes, no item starts twice, results in order', async () => {
    const project = `batch-${randomUUID().slice(0, 8)}`;
    // Enough items, long enough, that "some done, some not sent" lasts seconds: a busy machine's
    // slow queries (5 s seen in CI) must not miss it (added ≤ completed + concurrency + max-queued).
    const items = itemsOf(project, 20, () => '[duration=2s]');
    const file = join(kit.dir, `${project}.jsonl`);
    writeFileSync(file, items.map((item) => JSON.stringify({ id: item.id, ...item.input })).join('\n') + '\n');
    const out = join(kit.dir, `${project}-results.jsonl`);
    const name = `cli-${project}`;
    const args = [CLI, 'batch', 'run', file, '--name', name, '--concurrency', '3', '--max-queued', '2', '--out', out];
    const first = kit.spawnProcess(args, kit.stack.taskQueue);
    // Killed while items run and the file is not all sent yet.
    await eventually(
      'some items done, some not sent',
      async () => {
        const state = await kit.stack.tasks.batchState(name).catch(() => undefined);
        return state && state.completed >= 2 && state.added < items.length;
      },
      30_000,
    );
    first.kill('SIGKILL');
    await exitCode(first);
    assert.match(first.output(), /Batch cli-.*: 20 items, 3 at a time/);
    const second = kit.spawnProcess(args, kit.stack.taskQueue);
    assert.equal(await exitCode(second), 0, second.output());
    // Not a terminal: plain progress lines, the last one complete.
    assert.match(second.output(), /\] 20\/20 done · 0 failed · 0 running · 0 queued/);
    assert.doesNotMatch(second.output(), /\r/);
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as BatchItemOutcome);
    assert.deepEqual(
      lines.map((o) => [o.id, o.status]),
      items.map((i) => [i.id, 'completed']),
    );
    const creates = kit.createsByItem(project);
    assert.equal(creates.size, items.length);
    assert.ok(
      [...creates.values()].every((n) => n === 1),
      'no item created twice',
    );
  });

  it('a resume with an edited list is refused (BatchMismatch) before any of it is added', async () => {
    // Same length, same IDs: only the fingerprint tells these lists from the batch's own.
    const project = `batch-${randomUUID().slice(0, 8)}`;
    const items = itemsOf(project, 6, () => '[slow]');
    const name = `edited-${project}`;
    // One running, one queued: the rest waits to be sent, where an edited list would go.
    await kit.stack.tasks.startBatch(items, { name, concurrency: 1, maxQueued: 1 });
    await eventually('one running, one queued', async () => {
      const state = await kit.stack.tasks.batchState(name).catch(() => undefined);
      return state?.running === 1 && state.queued === 1;
    });
    const changed = items.map((item, index) =>
      index === 4 ? { ...item, input: { ...item.input, instructions: [{ action: 'Another step' }] } } : item,
    );
    const edits: Array<[string, BatchItem[]]> = [
      ['an item changed', changed],
      ['two items moved', [items[0]!, items[1]!, items[2]!, items[4]!, items[3]!, items[5]!]],
      ['an item replaced', [...items.slice(0, 5), { id: 'item-99', input: items[5]!.input }]],
    ];
    for (const [what, list] of edits) {
      await assert.rejects(kit.stack.tasks.startBatch(list, { name, concurrency: 1 }), (err: unknown) => {
        assert.ok(err instanceof WorkflowUpdateFailedError, `${what}: ${String(err)}`);
        assert.equal((err.cause as ApplicationFailure).type, 'BatchMismatch', what);
        assert.match(err.cause!.message, /started with another list of 6 items/);
        return true;
      });
    }
    // The CLI says so, and sends nothing.
    const file = join(kit.dir, `${project}.jsonl`);
    writeFileSync(file, changed.map((item) => JSON.stringify({ id: item.id, ...item.input })).join('\n'));
    const run = kit.spawnProcess([CLI, 'batch', 'run', file, '--name', name], kit.stack.taskQueue);
    assert.equal(await exitCode(run), 1, run.output());
    assert.match(run.output(), /batch edited-.* was started with another list of 6 items .* give it another name/);
    const state = await kit.stack.tasks.batchState(name);
    assert.deepEqual([state.added, state.running + state.queued], [2, 2], 'nothing of the edited lists was added');

    // The same items, their keys in another order, are the same list: it resumes.
    const same = items.map(({ id, input: { project: itemProject, ...rest } }) => ({
      input: { ...rest, project: itemProject },
      id,
    }));
    const resumed = await kit.stack.tasks.startBatch(same, { name, concurrency: 1 });
    assert.equal(resumed.name, name);
    await kit.stack.tasks.cancelBatch(name);
    await ending(resumed.workflow, 20_000, 'the cancelled batch');
    assert.ok(
      kit.stack.emulator.listTasks().every((task) => task.instructions[0]!.action !== 'Another step'),
      'no edited item ran',
    );
  });

  it('every worker killed mid-batch: a new worker finishes it, no item lost or started twice', async () => {
    const project = `batch-${randomUUID().slice(0, 8)}`;
    const taskQueue = `batch-workers-${randomUUID()}`;
    const tasks = new BrowserTasks(kit.stack.env.client, taskQueue);
    // A poll whose worker died is retried after its 2-s heartbeat timeout.
    const items = itemsOf(project, 6, () => '[duration=1500ms]').map(({ id, input }) => ({
      id,
      input: { ...input, polling: { ...input.polling, heartbeatTimeoutMs: 2_000 } },
    }));
    const name = `workers-${project}`;
    const ready = (worker: ReturnType<typeof kit.spawnProcess>) =>
      eventually('the worker polls', () => worker.output().includes('browserai-temporal worker: task queue'), 30_000);
    const worker = kit.spawnProcess([require.resolve('../src/worker')], taskQueue);
    await ready(worker);
    const batch = await tasks.startBatch(items, { name, concurrency: 2 });
    // Killed while two tasks run and two wait, with no create under way: a create cut short waits
    // out its 1-minute attempt and may be ambiguous (docs/design/at-most-once.md), in a batch or not.
    await eventually(
      'tasks running and queued, every running one created',
      async () => {
        const state = await tasks.batchState(name).catch(() => undefined);
        if (!(state && state.completed >= 2 && state.running === 2 && state.queued > 0)) return false;
        // The create activity also takes the task's first look after the request: past it, polling.
        const running = items.slice(state.completed, state.completed + 2).map(({ id }) => `${name}/${id}`);
        const activities = await Promise.all(
          running.map((id) =>
            tasks
              .handle(id)
              .describe()
              .then(
                (d) => d.raw.pendingActivities ?? [],
                () => [],
              ),
          ),
        );
        return activities.every(
          (pending) => pending.length > 0 && pending.every((a) => a.activityType?.name === 'browserAIPollTask'),
        );
      },
      30_000,
    );
    worker.kill('SIGKILL');
    await exitCode(worker);
    await ready(kit.spawnProcess([require.resolve('../src/worker')], taskQueue));
    const { result } = await ending(batch.workflow, 40_000, 'the batch');
    const counts = result as unknown as BatchState;
    assert.deepEqual([counts.completed, counts.failed], [6, 0]);
    const creates = kit.createsByItem(project);
    assert.equal(creates.size, 6);
    assert.ok(
      [...creates.values()].every((n) => n === 1),
      'no item created twice',
    );
  });
});
