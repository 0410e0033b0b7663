// The activities in a mocked activity context, against the emulator over real HTTP: at-most-once
// delivery of creates, the failure each error becomes, polling, cancellation and result trimming.
// Runs against both emulator modes. The activities read the answers that differ between them.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { Info } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { BrowserAIEmulator, emulatorOptionsFromEnv } from '../src/emulator';
import { BrowserAIClient } from '../src/browserai';
import {
  createActivities,
  type BrowserAIActivities,
  type CreatedTask,
  type CreateTaskInput,
  type PollTaskInput,
} from '../src/activities';
import { TaskDurations } from '../src/activities/task-durations';
import { FailureType } from '../src/contract/errors';

/** The create of a worker without a fleet limit: it always answers with a task. */
const createOf = (activities: BrowserAIActivities) =>
  activities.browserAICreateTask as (input: CreateTaskInput) => Promise<CreatedTask>;

let emu: BrowserAIEmulator;
let acts: BrowserAIActivities;
let client: BrowserAIClient;

before(async () => {
  emu = await BrowserAIEmulator.start({ defaultDurationMs: 300, queueMs: 50, ...emulatorOptionsFromEnv(process.env) });
  client = new BrowserAIClient({ apiToken: emu.apiToken, baseUrl: emu.baseUrl });
  acts = createActivities(client);
});

after(async () => {
  await emu.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `env.run` with the activity's own return type (MockActivityEnvironment's generic cannot infer it). */
function run<A extends unknown[], R>(
  env: MockActivityEnvironment,
  fn: (...args: A) => Promise<R>,
  ...args: A
): Promise<R> {
  return env.run(fn, ...args) as Promise<R>;
}

/** A mocked activity context that records (copies of) its heartbeats. */
function mockEnv(info: Partial<Info> = {}): { env: MockActivityEnvironment; heartbeats: any[] } {
  const env = new MockActivityEnvironment(info, { logger: new DefaultLogger('ERROR') });
  const heartbeats: any[] = [];
  // The activity may keep mutating the object it heartbeats: keep what it was at the time.
  env.on('heartbeat', (details: unknown) => heartbeats.push(structuredClone(details)));
  return { env, heartbeats };
}

function createInput(action = 'Open example.com', extra: Partial<CreateTaskInput> = {}): CreateTaskInput {
  return {
    instructions: [{ action }],
    type: 'crawler_automation',
    project: 'default',
    geoLocation: { country: 'US' },
    delivery: 'at-most-once',
    ...extra,
  };
}

const CREATE = /^\/tasks$/;

async function expectFailure(
  promise: Promise<unknown>,
  type: string,
  nonRetryable: boolean,
): Promise<ApplicationFailure> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ApplicationFailure, `expected an ApplicationFailure, got ${String(caught)}`);
  assert.equal(caught.type, type, caught.message);
  assert.equal(caught.nonRetryable, nonRetryable, `nonRetryable of ${type}`);
  return caught;
}

/** A task still `queued`, created by the client (the create activity waits for it to leave the queue). */
async function newTask(action: string): Promise<string> {
  const { delivery: _, ...body } = createInput(action);
  return (await client.createTask(body)).executionId;
}

async function waitForStatus(id: string, wanted: string, timeoutMs = 4000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (emu.task(id)?.status !== wanted) {
    if (Date.now() > deadline) assert.fail(`task ${id} never reached ${wanted} (is ${emu.task(id)?.status})`);
    await sleep(20);
  }
}

