// Batches (docs/fleet.md, "Batches"): a batch workflow runs its items as child `browserTask`s,
// `concurrency` at a time, fed in pages, with counts and every outcome in input order; it cancels
// once, runs its failed items again, and refuses bad items before anything starts.
// Slow: checks a file of 250,000 lines, as `batch run` does, in a process of its own.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { InvalidInputError } from '../src/contract/input-problems';
import type { BatchItemOutcome } from '../src/starters/batch';
import { addBatchItemsUpdate } from '../src/contract/batch-messages';
import { batchFingerprint } from '../src/starters/batch-fingerprint';
import { CLI, batchTestKit, exitCode, itemsOf } from './helpers/batch';
import { ending, eventually, taskInput } from './helpers/stack';

const kit = batchTestKit();

async function outcomesOf(name: string): Promise<BatchItemOutcome[]> {
  const outcomes: BatchItemOutcome[] = [];
  await kit.stack.tasks.batchResults(name, (outcome) => void outcomes.push(outcome));
  return outcomes;
}

describe('batch', () => {
  it('runs 30 items a few at a time, with counts, and gives every outcome in input order', async () => {
    const project = `batch-${randomUUID().slice(0, 8)}`;
    const items = itemsOf(project, 30, (index) => (index % 10 === 9 ? '[fail]' : ''));
    // Reversed IDs: the order of the list, not of the IDs, is the results' order.
    items.reverse();
    const name = `batch-${randomUUID()}`;
    // A queue of 4: the pages wait for room, so the feeding is exercised, not just one page.
    const batch = await kit.stack.tasks.startBatch(items, { name, concurrency: 15, maxQueued: 4 });
    let peak = 0;
    const watching = (async () => {
      for (;;) {
        const state = await kit.stack.tasks.batchState(name).catch(() => undefined);
        if (state) peak = Math.max(peak, state.running);
        if (state?.status === 'completed') return;
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    assert.equal(await batch.added, 30);
    const { result } = await ending(batch.workflow, 40_000, 'the batch');
    await watching;
    assert.ok(result);
    const final = await kit.stack.tasks.batchState(name);
    assert.deepEqual(
      {
        queued: final.queued,
        running: final.running,
        completed: final.completed,
        failed: final.failed,
        cancelled: final.cancelled,
      },
      { queued: 0, running: 0, completed: 27, failed: 3, cancelled: 0 },
    );
    assert.ok(peak <= 15 && peak >= 2, `at most 15 ran at once (peak ${peak})`);
    const outcomes = await outcomesOf(name);
    assert.deepEqual(
      outcomes.map((o) => o.id),
      items.map((i) => i.id),
    );
    assert.deepEqual(
      outcomes.filter((o) => o.status === 'failed').map((o) => [o.id, o.failure?.type]),
      ['item-30', 'item-20', 'item-10'].map((id) => [id, 'BrowserAITaskFailed']),
    );
    assert.ok(outcomes.filter((o) => o.status === 'completed').every((o) => o.result?.status === 'finalized'));
    assert.ok(
      [...kit.createsByItem(project).values()].every((n) => n === 1),
      'each item created once',
    );
    assert.equal(kit.createsByItem(project).size, 30);

    // retry-failed: the three failed items run again (now passing), under their own IDs.
    const retried = await kit.stack.tasks.retryFailed(name);
    assert.equal(retried, 3);
    const again = kit.stack.tasks.handle(name);
    await ending(again, 20_000, 'the retry run');
    const afterRetry = await kit.stack.tasks.batchState(name);
    assert.equal(afterRetry.failed, 3, 'the [fail] items fail again');
    assert.equal(afterRetry.completed, 27);
    assert.equal(afterRetry.retried, 3);
    assert.equal(kit.createsByItem(project).get(10), 2, 'a failed item ran a second time');
    assert.equal(kit.createsByItem(project).get(1), 1, 'a completed item did not');
  });

  it("keeps each run's history within its byte budget, and lists outcomes past gRPC's 4 MB", async () => {
    // Each child's completion carries its result into the batch's history: 6 running items of
    // 1.2 MB would put 7.2 MB in one run of a 4 MB budget (at the 40 MB default, 50 items of 1.5 MB
    // would pass Temporal's 50 MB limit and the batch would be terminated). The bench's 10,000-item
    // batch could not list its outcomes either: a 1,000-event page was larger than the client takes.
    const project = `batch-${randomUUID().slice(0, 8)}`;
    const items = itemsOf(project, 6, () => '[large=1200000]').map((item) => ({
      ...item,
      input: { ...item.input, maxResultBytes: 1_300_000 },
    }));
    const name = `batch-${randomUUID()}`;
    const maxHistoryBytes = 4_000_000;
    const batch = await kit.stack.tasks.startBatch(items, { name, concurrency: 6, maxHistoryBytes });
    await ending(batch.workflow, 60_000, 'the batch');
    const outcomes = await outcomesOf(name);
    assert.deepEqual(
      outcomes.map((o) => [o.id, o.status]),
      items.map((i) => [i.id, 'completed']),
    );
    const { client } = kit.stack.env;
    const last = await client.workflow.getHandle(name).describe();
    const first = last.raw.workflowExecutionInfo?.firstRunId;
    assert.notEqual(first, last.runId, 'the batch continued as new rather than pass its budget');
    const runIds = await eventually('every run of the batch listed', async () => {
      const listed: string[] = [];
      for await (const run of client.workflow.list({ query: `WorkflowId = "${name}"` })) listed.push(run.runId);
      return listed.includes(first!) && listed.includes(last.runId) && listed;
    });
    for (const runId of runIds) {
      const { raw } = await client.workflow.getHandle(name, runId).describe();
      const bytes = Number(raw.workflowExecutionInfo?.historySizeBytes ?? 0);
      assert.ok(bytes > 0 && bytes <= maxHistoryBytes, `run ${runId}: ${bytes} bytes of history`);
    }
  });

  it('takes a page when there is room for it, so history holds each page about once', async () => {
    // An update's page is written to history when the batch accepts it; taking a few items each
    // time a slot freed wrote the rest of the page again and again, so history grew by pages, not
    // items (what a batch's history holds per item: docs/fleet.md, "Batches").
    const project = `batch-${randomUUID().slice(0, 8)}`;
    const items = itemsOf(project, 40);
    const name = `batch-${randomUUID()}`;
    const batch = await kit.stack.tasks.startBatch(items, { name, concurrency: 5, maxQueued: 20 });
    await ending(batch.workflow, 40_000, 'the batch');
    const { events } = await kit.stack.env.client.workflow.getHandle(name).fetchHistory();
    const pages = events!.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
    // 20 items, then room for half the queue (10) twice; one page more if a look came in between.
    assert.ok(pages <= 4, `${pages} pages accepted for 40 items and a queue of 20`);
  });

  it('refuses bad items and a repeated ID before anything starts', async () => {
    const project = `batch-${randomUUID().slice(0, 8)}`;
    const items = itemsOf(project, 5);
    items[1] = { id: 'item-2', input: { ...items[1]!.input, geoLocation: { country: 'Atlantis' } } };
    items[3] = { ...items[3]!, id: 'item-1' };
    const name = `batch-${randomUUID()}`;
    await assert.rejects(kit.stack.tasks.startBatch(items, { name }), (err: unknown) => {
      assert.ok(err instanceof InvalidInputError);
      assert.match(err.problems.join('\n'), /^item 2: geoLocation\.country/m);
      assert.match(err.problems.join('\n'), /^item 4: id "item-1" is used already at item 1/m);
      return true;
    });
    await assert.rejects(
      kit.stack.tasks.startBatch(itemsOf(project, 1), { name, maxHistoryBytes: 60_000_000 }),
      /maxHistoryBytes must be a whole number from 4,000,000 to 40,000,000/,
    );
    await assert.rejects(kit.stack.tasks.batchState(name), /not found/i);
    assert.equal(kit.createsByItem(project).size, 0);
  });

  it('cancel drops the queued items and stops each running task once', async () => {
    const project = `batch-${randomUUID().slice(0, 8)}`;
    const items = itemsOf(project, 8, () => '[slow]');
    const name = `batch-${randomUUID()}`;
    const batch = await kit.stack.tasks.startBatch(items, { name, concurrency: 3 });
    await batch.added;
    await eventually(
      'three tasks running',
      () => kit.stack.emulator.runningTasks().filter((t) => t.project === project).length === 3,
    );
    // A page sent again (its answer lost, say) adds nothing: the batch skips what it holds.
    const again = await batch.workflow.executeUpdate(addBatchItemsUpdate, {
      args: [{ from: 0, items, total: 8, fingerprint: batchFingerprint(items) }],
    });
    assert.equal(again.accepted, 8);
    const counted = await kit.stack.tasks.batchState(name);
    assert.deepEqual([counted.added, counted.queued + counted.running], [8, 8]);
    await kit.stack.tasks.cancelBatch(name);
    const { failure } = await ending(batch.workflow, 20_000, 'the cancelled batch');
    assert.ok(failure, 'the batch ends cancelled');
    const state = await kit.stack.tasks.batchState(name);
    assert.deepEqual(
      [state.status, state.cancelled, state.queued, state.running, state.completed],
      ['cancelled', 8, 0, 0, 0],
    );
    const tasks = kit.stack.emulator.listTasks().filter((t) => t.project === project);
    assert.equal(tasks.length, 3, 'queued items never created');
    for (const task of tasks) {
      assert.equal(
        kit.stack.emulator.count('POST', new RegExp(`^/tasks/${task.executionId}/command$`)),
        1,
        'one stop each',
      );
    }
    const outcomes = await outcomesOf(name);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['cancelled', 'cancelled', 'cancelled', ...Array(5).fill('not_started')],
    );
  });

  it('draws a live progress bar on a terminal', async () => {
    const project = `batch-${randomUUID().slice(0, 8)}`;
    const items = itemsOf(project, 6, () => '[duration=1s]');
    const file = join(kit.dir, `${project}.jsonl`);
    writeFileSync(file, items.map((item) => JSON.stringify({ id: item.id, ...item.input })).join('\n'));
    const args = [CLI, 'batch', 'run', file, '--name', `tty-${project}`, '--concurrency', '2'];
    const run = kit.spawnProcess(args, kit.stack.taskQueue, { terminal: true });
    assert.equal(await exitCode(run), 0, run.output());
    // One line redrawn in place (carriage return, erase to its end), not a line per look.
    const draws = run.output().split('\r[').slice(1);
    assert.ok(draws.length >= 3, `the bar was redrawn (${draws.length} draws): ${JSON.stringify(run.output())}`);
    assert.ok(
      draws.every((draw) => draw.includes('\u001b[K')),
      'each draw erases what the last left',
    );
    assert.ok(
      draws.some((draw) =>
        /^[#-]{24}\] [1-5]\/6 done · 0 failed · \d running · \d queued · [\d.]+\/s · ETA /.test(draw),
      ),
      'a draw mid-batch: done, failed, running, queued, rate and ETA',
    );
    assert.match(draws.at(-1)!, /^#{24}\] 6\/6 done · 0 failed · 0 running · 0 queued/);
  });

  it('batch run exits, naming the state, once its batch is terminated or times out', async () => {
    const project = `batch-${randomUUID().slice(0, 8)}`;
    const items = itemsOf(project, 6, () => '[slow]');
    const file = join(kit.dir, `${project}.jsonl`);
    writeFileSync(file, items.map((item) => JSON.stringify({ id: item.id, ...item.input })).join('\n'));
    const running = () => kit.stack.emulator.runningTasks().filter((t) => t.project === project).length;

    // An operator terminates it: its running tasks are stopped (the children's parent-close policy).
    const name = `terminated-${project}`;
    const run = kit.spawnProcess(
      [CLI, 'batch', 'run', file, '--name', name, '--concurrency', '2'],
      kit.stack.taskQueue,
    );
    await eventually('two tasks running', () => running() === 2);
    await kit.stack.env.client.workflow.getHandle(name).terminate('an operator ends it');
    assert.equal(await exitCode(run), 1, run.output());
    assert.match(run.output(), /· terminated\n/);
    assert.match(run.output(), new RegExp(`Batch ${name} was terminated in Temporal: it cannot be resumed`));
    assert.equal((await kit.stack.tasks.batchState(name)).status, 'terminated');
    await eventually('its tasks stopped', () => running() === 0);

    // Started with a run timeout (by hand, as an operator might), then resumed by the CLI.
    const timed = `timed-out-${project}`;
    await kit.stack.env.client.workflow.start('browserAIBatch', {
      workflowId: timed,
      taskQueue: kit.stack.taskQueue,
      args: [{ concurrency: 2, total: items.length }],
      workflowRunTimeout: '4s',
    });
    const resumed = kit.spawnProcess([CLI, 'batch', 'run', file, '--name', timed], kit.stack.taskQueue);
    assert.equal(await exitCode(resumed), 1, resumed.output());
    assert.match(resumed.output(), new RegExp(`Batch ${timed} was timed out in Temporal`));
    await eventually('its tasks stopped', () => running() === 0);

    // Run again once it has timed out: the same words, not "has finished" (a clean-clone CI run, its
    // CLI slow to start, reached the timed-out batch this way and was told it had finished).
    const again = kit.spawnProcess([CLI, 'batch', 'run', file, '--name', timed], kit.stack.taskQueue);
    assert.equal(await exitCode(again), 1, again.output());
    assert.match(again.output(), new RegExp(`Batch ${timed} was timed out in Temporal: it cannot be resumed`));
  });

  it('bad lines are reported with their line numbers before anything starts', async () => {
    const project = `batch-${randomUUID().slice(0, 8)}`;
    const good = (id: string) => JSON.stringify({ id, ...taskInput({ project }) });
    const file = join(kit.dir, `${project}.jsonl`);
    writeFileSync(
      file,
      [
        good('a'),
        '',
        '{not json',
        JSON.stringify({ id: 'c', ...taskInput({ project, type: 'nope' as never }) }),
        good('a'),
      ].join('\n'),
    );
    const run = kit.spawnProcess([CLI, 'batch', 'run', file, '--name', `bad-${project}`], kit.stack.taskQueue);
    assert.equal(await exitCode(run), 2);
    const output = run.output();
    assert.match(output, /line 3: not JSON/);
    assert.match(output, /line 4: type must be one of crawler_automation, script_automation/);
    assert.match(output, /line 5: id "a" is used already at line 1/);
    assert.match(output, /Nothing was started or sent/);
    await assert.rejects(kit.stack.tasks.batchState(`bad-${project}`), /not found/i);

    // CSV: the header names the fields; a bad country on line 3.
    const csv = join(kit.dir, `${project}.csv`);
    writeFileSync(
      csv,
      'id,instructions,project,type,geoLocation.country\nx,"Open https://example.com, then read it",p,crawler_automation,US\ny,Read,p,crawler_automation,Atlantis\n',
    );
    const csvRun = kit.spawnProcess([CLI, 'batch', 'run', csv, '--name', `bad-csv-${project}`], kit.stack.taskQueue);
    assert.equal(await exitCode(csvRun), 2);
    assert.match(csvRun.output(), /line 3: geoLocation\.country/);
    assert.doesNotMatch(csvRun.output(), /line 2:/);
  });

  it('a CSV file is read strictly: bad quoting, bytes that are not UTF-8 and prototype headers refused by line; a BOM read', async () => {
    const project = `batch-${randomUUID().slice(0, 8)}`;
    const header = 'id,instructions,project,type,geoLocation.country';
    const row = (id: string, instruction = 'Read the title') => `${id},${instruction},${project},crawler_automation,US`;
    const bad: Array<[string, string | Buffer, RegExp]> = [
      // Before, a stray quote swallowed the rest of the file into one cell, and an unclosed one ran to its end.
      [
        'stray',
        [header, row('a'), row('b', 'Open "it"'), row('c')].join('\n'),
        /line 3: column 2 \(instructions\): a stray quote/,
      ],
      [
        'unclosed',
        [header, row('a', '"Open it'), row('b'), row('c')].join('\n'),
        /line 2: a quoted field is not closed/,
      ],
      // Latin-1 "Café": mangled into U+FFFD before.
      [
        'latin1',
        Buffer.concat([Buffer.from(`${header}\n${row('a')}\n`), Buffer.from(row('b', 'Caf\xe9'), 'latin1')]),
        /line 3: not UTF-8 text/,
      ],
      // Before, `__proto__.polluted` set Object.prototype.polluted in the CLI's process.
      [
        'proto',
        `id,__proto__.polluted,instructions\na,yes,Read`,
        /line 1: column 2 \("__proto__\.polluted"\) is not a task input field/,
      ],
      [
        'constructor',
        `id,constructor.name,instructions\na,x,Read`,
        /line 1: column 2 \("constructor\.name"\) is not a task input field/,
      ],
    ];
    await Promise.all(
      bad.map(async ([what, content, problem]) => {
        const file = join(kit.dir, `${project}-${what}.csv`);
        writeFileSync(file, content);
        const run = kit.spawnProcess([CLI, 'batch', 'run', file, '--name', `${what}-${project}`], kit.stack.taskQueue);
        assert.equal(await exitCode(run), 2, `${what}: ${run.output()}`);
        assert.match(run.output(), problem, what);
        assert.match(run.output(), /Nothing was started or sent/, what);
      }),
    );
    assert.equal(kit.stack.emulator.listTasks().filter((task) => task.project === project).length, 0);

    // A byte-order mark (as spreadsheets write it) and Windows line breaks: read, not an invisible field name.
    const bom = join(kit.dir, `${project}-bom.csv`);
    writeFileSync(
      bom,
      `\uFEFF${[header, row('x', '"Open https://example.com, then read it"'), row('y')].join('\r\n')}\r\n`,
    );
    const run = kit.spawnProcess([CLI, 'batch', 'run', bom, '--name', `bom-${project}`], kit.stack.taskQueue);
    assert.equal(await exitCode(run), 0, run.output());
    const tasks = kit.stack.emulator.listTasks().filter((task) => task.project === project);
    assert.deepEqual(tasks.map((task) => task.instructions[0]!.action).sort(), [
      'Open https://example.com, then read it',
      'Read the title',
    ]);
    assert.deepEqual(
      (await outcomesOf(`bom-${project}`)).map((o) => [o.id, o.status]),
      [
        ['x', 'completed'],
        ['y', 'completed'],
      ],
    );
  });

  it('a file of 250,000 lines is checked in a 96 MB heap, its last line named', async () => {
    // Before, the reader held the text, its rows and every item at once: about 2.6 GB for a million
    // lines, 650 MB for these. Only the IDs seen grow with the file now (about 15 MB here); a
    // million lines were checked in 262 MB of RSS (docs/design/batch-client.md). A quarter of that
    // file proves the bound in a quarter of the time.
    const file = join(kit.dir, 'million.csv');
    const out = createWriteStream(file);
    out.write('id,instructions,project,type,geoLocation.country\n');
    for (let line = 2; line <= 250_001; line++) {
      const country = line === 250_001 ? 'Atlantis' : 'US';
      if (
        !out.write(
          `item-${line},"Open https://example.com/${line}, then read it",leads,crawler_automation,${country}\n`,
        )
      )
        await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    const run = kit.spawnProcess(
      ['--max-old-space-size=96', CLI, 'batch', 'run', file, '--name', 'million'],
      kit.stack.taskQueue,
    );
    assert.equal(await exitCode(run), 2, run.output());
    assert.match(run.output(), /line 250001: geoLocation\.country must be an ISO 3166-1 alpha-2 code/);
    await assert.rejects(kit.stack.tasks.batchState('million'), /not found/i);
  });
});
