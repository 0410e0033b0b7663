// Replays recorded browserTask histories (test/histories, made by scripts/record-histories.ts)
// against the current workflow code: a change that would make running workflows diverge
// from their history (non-determinism) fails here, not in production.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from './helpers/stack';

const DIR = join(__dirname, '..', '..', 'test', 'histories');

test('recorded histories replay without non-determinism', async () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.history.bin'));
  assert.ok(files.length >= 5, `expected recorded histories in ${DIR}`);
  const histories = files.map((file) => ({
    workflowId: file.replace(/\.history\.bin$/, ''),
    history: temporal.api.history.v1.History.decode(readFileSync(join(DIR, file))),
  }));
  const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories);
  let replayed = 0;
  for await (const result of results) {
    assert.equal(result.error, undefined, `${result.workflowId}: ${result.error}`);
    replayed++;
  }
  assert.equal(replayed, files.length);
});