describe('createTask delivers at most once', () => {
  test('returns the execution and heartbeats {phase: delivered, answer}', async () => {
    const { env, heartbeats } = mockEnv();
    const creates = emu.count('POST', CREATE);
    const answer = await run(env, createOf(acts), createInput('Run a while [duration=5s]'));
    assert.match(answer.executionId, /^[0-9a-f]{24}$/);
    // BrowserAI answered `queued`; the create looked once more a second later and saw the task run,
    // so the workflow skips the poll of the queue (one activity and one upsert fewer).
    assert.equal(answer.status, 'running');
    assert.equal(emu.count('GET', new RegExp(`^/tasks/${answer.executionId}$`)), 1);
    assert.equal(
      answer.estimatedCompletion === null,
      emu.mode === 'observed',
      'an estimate only where the emulator gives one',
    );
    assert.ok(emu.task(answer.executionId));
    assert.equal(emu.count('POST', CREATE), creates + 1);
    assert.equal(heartbeats.length, 1);
    assert.equal(heartbeats[0].phase, 'delivered');
    assert.equal(heartbeats[0].answer.executionId, answer.executionId);
    assert.equal(heartbeats[0].answer.status, 'queued', "the create's own answer is what a retry returns");
    // `delivery` is ours, not BrowserAI's: it is not sent.
    const sent = emu.requests.filter((r) => r.method === 'POST' && CREATE.test(r.path)).at(-1)!.body as Record<
      string,
      unknown
    >;
    assert.ok(!('delivery' in sent));
  });

  test('attempt 2 with a delivered answer in its heartbeat returns it without any request', async () => {
    const delivered = {
      executionId: 'exec_from_heartbeat',
      status: 'running',
      started: '2025-01-01T00:00:00.000Z',
      estimatedCompletion: null,
      scriptType: 'crawler_automation',
    };
    const { env } = mockEnv({ attempt: 2, heartbeatDetails: { phase: 'delivered', answer: delivered } });
    const before = emu.requests.length;
    const answer = await run(env, createOf(acts), createInput());
    assert.equal(answer.executionId, 'exec_from_heartbeat');
    assert.equal(answer.status, 'running');
    assert.equal(emu.requests.length, before, 'no HTTP request at all');
  });

  test('attempt 2 without heartbeat details fails AmbiguousRequest (non-retryable) and sends nothing', async () => {
    const { env } = mockEnv({ attempt: 2 });
    const creates = emu.count('POST', CREATE);
    const failure = await expectFailure(run(env, createOf(acts), createInput()), FailureType.AmbiguousRequest, true);
    assert.match(failure.message, /at-least-once/);
    assert.equal(emu.count('POST', CREATE), creates);
  });

  test("attempt 2 without heartbeat details sends with delivery 'at-least-once'", async () => {
    const { env } = mockEnv({ attempt: 2 });
    const creates = emu.count('POST', CREATE);
    const answer = await run(env, createOf(acts), createInput('again', { delivery: 'at-least-once' }));
    assert.ok(emu.task(answer.executionId));
    assert.equal(emu.count('POST', CREATE), creates + 1);
  });

  test('a lost answer fails AmbiguousRequest, with exactly one task created', async () => {
    emu.inject({ method: 'POST', path: CREATE, dropAfterHandling: true });
    const { env, heartbeats } = mockEnv();
    const creates = emu.count('POST', CREATE);
    await expectFailure(run(env, createOf(acts), createInput('lost answer')), FailureType.AmbiguousRequest, true);
    const sent = emu.requests.filter((r) => r.method === 'POST' && CREATE.test(r.path));
    assert.equal(sent.length, creates + 1, 'exactly one create request');
    assert.equal(sent.at(-1)!.fault, 'drop');
    assert.equal(sent.at(-1)!.status, 200, 'BrowserAI did create the task');
    assert.deepEqual(heartbeats, [], 'nothing claims the request was not sent');
  });

  test('a 500 on create fails AmbiguousRequest (at-most-once)', async () => {
    emu.inject({ method: 'POST', path: CREATE, status: 500 });
    const { env } = mockEnv();
    const creates = emu.count('POST', CREATE);
    await expectFailure(run(env, createOf(acts), createInput()), FailureType.AmbiguousRequest, true);
    assert.equal(emu.count('POST', CREATE), creates + 1);
  });

  test("a 500 on create with 'at-least-once' is a retryable ServerError", async () => {
    emu.inject({ method: 'POST', path: CREATE, status: 500 });
    const { env } = mockEnv();
    await expectFailure(
      run(env, createOf(acts), createInput('x', { delivery: 'at-least-once' })),
      FailureType.ServerError,
      false,
    );
  });

  test('a 429 on create is a retryable RateLimited with nextRetryDelay = Retry-After, and heartbeats not-sent', async () => {
    emu.inject({ method: 'POST', path: CREATE, status: 429, retryAfterSeconds: 3 });
    const { env, heartbeats } = mockEnv();
    const failure = await expectFailure(run(env, createOf(acts), createInput()), FailureType.RateLimited, false);
    assert.equal(failure.nextRetryDelay, 3000);
    assert.deepEqual(heartbeats, [{ phase: 'not-sent', attempt: 1 }]);
  });

  test('attempt 2 after a not-sent heartbeat sends the request', async () => {
    const { env, heartbeats } = mockEnv({ attempt: 2, heartbeatDetails: { phase: 'not-sent', attempt: 1 } });
    const creates = emu.count('POST', CREATE);
    const answer = await run(env, createOf(acts), createInput());
    assert.ok(emu.task(answer.executionId));
    assert.equal(emu.count('POST', CREATE), creates + 1);
    assert.equal(heartbeats.at(-1).phase, 'delivered');
  });
  // Temporal keeps the last heartbeat details across attempts. An attempt that sends after a
  // `not-sent` record and then dies mid-request (crash, start-to-close timeout) leaves that
  // record behind: the attempt after it must not read it as permission to send again.
  test('a not-sent record from an earlier attempt than the last one is ambiguous, not permission', async () => {
    const { env } = mockEnv({ attempt: 3, heartbeatDetails: { phase: 'not-sent', attempt: 1 } });
    const creates = emu.count('POST', CREATE);
    await expectFailure(
      run(env, createOf(acts), createInput('attempt 2 died mid-request')),
      FailureType.AmbiguousRequest,
      true,
    );
    assert.equal(emu.count('POST', CREATE), creates, 'no second create');
  });
});

