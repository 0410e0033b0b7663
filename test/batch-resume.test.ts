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
import type { BatchState } from '../src/contract/batch-messages';
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
