// Saved tasks and their Temporal Schedules, end to end: real worker, real dev server, emulator over HTTP.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { type ApplicationFailure } from '@temporalio/common';
import { InvalidInputError } from '../src/starters/tasks';
import { SavedTasks, ScheduleNotFoundError } from '../src/starters/saved-tasks';
import { scheduleIdFor } from '../src/schedules/cron';
import { stateQuery } from '../src/contract/messages';
import type { SavedTaskDefinition } from '../src/contract/saved-task-input';
import { eventually, startStack, type Stack } from './helpers/stack';

let stack: Stack;
let saved: SavedTasks;
before(async () => {
  stack = await startStack();
  saved = new SavedTasks(stack.env.client, stack.taskQueue);
});
after(async () => {
  await stack?.stop();
});

const definition = (name: string, action = 'Open https://example.com and read the title'): SavedTaskDefinition => ({
  name,
  instructions: [{ action }],
  project: 'test-project',
  geoLocation: { country: 'de' },
});

async function failureType(promise: Promise<unknown>): Promise<string | undefined> {
  const err = await promise.then(
    () => assert.fail('expected a failure'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${err}`);
  return (err.cause as ApplicationFailure).type ?? undefined;
}

describe('saved tasks', () => {
  test('creates a saved task and reads it back by a name with spaces, a slash and unicode; lists it', async () => {
    const name = 'Daily report / Zürich 日本';
    const created = await saved.create(definition(name));
    assert.match(created.taskId, /\S+/);
    const read = await saved.get(name);
    assert.equal(read.name, name);
    assert.equal(read.taskId, created.taskId);
    assert.equal(read.type, 'natural_language');
    assert.equal(read.cron_settings, '', 'cron_settings is sent empty');
    assert.equal(read.geoLocation.country, 'DE');
    assert.ok((await saved.list()).some((task) => task.name === name));
  });

  test('a duplicate name fails Conflict with BrowserAI’s message', async () => {
    await saved.create(definition('duplicate me'));
    const err = await saved.create(definition('duplicate me')).catch((e: unknown) => e);
    assert.ok(err instanceof WorkflowFailedError);
    const cause = err.cause as ApplicationFailure;
    assert.equal(cause.type, 'Conflict');
    assert.match(cause.message, /already exists/);
  });

  test('an unknown name fails SavedTaskNotFound, non-retryably', async () => {
    const before = stack.emulator.count('GET', /^\/saved_tasks\/name\//);
    assert.equal(await failureType(saved.get('no such task')), 'SavedTaskNotFound');
    assert.equal(stack.emulator.count('GET', /^\/saved_tasks\/name\//) - before, 1, 'not retried');
  });

  const invalid: Array<[string, Partial<SavedTaskDefinition> | Record<string, unknown>]> = [
    ['empty name', { name: ' ' }],
    ['no instructions', { instructions: [] }],
    ['non-string action', { instructions: [{ action: 7 }] }],
    ['wrong type', { type: 'crawler_automation' }],
    ['empty project', { project: '' }],
    ['bad country', { geoLocation: { country: 'XX' } }],
  ];
  for (const [what, bad] of invalid) {
    test(`invalid saved task (${what}) is refused with zero HTTP calls`, async () => {
      const input = { ...definition('valid name'), ...bad } as SavedTaskDefinition;
      const requests = stack.emulator.requests.length;
      await assert.rejects(saved.create(input), InvalidInputError);
      // The workflow checks again for callers that skip the starter.
      const type = await failureType(
        stack.env.client.workflow.execute('savedTaskCreate', {
          taskQueue: stack.taskQueue,
          workflowId: `bad-${Date.now()}`,
          args: [input],
        }),
      );
      assert.equal(type, 'InvalidInput');
      assert.equal(stack.emulator.requests.length, requests);
    });
  }
});

describe('runSavedTask', () => {
  test('runs a saved task that needs a one-time code, with submitCode, end to end', async () => {
    await saved.create(definition('Portal login', 'Log in to the supplier portal [needs-code]'));
    const handle = await saved.run('Portal login', { polling: { initialIntervalMs: 250, maxIntervalMs: 1_000 } });
    await eventually('awaiting input', async () => (await handle.query(stateQuery)).awaitingInput);
    await handle.signal('submitCode', { code: '604218' });
    const result = await handle.result();
    assert.equal(result.status, 'finalized');
    const task = stack.emulator.task(result.executionId)!;
    assert.deepEqual(task.codesReceived, ['604218']);
    assert.equal(task.project, 'test-project');
    assert.equal(task.geoLocation.country, 'DE');
  });

  test('overrides replace the saved geoLocation', async () => {
    await saved.create(definition('Override me'));
    const result = await (await saved.run('Override me', { geoLocation: { country: 'FR', city: 'Paris' } })).result();
    assert.equal(stack.emulator.task(result.executionId)?.geoLocation.country, 'FR');
  });

  test("overrides set the code loop's options: maxCodeAttempts 1 ends the run CodesRefused at the first refused code", async () => {
    await saved.create(definition('Strict login', 'Log in to the supplier portal [rejects-code]'));
    // Were maxCodeAttempts not applied, the run would wait for a second code and time out instead.
    const handle = await saved.run('Strict login', { maxCodeAttempts: 1, awaitingInputTimeoutMs: 10_000 });
    await eventually('awaiting input', async () => (await handle.query(stateQuery)).awaitingInput);
    await handle.signal('submitCode', { code: '604218' });
    assert.equal(await failureType(handle.result()), 'CodesRefused');
  });

  test('an unknown saved task fails SavedTaskNotFound without creating anything', async () => {
    const creates = stack.emulator.count('POST', /^\/tasks$/);
    assert.equal(await failureType((await saved.run('missing saved task')).result()), 'SavedTaskNotFound');
    assert.equal(stack.emulator.count('POST', /^\/tasks$/), creates);
  });
});

describe('schedules', () => {
  // Schedule IDs come from the names: names of this run only, so a server other runs used (or use) is no obstacle.
  const suffix = randomUUID().slice(0, 8);
  const [nightly, triggered, managed, createdWithSchedule] = [
    'Nightly crawl',
    'Triggered task',
    'Managed schedule',
    'Created with schedule',
  ].map((name) => `${name} ${suffix}`) as [string, string, string, string];

  test('schedule ID is derived from the name: scheduling twice updates the one schedule', async () => {
    await saved.create(definition(nightly));
    const first = await saved.schedule(nightly, {
      cron: '0 3 * * *',
      timezone: 'Europe/Berlin',
      note: 'first',
    });
    const second = await saved.schedule(nightly, { cron: '30 4 * * *', timezone: 'Europe/Berlin' });
    assert.equal(first.scheduleId, scheduleIdFor(nightly));
    assert.deepEqual([first.created, second.created], [true, false]);
    assert.equal(second.scheduleId, first.scheduleId);
    const described = await saved.describeSchedule(nightly);
    assert.deepEqual(described.cron, ['30 4 * * *']);
    assert.equal(described.timezone, 'Europe/Berlin');
    assert.ok(described.nextRunTimes.length > 0, 'next run times are shown');
    const mine = (
      await eventually('listed', async () => {
        const list = await saved.listSchedules();
        return list.filter((s) => s.scheduleId === first.scheduleId).length === 1 ? list : undefined;
      })
    ).filter((s) => s.scheduleId === first.scheduleId);
    assert.equal(mine.length, 1);
    await saved.deleteSchedule(nightly);
  });

  test('a schedule triggered now runs the saved task', async () => {
    await saved.create(definition(triggered));
    await saved.schedule(triggered, { cron: '0 0 1 1 *' });
    await saved.trigger(triggered);
    const run = await eventually('a run started', async () => (await saved.describeSchedule(triggered)).recentRuns[0]);
    const result = await stack.env.client.workflow.getHandle(run.workflowId).result();
    assert.equal(result.status, 'finalized');
    await saved.deleteSchedule(triggered);
  });

  test('pause, unpause, update the cron, delete', async () => {
    await saved.create(definition(managed));
    await saved.schedule(managed, { cron: '@daily' });
    await saved.pause(managed, 'maintenance');
    let described = await saved.describeSchedule(managed);
    assert.equal(described.paused, true);
    assert.equal(described.note, 'maintenance');
    await saved.unpause(managed);
    await saved.updateCron(managed, '15 6 * * MON-FRI', 'UTC');
    described = await saved.describeSchedule(managed);
    assert.equal(described.paused, false);
    assert.deepEqual(described.cron, ['15 6 * * MON-FRI']);
    assert.equal(described.nextRunTimes[0]!.getUTCMinutes(), 15);
    await saved.deleteSchedule(managed);
    await assert.rejects(saved.describeSchedule(managed), ScheduleNotFoundError);
  });

  test('an invalid cron or time zone is rejected before anything is read or created', async () => {
    const requests = stack.emulator.requests.length;
    await assert.rejects(saved.schedule(nightly, { cron: '0 25 * * *' }), /hour/);
    await assert.rejects(saved.schedule(nightly, { cron: '0 1 * * *', timezone: 'Mars/Olympus' }), InvalidInputError);
    await assert.rejects(
      saved.create(definition('never created'), { schedule: { cron: 'every day' } }),
      InvalidInputError,
    );
    assert.equal(stack.emulator.requests.length, requests);
    await assert.rejects(saved.describeSchedule('never created'), ScheduleNotFoundError);
  });

  test('createSavedTask with a schedule creates both in one call', async () => {
    const created = await saved.create(definition(createdWithSchedule), {
      schedule: { cron: '0 12 * * *', paused: true },
    });
    assert.equal(created.scheduleId, scheduleIdFor(createdWithSchedule));
    const described = await saved.describeSchedule(createdWithSchedule);
    assert.equal(described.paused, true);
    await saved.deleteSchedule(createdWithSchedule);
  });
});