describe('other non-idempotent calls', () => {
  test('replaceInstructions is delivered at most once too: a retry without a record is ambiguous', async () => {
    const id = await newTask('Replace me [duration=5s]');
    const puts = () => emu.count('PUT', new RegExp(`^/tasks/${id}/instructions$`));
    const { env } = mockEnv({ attempt: 2 });
    const before = puts();
    await expectFailure(
      run(env, acts.browserAIReplaceInstructions, {
        executionId: id,
        instructions: [{ action: 'again' }],
        delivery: 'at-most-once',
      }),
      FailureType.AmbiguousRequest,
      true,
    );
    assert.equal(puts(), before, 'the replace was not repeated');
  });

  test('a createSavedTask retry that meets its own earlier create (409) returns it instead of failing', async () => {
    const request = {
      name: `retry ${Date.now()}`,
      instructions: [{ action: 'Check prices' }],
      type: 'natural_language' as const,
      project: 'p',
      geoLocation: { country: 'US' },
      cron_settings: '',
    };
    const first = await run(mockEnv().env, acts.browserAICreateSavedTask, request);
    const again = await run(mockEnv({ attempt: 2 }).env, acts.browserAICreateSavedTask, request);
    assert.equal(again.taskId, first.taskId);
    // A different saved task under that name is a real conflict, whatever the attempt.
    await expectFailure(
      run(mockEnv({ attempt: 2 }).env, acts.browserAICreateSavedTask, {
        ...request,
        instructions: [{ action: 'Something else' }],
      }),
      FailureType.Conflict,
      true,
    );
    await expectFailure(run(mockEnv().env, acts.browserAICreateSavedTask, request), FailureType.Conflict, true);
  });
});

describe('errors become typed activity failures', () => {
  test('400 -> non-retryable InvalidInput', async () => {
    const { env } = mockEnv();
    const failure = await expectFailure(
      run(env, createOf(acts), createInput('x', { project: 'missing-project' })),
      FailureType.InvalidInput,
      true,
    );
    assert.equal((failure.details?.[0] as { status: number }).status, 400);
  });

  test('401 -> non-retryable Unauthorized', async () => {
    const wrong = createActivities(new BrowserAIClient({ apiToken: 'not-the-token', baseUrl: emu.baseUrl }));
    const { env } = mockEnv();
    await expectFailure(run(env, wrong.browserAIGetTask, 'exec_whatever'), FailureType.Unauthorized, true);
  });

  test('404 -> non-retryable TaskNotFound', async () => {
    const { env } = mockEnv();
    await expectFailure(run(env, acts.browserAIGetTask, 'exec_does_not_exist'), FailureType.TaskNotFound, true);
  });

  test('500 on getTask -> retryable ServerError', async () => {
    const id = await newTask('Open example.com');
    emu.inject({ method: 'GET', path: new RegExp(`^/tasks/${id}$`), status: 500 });
    const { env } = mockEnv();
    await expectFailure(run(env, acts.browserAIGetTask, id), FailureType.ServerError, false);
  });
});

describe('pollTask', () => {
  function pollInput(executionId: string, extra: Partial<PollTaskInput> = {}): PollTaskInput {
    return {
      executionId,
      knownStatus: 'running',
      initialIntervalMs: 50,
      maxIntervalMs: 200,
      targetDetectionMs: 250,
      maxSpanMs: 10_000,
      ...extra,
    };
  }

  /** Polls as the workflow does: each call knows the status the last one returned, until the category is reached. */
  async function pollUntil(id: string, category: string, extra: Partial<PollTaskInput> = {}) {
    const seen: string[] = [];
    let knownStatus = 'queued';
    for (;;) {
      const { env } = mockEnv();
      const out = await run(env, acts.browserAIPollTask, pollInput(id, { knownStatus, ...extra }));
      seen.push(out.snapshot.status);
      knownStatus = out.snapshot.status;
      if (out.snapshot.category === category) return { out, seen };
      assert.ok(seen.length < 10, `statuses seen: ${seen.join(', ')}`);
    }
  }

  test('returns at every status change (queued -> running -> finalized), the end at once without reading the results', async () => {
    const executionId = await newTask('Open example.com');
    const readsBefore = emu.count('GET', /^\/results\//);
    const { out, seen } = await pollUntil(executionId, 'ended');
    assert.deepEqual(seen, ['running', 'finalized'], 'the workflow hears of running, not only of the end');
    assert.equal(out.changed, true);
    assert.equal(out.snapshot.executionId, executionId);
    assert.deepEqual(out.unknownStatuses, []);
    assert.equal(emu.count('GET', /^\/results\//), readsBefore, 'the workflow reads the results once it knows');
  });

  test('heartbeats only when due (3 s before the heartbeat timeout, at most every 80 % of it), not on every poll: each one that reaches the server is a billed action', async () => {
    const id = await newTask('Long one [duration=2s]');
    await waitForStatus(id, 'running');
    const { env, heartbeats } = mockEnv({ heartbeatTimeoutMs: 1_000 });
    const startedAt = Date.now();
    const out = await run(env, acts.browserAIPollTask, pollInput(id, { initialIntervalMs: 50, maxIntervalMs: 50 }));
    const tookMs = Date.now() - startedAt;
    assert.equal(out.snapshot.category, 'ended');
    assert.ok(out.polls >= 10, `polled ${out.polls} times`);
    assert.ok(heartbeats.length >= 1, 'a long poll heartbeats');
    assert.ok(heartbeats.length <= Math.ceil(tookMs / 800), `${heartbeats.length} heartbeats in ${tookMs} ms`);
    for (const h of heartbeats) {
      assert.equal(typeof h.intervalMs, 'number');
      assert.equal(typeof h.heartbeatAt, 'string');
      assert.equal(typeof h.lastSeen.status, 'string');
    }
    // A short poll never heartbeats at all.
    const quick = await newTask('Quick one [duration=200ms]');
    await waitForStatus(quick, 'running');
    const short = mockEnv({ heartbeatTimeoutMs: 60_000 });
    await run(short.env, acts.browserAIPollTask, pollInput(quick));
    assert.equal(short.heartbeats.length, 0);
  });

  test('returns on awaiting for a [needs-code] task', async () => {
    const id = await newTask('Log in [needs-code]');
    const { out } = await pollUntil(id, 'awaiting');
    assert.equal(out.changed, true);
    assert.equal(out.snapshot.status, 'awaiting');
    assert.equal(emu.task(id)!.status, 'awaiting');
  });

  test('returns changed: false after maxSpanMs while the task still runs', async () => {
    const id = await newTask('Long one [duration=30s]');
    await waitForStatus(id, 'running');
    const { env } = mockEnv();
    const out = await run(env, acts.browserAIPollTask, pollInput(id, { maxIntervalMs: 100, maxSpanMs: 300 }));
    assert.equal(out.changed, false);
    assert.equal(out.snapshot.category, 'running');
    assert.ok(out.polls >= 2, `polled ${out.polls} times`);
    assert.equal(emu.task(id)!.status, 'running');
  });

  test('resumes the poll count from heartbeat details', async () => {
    const id = await newTask('Open example.com');
    const { env } = mockEnv({
      attempt: 2,
      heartbeatDetails: { polls: 7, intervalMs: 50, spanStartedAt: Date.now() },
    });
    // The task is not ended, so the first poll already sees a change.
    const out = await run(env, acts.browserAIPollTask, pollInput(id, { knownStatus: 'finalized' }));
    assert.equal(out.changed, true);
    assert.equal(out.polls, 8);
  });

  test('reports unknown statuses ([unknown-status] -> thinking)', async () => {
    const id = await newTask('Think hard [unknown-status] [duration=2s]');
    await waitForStatus(id, 'running');
    const { env } = mockEnv();
    const out = await run(
      env,
      acts.browserAIPollTask,
      pollInput(id, { knownStatus: 'thinking', maxIntervalMs: 100, maxSpanMs: 250 }),
    );
    assert.deepEqual(out.unknownStatuses, ['thinking']);
    assert.equal(out.snapshot.status, 'thinking');
    assert.equal(out.snapshot.category, 'running', 'an unknown status counts as running');
    assert.equal(out.changed, false);
  });

  test('rejects promptly with a CancelledFailure when cancelled mid-sleep', { timeout: 5000 }, async () => {
    const id = await newTask('Long one [duration=60s]');
    await waitForStatus(id, 'running');
    const { env } = mockEnv();
    const gets = emu.count('GET', new RegExp(`^/tasks/${id}$`));
    const running = run(
      env,
      acts.browserAIPollTask,
      pollInput(id, { initialIntervalMs: 60_000, maxIntervalMs: 60_000, maxSpanMs: 3_600_000 }),
    );
    // After its first poll, the activity sleeps for a minute.
    const deadline = Date.now() + 3000;
    while (emu.count('GET', new RegExp(`^/tasks/${id}$`)) === gets && Date.now() < deadline) await sleep(10);
    assert.equal(emu.count('GET', new RegExp(`^/tasks/${id}$`)), gets + 1, 'the first poll was made');
    env.cancel();
    await assert.rejects(running, (err: unknown) => err instanceof CancelledFailure);
  });

  test('learns where tasks of a kind end, and polls there the next time', async () => {
    const durations = new TaskDurations();
    const learning = createActivities(new BrowserAIClient({ apiToken: emu.apiToken, baseUrl: emu.baseUrl }), durations);
    const runOnce = async () => {
      const { env: createEnv } = mockEnv();
      const created = await run(createEnv, createOf(learning), createInput('Read the weather [duration=4s]'));
      const gets = () => emu.count('GET', new RegExp(`^/tasks/${created.executionId}$`));
      // As the workflow does: the phase starts when the create returns (after its look a second
      // after a queued answer), once, whatever the polls see after it.
      const phaseStartedAtMs = Date.now();
      let knownStatus = created.status!;
      for (;;) {
        const { env } = mockEnv();
        const out = await run(
          env,
          learning.browserAIPollTask,
          pollInput(created.executionId, {
            knownStatus,
            kind: created.kind,
            phaseStartedAtMs,
            sleepFirst: true,
            initialIntervalMs: 50,
            maxIntervalMs: 1_000,
          }),
        );
        knownStatus = out.snapshot.status;
        if (out.snapshot.category === 'ended') return { kind: created.kind!, gets: gets() };
      }
    };
    const first = await runOnce();
    assert.match(first.kind, /^crawler_automation:[0-9a-f]{16}:[0-9a-f]{16}$/);
    assert.equal(durations.size.samples, 1, 'the end was recorded for its kind');
    const window = durations.expectedEnd(first.kind);
    assert.equal(window.basis, 'kind');
    // The task ends 4 s after its queue (up to 0.5 s); the create returns about 1 s after the create.
    assert.ok(window.fromMs > 100 && window.toMs < 6_500, `expected end ${window.fromMs}-${window.toMs} ms`);
    const second = await runOnce();
    // 4 s, not less: backing off from 50 ms the first run needs about 8 looks, the learned one a
    // few around the end; at 1.5 s both needed 4 or 5, and the order between them was luck. (With
    // the documented answers both runs also read BrowserAI's estimate, so they may tie.)
    assert.ok(second.gets <= first.gets, `second run ${second.gets} polls, first ${first.gets}`);
  });
});

describe('getResults', () => {
  test('trims the results of a [large=3MB] task to maxBytes, with a report', async () => {
    const id = await newTask('Extract everything [large=3MB]');
    await waitForStatus(id, 'finalized');
    const maxBytes = 64 * 1024;
    const { env } = mockEnv();
    const out = await run(env, acts.browserAIGetResults, { executionId: id, maxBytes });
    const keptBytes = Buffer.byteLength(JSON.stringify(out.results), 'utf8');
    assert.ok(keptBytes <= maxBytes, `kept ${keptBytes} bytes`);
    assert.ok(out.trimmed, 'a trimmed report');
    assert.ok(out.trimmed.originalBytes > 3 * 1024 * 1024);
    assert.equal(out.trimmed.keptBytes, keptBytes);
    assert.ok(out.trimmed.truncatedFields >= 1);
    assert.equal(out.results.length, 1, 'the entry itself is kept');
    assert.match(String(out.results[0]!.result), /truncated/);
    assert.equal(out.executionId, id);
    assert.equal(out.status, 'finalized');
  });

  test('returns small results untouched', async () => {
    const id = await newTask('Open example.com');
    await waitForStatus(id, 'finalized');
    const full = await new BrowserAIClient({ apiToken: emu.apiToken, baseUrl: emu.baseUrl }).getResults(id);
    const { env } = mockEnv();
    const out = await run(env, acts.browserAIGetResults, { executionId: id, maxBytes: 64 * 1024 });
    assert.equal(out.trimmed, undefined);
    assert.ok(!('trimmed' in out));
    assert.deepEqual(out.results, full.results);
    assert.equal(out.completed, full.completed);
  });
});
