// The emulator is the stand-in for BrowserAI in every other test and in the benchmark, so its
// contract is tested here over real HTTP, the way clients will meet it.

import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BrowserAIEmulator,
  DEFAULT_AWAITING_IDLE_CLOSE_MS,
  MAX_LARGE_BYTES,
  NEXT_CODE_FORM_LINE,
  emulatorOptionsFromEnv,
  objectIdTime,
  parseScenario,
  type EmulatorOptions,
  type RandomFaultKind,
} from '../src/emulator';
import { TaskStore } from '../src/emulator/tasks';
import { HOTP, Secret } from 'otpauth';
import type { TaskExecution, TaskMetadata, TaskResults } from '../src/contract/browserai-types';

const DURATION_MS = 300;
const QUEUE_MS = 50;
/** The running phase of the tests that must see a task running: long enough for polls on a busy machine. */
const LIFECYCLE_MS = 2_000;

/** Default options: `observed` answers, as real BrowserAI was seen to give them. */
let emulator: BrowserAIEmulator;
/** `mode: 'documented'`: the interface description's richer answers (estimate, `started`, `progress`). */
let documented: BrowserAIEmulator;

before(async () => {
  [emulator, documented] = await Promise.all([
    BrowserAIEmulator.start({ defaultDurationMs: DURATION_MS, queueMs: QUEUE_MS }),
    BrowserAIEmulator.start({ defaultDurationMs: DURATION_MS, queueMs: QUEUE_MS, mode: 'documented' }),
  ]);
});

after(async () => {
  await Promise.all([emulator.close(), documented.close()]);
});

interface Answer<T = any> {
  status: number;
  headers: Headers;
  json: T;
}

function authHeaders(token = emulator.apiToken): Record<string, string> {
  return { authorization: `apikey ${token}`, 'content-type': 'application/json' };
}

function createBody(actions: string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    instructions: actions.map((action) => ({ action })),
    geoLocation: { country: 'US' },
    project: 'default',
    type: 'crawler_automation',
    ...extra,
  };
}

/** JSON calls to one emulator (looked up when called, as the emulators start in `before`). */
function apiOf(target: () => BrowserAIEmulator) {
  async function call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = authHeaders(target().apiToken),
  ): Promise<Answer<T>> {
    const response = await fetch(`${target().baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : undefined };
  }

  async function create(actions: string[], extra: Record<string, unknown> = {}): Promise<TaskExecution> {
    const answer = await call<TaskExecution>('POST', '/tasks', createBody(actions, extra));
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    return answer.json;
  }

  async function metadata(id: string): Promise<TaskMetadata> {
    const answer = await call<TaskMetadata>('GET', `/tasks/${id}`);
    assert.equal(answer.status, 200);
    return answer.json;
  }

  async function results(id: string): Promise<TaskResults> {
    const answer = await call<TaskResults>('GET', `/results/${id}`);
    assert.equal(answer.status, 200);
    return answer.json;
  }

  /** Polls GET /tasks until the status matches exactly; returns that answer and every status seen. */
  async function waitForStatus(
    id: string,
    wanted: string,
    timeoutMs = 4000,
  ): Promise<TaskMetadata & { seen: string[] }> {
    const seen: string[] = [];
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = await metadata(id);
      if (seen.at(-1) !== current.status) seen.push(current.status);
      if (current.status === wanted) return { ...current, seen };
      if (Date.now() > deadline)
        assert.fail(`task ${id} still ${current.status} (seen ${seen.join(' -> ')}), wanted ${wanted}`);
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
  }

  return { call, create, metadata, results, waitForStatus };
}

const { call, create, metadata, results, waitForStatus } = apiOf(() => emulator);
/** The same calls against the `documented` emulator; describe blocks about the richer answers shadow the ones above with these. */
const documentedApi = apiOf(() => documented);

/** A MongoDB ObjectId: 24 hex digits. */
const OBJECT_ID = /^[0-9a-f]{24}$/;
/** Well-formed, but no task has it. */
const UNKNOWN_ID = '000000000000000000000000';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Runs `use` against an emulator of its own (for options, or counts no other test may disturb). */
async function withEmulator(options: EmulatorOptions, use: (other: BrowserAIEmulator) => Promise<void>): Promise<void> {
  const other = await BrowserAIEmulator.start({ defaultDurationMs: DURATION_MS, queueMs: QUEUE_MS, ...options });
  try {
    await use(other);
  } finally {
    await other.close();
  }
}

/** One request to any emulator, body kept as text: for answers that are not JSON, or never come. */
async function rawCall(
  target: BrowserAIEmulator,
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(`${target.baseUrl}${path}`, {
    method,
    headers: { authorization: `apikey ${target.apiToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function controlOf(target: BrowserAIEmulator) {
  return (path: string, init?: RequestInit) => fetch(`${new URL(target.baseUrl).origin}/__emulator${path}`, init);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('authentication', () => {
  test('rejects a missing, wrong or differently-spelled token with 401 Unauthorized', async () => {
    const body = createBody(['look']);
    for (const headers of [
      { 'content-type': 'application/json' },
      authHeaders('wrong-token'),
      { authorization: `Bearer ${emulator.apiToken}` },
      { authorization: `apikey  ${emulator.apiToken}` },
    ]) {
      const answer = await call('POST', '/tasks', body, headers);
      assert.equal(answer.status, 401);
      assert.deepEqual(answer.json, { error: 'Unauthorized' });
    }
    assert.equal((await call('GET', `/tasks/${UNKNOWN_ID}`, undefined, {})).status, 401);
    assert.equal((await call('GET', '/saved_tasks', undefined, authHeaders('x'))).status, 401);
  });

  test('a custom token is the only one accepted', async () => {
    const other = await BrowserAIEmulator.start({ apiToken: 's3cret' });
    try {
      const ok = await fetch(`${other.baseUrl}/saved_tasks`, { headers: { authorization: 'apikey s3cret' } });
      assert.equal(ok.status, 200);
      const wrong = await fetch(`${other.baseUrl}/saved_tasks`, {
        headers: { authorization: 'apikey emulator-token' },
      });
      assert.equal(wrong.status, 401);
      assert.equal(other.apiToken, 's3cret');
      assert.match(other.baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
    } finally {
      await other.close();
    }
  });
});

describe('create validation', () => {
  const valid = createBody(['look']);
  const invalidBodies: Array<[string, unknown]> = [
    ['not JSON', '{"instructions": ['],
    ['an array', [valid]],
    ['no instructions', { ...valid, instructions: undefined }],
    ['empty instructions', { ...valid, instructions: [] }],
    ['instructions not an array', { ...valid, instructions: 'look' }],
    ['an instruction without action', { ...valid, instructions: [{ type: 'x' }] }],
    ['a non-string action', { ...valid, instructions: [{ action: 42 }] }],
    ['a string instruction', { ...valid, instructions: ['look'] }],
    ['no geoLocation', { ...valid, geoLocation: undefined }],
    ['a non-string country', { ...valid, geoLocation: { country: 1 } }],
    ['geoLocation without country', { ...valid, geoLocation: { city: 'Paris' } }],
    ['no project', { ...valid, project: undefined }],
    ['an empty project', { ...valid, project: '' }],
    ['an unknown project', { ...valid, project: 'missing-project' }],
    ['no type', { ...valid, type: undefined }],
    ['an unknown type', { ...valid, type: 'magic' }],
  ];
  for (const [name, body] of invalidBodies) {
    test(`400 for ${name}`, async () => {
      const answer = await call('POST', '/tasks', body);
      assert.equal(answer.status, 400);
      assert.deepEqual(answer.json, { error: 'Invalid input or project not found' });
    });
  }

  test('accepts every engine type, including the older natural_language spelling', async () => {
    for (const type of ['crawler_automation', 'script_automation', 'natural_language']) {
      const execution = await create(['look'], { type, geoLocation: { country: 'FR', city: 'Paris' } });
      assert.equal(execution.scriptType, type);
      assert.match(execution.executionId, OBJECT_ID);
      // A real create answer had the country in lower case.
      assert.deepEqual(execution.geoLocation, { country: 'fr', city: 'Paris' });
    }
  });
});

describe('observed mode (the default): answers as real BrowserAI gives them', { concurrency: true }, () => {
  test('create, append and replace answer four fields; GET /tasks has no started, estimate or scriptId, and no progress once ended', async () => {
    const created = await create(['Open the shop'], {
      awaitable: true,
      geoLocation: { country: 'US', city: 'Austin' },
    });
    assert.deepEqual(created, {
      executionId: created.executionId,
      scriptType: 'crawler_automation',
      status: 'queued',
      geoLocation: { country: 'us', city: 'Austin' },
    });

    const running = await waitForStatus(created.executionId, 'running');
    const { seen: _seen, ...runningAnswer } = running;
    assert.deepEqual(Object.keys(runningAnswer).sort(), [
      'executionId',
      'geoLocation',
      'progress',
      'result',
      'scriptType',
      'status',
    ]);
    assert.equal(running.progress?.status, 'running');
    assert.ok(running.progress?.logs?.includes('Opening browser'));

    await waitForStatus(created.executionId, 'awaiting');
    const fourFields = ['executionId', 'geoLocation', 'scriptType', 'status'];
    const appended = await call('POST', `/tasks/${created.executionId}/instructions`, {
      instructions: [{ action: 'Add the cheapest item' }],
    });
    assert.deepEqual(Object.keys(appended.json).sort(), fourFields);
    const replaced = await call('PUT', `/tasks/${created.executionId}/instructions`, {
      instructions: [{ action: 'Only this' }],
    });
    assert.deepEqual(Object.keys(replaced.json).sort(), fourFields);

    assert.equal((await call('POST', `/tasks/${created.executionId}/command`, { command: 'stop' })).status, 200);
    const stopped = await metadata(created.executionId);
    assert.equal(stopped.status, 'stopped');
    assert.deepEqual(Object.keys(stopped).sort(), ['executionId', 'geoLocation', 'result', 'scriptType', 'status']);
  });

  test('a finished task answers as the real one did: executionId, scriptType, status, geoLocation, result', async () => {
    const created = await create(['Read the title']);
    const done = await waitForStatus(created.executionId, 'finalized');
    const { seen: _seen, ...answer } = done;
    assert.deepEqual(answer, {
      executionId: created.executionId,
      scriptType: 'crawler_automation',
      status: 'finalized',
      geoLocation: { country: 'us' },
      result: 'Instruction 1 of 1 done',
    });
    // GET /results is unchanged: its entries are where the outcome lives.
    assert.equal((await results(created.executionId)).results.length, 1);
  });

  test('identifiers are ObjectIds: 24 hex digits, the creation second in the first 4 bytes', async () => {
    const before = Math.floor(Date.now() / 1000);
    const [a, b] = await Promise.all([create(['look']), create(['look'])]);
    const saved = await call('POST', '/saved_tasks', {
      name: `ids ${Date.now()}`,
      instructions: [{ action: 'look' }],
      type: 'natural_language',
      project: 'default',
      geoLocation: { country: 'US' },
    });
    const after = Math.floor(Date.now() / 1000);
    const ids = [a.executionId, b.executionId, emulator.task(a.executionId)!.scriptId, saved.json.taskId as string];
    for (const id of ids) {
      assert.match(id, OBJECT_ID);
      const seconds = Number.parseInt(id.slice(0, 8), 16);
      assert.ok(seconds >= before && seconds <= after, `${id}: ${seconds} not in ${before}..${after}`);
      assert.equal(objectIdTime(id), seconds * 1000);
    }
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(objectIdTime('exec_0123'), undefined);
  });

  test('success messages as the docs show them; GET /saved_tasks is a bare array', async () => {
    const created = await create(['Crawl [slow]']);
    const stop = await call('POST', `/tasks/${created.executionId}/command`, { command: 'stop' });
    assert.deepEqual(stop, { status: 200, headers: stop.headers, json: { message: 'Task stopped successfully' } });
    const saved = await call('POST', '/saved_tasks', {
      name: `messages ${Date.now()}`,
      instructions: [{ action: 'look' }],
      type: 'natural_language',
      project: 'default',
      geoLocation: { country: 'US' },
    });
    assert.deepEqual(saved.json, { taskId: saved.json.taskId, message: 'Saved task created successfully' });
    const list = await call('GET', '/saved_tasks');
    assert.ok(Array.isArray(list.json));
  });

  test('a failed task: error is an object {code, type, message}; a [big-error] one carries the big text as its message', async () => {
    const [failing, big] = await Promise.all([
      create(['Open https://nowhere.invalid [fail]']),
      create(['Open https://nowhere.invalid [fail] [big-error=100KB]']),
    ]);
    const failed = await waitForStatus(failing.executionId, 'failed');
    assert.deepEqual(failed.error, {
      code: 3001,
      type: 'engine',
      message: 'Navigation failed: net::ERR_NAME_NOT_RESOLVED',
    });
    assert.equal(failed.progress, undefined);
    const bigFailed = (await waitForStatus(big.executionId, 'failed')).error as unknown as {
      code: number;
      message: string;
    };
    assert.equal(bigFailed.code, 3001);
    assert.equal(bigFailed.message.length, 100 * 1024);
    assert.ok(bigFailed.message.startsWith('Navigation failed: net::ERR_NAME_NOT_RESOLVED'));
    // No error, no `error` field.
    const fine = await create(['Fine']);
    assert.ok(!('error' in (await waitForStatus(fine.executionId, 'finalized'))));
  });

  test('documented mode keeps the estimate, started, scriptId and progress, and error as a string', async () => {
    const created = await documentedApi.create(['Wait [duration=1s]']);
    assert.match(created.started!, ISO);
    assert.equal(Date.parse(created.estimatedCompletion!) - Date.parse(created.started!), QUEUE_MS + 1000);
    const running = await documentedApi.waitForStatus(created.executionId, 'running');
    assert.match(running.estimatedCompletion!, ISO);
    assert.match(running.scriptId!, OBJECT_ID);
    assert.equal(running.progress?.status, 'running');
    const done = await documentedApi.waitForStatus(created.executionId, 'finalized');
    assert.equal(done.estimatedCompletion, null);
    assert.equal(done.error, null);
    assert.equal(done.progress?.status, 'finalized');
    const failing = await documentedApi.create(['Open https://nowhere.invalid [fail]']);
    assert.equal(
      (await documentedApi.waitForStatus(failing.executionId, 'failed')).error,
      'Navigation failed: net::ERR_NAME_NOT_RESOLVED',
    );
  });
});

describe('browser connection lines: a per-task secret in progress.logs', { concurrency: true }, () => {
  for (const [mode, target, api] of [
    ['observed', () => emulator, { create, waitForStatus, call }],
    ['documented', () => documented, documentedApi],
  ] as const) {
    test(`${mode}: a running task logs its connection URL and the inspector link embedding it; taskSecrets() gives both`, async () => {
      const [a, b] = await Promise.all([api.create(['Crawl [duration=3s]']), api.create(['Crawl [duration=3s]'])]);
      const running = await api.waitForStatus(a.executionId, 'running');
      const secrets = target().taskSecrets(a.executionId)!;
      assert.match(secrets.proxyPassword, /^[A-Za-z0-9]{16}$/);
      assert.match(
        secrets.connectionUrl,
        /^wss:\/\/brd-customer-hl_[0-9a-f]{8}-zone-browser_ai:[A-Za-z0-9]{16}@brd\.superproxy\.io:9222$/,
      );
      assert.ok(secrets.connectionUrl.includes(`:${secrets.proxyPassword}@`));
      const logs = running.progress!.logs!;
      assert.ok(logs.includes(`Connecting to browser: ${secrets.connectionUrl}`), logs.join('\n'));
      const inspector = logs.find((line) => line.startsWith('Inspector: '))!;
      assert.equal(
        inspector,
        `Inspector: https://brightdata.com/cp/browser_ai/inspect?wss=${encodeURIComponent(secrets.connectionUrl)}`,
      );
      assert.equal(new URL(inspector.slice('Inspector: '.length)).searchParams.get('wss'), secrets.connectionUrl);

      const other = target().taskSecrets(b.executionId)!;
      assert.notEqual(other.proxyPassword, secrets.proxyPassword);
      // One customer (account) per emulator, a password per task.
      assert.equal(other.connectionUrl.split(':')[1], secrets.connectionUrl.split(':')[1]);
      assert.equal(target().taskSecrets(UNKNOWN_ID), undefined);
      for (const id of [a.executionId, b.executionId])
        await api.call('POST', `/tasks/${id}/command`, { command: 'stop' });
    });
  }

  test('logBrowserConnection: false leaves the lines out', async () => {
    await withEmulator({ logBrowserConnection: false, mode: 'documented' }, async (other) => {
      const created = JSON.parse((await rawCall(other, 'POST', '/tasks', createBody(['look']))).text) as TaskExecution;
      while (other.task(created.executionId)?.status !== 'finalized') await sleep(15);
      const done = JSON.parse((await rawCall(other, 'GET', `/tasks/${created.executionId}`)).text) as TaskMetadata;
      assert.ok(!done.progress!.logs!.some((line) => line.includes('wss')));
      assert.match(other.taskSecrets(created.executionId)!.proxyPassword, /^[A-Za-z0-9]{16}$/);
    });
  });
});

describe('idle awaiting sessions close by themselves', { concurrency: true }, () => {
  test('awaitingIdleCloseMs: an awaitable session left idle ends failed with an error saying so', async () => {
    await withEmulator({ awaitingIdleCloseMs: 400 }, async (other) => {
      const created = JSON.parse(
        (await rawCall(other, 'POST', '/tasks', createBody(['Open the shop'], { awaitable: true }))).text,
      ) as TaskExecution;
      while (other.task(created.executionId)?.status !== 'awaiting') await sleep(10);
      const idleFrom = Date.now();
      while (other.task(created.executionId)?.status === 'awaiting') await sleep(10);
      assert.ok(Date.now() - idleFrom >= 400 - 20, `closed after ${Date.now() - idleFrom} ms`);
      const closed = JSON.parse((await rawCall(other, 'GET', `/tasks/${created.executionId}`)).text) as TaskMetadata;
      assert.equal(closed.status, 'failed');
      assert.deepEqual(closed.error, {
        code: 3002,
        type: 'engine',
        message: 'Browser session closed after being idle for 0.4 s',
      });
      const late = await rawCall(other, 'POST', `/tasks/${created.executionId}/instructions`, {
        instructions: [{ action: 'More' }],
      });
      assert.equal(late.status, 400);
    });
  });

  test('[idle-close=300ms] closes a [needs-code] task still waiting for its code', async () => {
    const created = await create(['Log in [needs-code] [idle-close=300ms]']);
    await waitForStatus(created.executionId, 'awaiting');
    const failed = await waitForStatus(created.executionId, 'failed');
    assert.deepEqual(failed.error, {
      code: 3002,
      type: 'engine',
      message: 'Browser session closed after being idle for 0.3 s',
    });
    assert.deepEqual(emulator.task(created.executionId)?.codesReceived, []);
  });

  test('default 5 minutes (fake clock); instructions restart the idle time; 0 never closes', () => {
    assert.equal(DEFAULT_AWAITING_IDLE_CLOSE_MS, 300_000);
    const t0 = 20_000_000;
    const input = {
      instructions: [{ action: 'a' }],
      geoLocation: { country: 'US' },
      project: 'p',
      type: 'crawler_automation',
      awaitable: true,
    };
    const store = new TaskStore({ queueMs: 0, defaultDurationMs: 100, awaitingLagMs: 0 });
    const task = store.create(input, t0);
    assert.equal(task.scenario.idleCloseMs, 300_000);
    assert.equal(task.status(t0 + 100 + 299_999), 'awaiting');
    assert.equal(task.append([{ action: 'b' }], t0 + 100 + 299_999), 'ok');
    // Ran 100 ms from then, idle again from t0 + 300_199: the old deadline no longer applies.
    assert.equal(task.status(t0 + 300_200 + 299_998), 'awaiting');
    assert.equal(task.status(t0 + 300_199 + 300_000), 'failed');
    assert.equal(task.endedAt, t0 + 300_199 + 300_000);
    assert.deepEqual(task.error, {
      code: 3002,
      type: 'engine',
      message: 'Browser session closed after being idle for 300 s',
    });
    assert.equal(task.visibleLogs(t0 + 700_000).at(-1), 'Browser session closed after being idle for 300 s');
    assert.equal(task.append([{ action: 'c' }], t0 + 700_000), 'ended');

    const never = new TaskStore({ queueMs: 0, defaultDurationMs: 100, awaitingIdleCloseMs: 0 }).create(input, t0);
    assert.equal(never.status(t0 + 24 * 3_600_000), 'awaiting');
    const marked = store.create({ ...input, instructions: [{ action: 'a [idle-close=0]' }] }, t0);
    assert.equal(marked.status(t0 + 24 * 3_600_000), 'awaiting');
  });
});

describe('instructions and stops for an ended task (endedTaskAnswer)', { concurrency: true }, () => {
  const messages = {
    400: { instructions: 'Invalid input', command: 'Invalid command or task ID' },
    404: { instructions: 'Task not found', command: 'Task not found' },
    409: { instructions: 'Task already ended', command: 'Task already ended' },
  } as const;
  const cases: Array<[string, EmulatorOptions, 400 | 404 | 409]> = [
    ['observed default', {}, 400],
    ['documented default', { mode: 'documented' }, 409],
    ['observed, 404', { endedTaskAnswer: 404 }, 404],
    ['observed, 409', { endedTaskAnswer: 409 }, 409],
    ['documented, 400', { mode: 'documented', endedTaskAnswer: 400 }, 400],
    ['documented, 404', { mode: 'documented', endedTaskAnswer: 404 }, 404],
  ];
  for (const [name, options, status] of cases) {
    test(`${name}: ${status}`, async () => {
      await withEmulator({ ...options, queueMs: 10, defaultDurationMs: 30 }, async (other) => {
        assert.equal(other.endedTaskAnswer, status);
        const created = JSON.parse(
          (await rawCall(other, 'POST', '/tasks', createBody(['look']))).text,
        ) as TaskExecution;
        while (other.task(created.executionId)?.status !== 'finalized') await sleep(10);
        for (const method of ['POST', 'PUT']) {
          const late = await rawCall(other, method, `/tasks/${created.executionId}/instructions`, {
            instructions: [{ action: 'more' }],
          });
          assert.equal(late.status, status, method);
          assert.deepEqual(JSON.parse(late.text), { error: messages[status].instructions });
        }
        const stop = await rawCall(other, 'POST', `/tasks/${created.executionId}/command`, { command: 'stop' });
        assert.equal(stop.status, status);
        assert.deepEqual(JSON.parse(stop.text), { error: messages[status].command });
        assert.equal(other.task(created.executionId)?.stopCommands, 1);
        assert.equal(other.task(created.executionId)?.instructions.length, 1);
      });
    });
  }

  test('unknown modes and answers are refused', async () => {
    await assert.rejects(BrowserAIEmulator.start({ mode: 'real' as never }), RangeError);
    await assert.rejects(BrowserAIEmulator.start({ endedTaskAnswer: 410 as never }), RangeError);
    await assert.rejects(BrowserAIEmulator.start({ awaitingIdleCloseMs: -1 }), RangeError);
  });
});

describe('environment switches (emulatorOptionsFromEnv)', () => {
  test('reads the mode and the ended-task answer; unset or empty leaves the defaults', () => {
    assert.deepEqual(emulatorOptionsFromEnv({}), {});
    assert.deepEqual(emulatorOptionsFromEnv({ BROWSERAI_EMULATOR_MODE: '', BROWSERAI_EMULATOR_ENDED_ANSWER: '' }), {});
    assert.deepEqual(
      emulatorOptionsFromEnv({ BROWSERAI_EMULATOR_MODE: 'documented', BROWSERAI_EMULATOR_ENDED_ANSWER: '404' }),
      {
        mode: 'documented',
        endedTaskAnswer: 404,
      },
    );
    assert.deepEqual(emulatorOptionsFromEnv({ BROWSERAI_EMULATOR_MODE: ' Observed ' }), { mode: 'observed' });
  });

  test('refuses bad values, naming the variable and what it accepts', () => {
    assert.throws(() => emulatorOptionsFromEnv({ BROWSERAI_EMULATOR_MODE: 'documentd' }), {
      message: 'BROWSERAI_EMULATOR_MODE must be one of observed, documented; got "documentd"',
    });
    for (const bad of ['410', '4O4', '409.0', 'conflict']) {
      assert.throws(() => emulatorOptionsFromEnv({ BROWSERAI_EMULATOR_ENDED_ANSWER: bad }), {
        message: `BROWSERAI_EMULATOR_ENDED_ANSWER must be one of 400, 404, 409; got ${JSON.stringify(bad)}`,
      });
    }
  });

  test('the standalone emulator refuses to start on a bad value', () => {
    const main = join(__dirname, '../src/emulator/main.js');
    const run = spawnSync(process.execPath, [main], {
      env: { ...process.env, EMULATOR_PORT: '0', BROWSERAI_EMULATOR_MODE: 'documentd' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(run.status, 1);
    assert.match(run.stderr, /BROWSERAI_EMULATOR_MODE must be one of observed, documented; got "documentd"/);
  });
});

describe('durationFor: a task running time chosen by the harness', () => {
  test('a number wins over markers and the default; undefined leaves them; an invalid number answers 500', async () => {
    const asked: Array<{ project: string; instructions: string[] }> = [];
    let round = 0;
    const durationFor = (task: { project: string; instructions: string[] }) => {
      asked.push(task);
      if (task.instructions[0]!.startsWith('bad')) return -1;
      return task.instructions[0]!.startsWith('bench') ? [200, 700][round] : undefined;
    };
    await withEmulator({ durationFor, mode: 'documented' }, async (other) => {
      const createIn = async (actions: string[]) =>
        JSON.parse((await rawCall(other, 'POST', '/tasks', createBody(actions))).text) as TaskExecution;
      const first = await createIn(['bench step [duration=5s]', 'and read']);
      round = 1;
      const second = await createIn(['bench step [duration=5s]', 'and read']);
      const marked = await createIn(['plain [duration=1s]']);
      const plain = await createIn(['plain']);
      assert.deepEqual(
        [first, second, marked, plain].map((task) => other.task(task.executionId)!.scenario.durationMs),
        [200, 700, 1000, DURATION_MS],
      );
      assert.equal(Date.parse(second.estimatedCompletion!) - Date.parse(second.started!), QUEUE_MS + 700);
      assert.deepEqual(asked[0], { project: 'default', instructions: ['bench step [duration=5s]', 'and read'] });
      const before = other.listTasks().length;
      assert.equal((await rawCall(other, 'POST', '/tasks', createBody(['bad one']))).status, 500);
      assert.equal(other.listTasks().length, before);
    });
  });
});

describe('task lifecycle (documented mode: the estimate, `started` and `progress` kept)', { concurrency: true }, () => {
  const { call, create, metadata, results, waitForStatus } = documentedApi;

  test('default: queued -> running -> finalized, with full results and served artifacts', async () => {
    // Running for 2 s, so the polls below see it running even on a busy machine.
    const created = await create(['Open example.com', `Read the title [duration=${LIFECYCLE_MS}]`]);
    assert.equal(created.status, 'queued');
    assert.match(created.started!, ISO);
    assert.match(created.estimatedCompletion!, ISO);
    const eta = Date.parse(created.estimatedCompletion!) - Date.parse(created.started!);
    assert.ok(Math.abs(eta - (QUEUE_MS + LIFECYCLE_MS)) <= 2, `eta ${eta}`);

    const done = await waitForStatus(created.executionId, 'finalized', 10_000);
    assert.ok(['queued,running,finalized', 'running,finalized'].includes(done.seen.join()), done.seen.join());
    assert.equal(done.estimatedCompletion, null);
    assert.equal(done.error, null);
    assert.equal(done.progress?.status, 'finalized');
    assert.match(done.scriptId!, OBJECT_ID);
    assert.equal(done.scriptType, 'crawler_automation');
    assert.deepEqual(done.geoLocation, { country: 'us' });
    const { connectionUrl } = documented.taskSecrets(created.executionId)!;
    assert.deepEqual(done.progress?.logs, [
      'Task queued',
      'Opening browser',
      `Connecting to browser: ${connectionUrl}`,
      `Inspector: https://brightdata.com/cp/browser_ai/inspect?wss=${encodeURIComponent(connectionUrl)}`,
      'Executing instruction 1/2',
      'Executing instruction 2/2',
      'Task finalized',
    ]);
    assert.equal(typeof done.result, 'string');

    const final = await results(created.executionId);
    assert.equal(final.status, 'finalized');
    assert.match(final.completed!, ISO);
    assert.equal(final.results.length, 2);
    final.results.forEach((entry, index) => {
      assert.equal(typeof entry.model_output, 'string');
      assert.equal(typeof entry.result, 'string');
      assert.equal(entry.state, 'done');
      assert.deepEqual(Object.keys(entry.metadata!).sort(), ['step', 'title', 'url']);
      assert.equal(entry.metadata!.step, index + 1);
      assert.equal(entry.history_index, index);
      assert.match(entry.insert_ts!, ISO);
      for (const url of [entry.screenshot_url, entry.html_url, entry.console_url]) {
        assert.ok(url!.startsWith(new URL(documented.baseUrl).origin + '/artifacts/'), url);
      }
    });
    assert.equal(done.result, final.results[1]!.result);

    const screenshot = await fetch(final.results[0]!.screenshot_url!);
    assert.equal(screenshot.headers.get('content-type'), 'image/png');
    assert.deepEqual([...new Uint8Array(await screenshot.arrayBuffer()).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    assert.match(await (await fetch(final.results[0]!.html_url!)).text(), /<html>/);
    assert.match(await (await fetch(final.results[1]!.console_url!)).text(), /step 2/);
    assert.equal((await fetch(final.results[0]!.html_url!.replace('/0/', '/9/'))).status, 404);
  });

  test('needs-code: awaiting until a code is appended, then running, then finalized; the code is never logged', async () => {
    const created = await create(['Log in to the bank [needs-code]']);
    const waiting = await waitForStatus(created.executionId, 'awaiting');
    assert.equal(waiting.estimatedCompletion, null);
    assert.equal(waiting.progress?.logs?.at(-1), 'Waiting for a one-time code');
    assert.equal((await results(created.executionId)).results.length, 0);

    // As real clients append: extra fields, items without `type`.
    const appendedAt = Date.now();
    const appended = await call<TaskExecution>('POST', `/tasks/${created.executionId}/instructions`, {
      instructions: [{ action: 'Type the code 482913 and submit' }],
      geoLocation: { country: 'US' },
      awaitable: true,
      project: 'default',
      type: 'crawler_automation',
    });
    assert.equal(appended.status, 200);
    // The default awaiting lag (1 s): still `awaiting` at the moment the code arrived; the run
    // that follows the lag is already due, so there is an estimate.
    assert.equal(appended.json.status, 'awaiting');
    assert.equal(appended.json.executionId, created.executionId);
    assert.match(appended.json.estimatedCompletion!, ISO);
    const eta = Date.parse(appended.json.estimatedCompletion!) - appendedAt;
    assert.ok(eta >= 1000 + DURATION_MS - 5 && eta <= 1000 + DURATION_MS + 200, `eta ${eta}`);
    // Recorded when it arrived, not when the run starts.
    assert.deepEqual(documented.task(created.executionId)?.codesReceived, ['482913']);

    const done = await waitForStatus(created.executionId, 'finalized');
    assert.deepEqual(done.seen.slice(0, 2), ['awaiting', 'running']);
    assert.ok(!JSON.stringify(done.progress?.logs).includes('482913'));
    assert.ok(done.progress?.logs?.includes('One-time code received'));
    assert.deepEqual(documented.task(created.executionId)?.codesReceived, ['482913']);
    assert.equal(documented.task(created.executionId)?.instructions.length, 2);
    assert.equal((await results(created.executionId)).results.length, 2);
  });

  test('[rejects-code]: the first code is refused and the code form asked again (a guess at how BrowserAI shows it); the next is taken', async () => {
    const created = await create(['Log in [rejects-code] [awaiting-lag=0]']);
    await waitForStatus(created.executionId, 'awaiting');
    const append = (code: string) =>
      call('POST', `/tasks/${created.executionId}/instructions`, { instructions: [{ action: `Type ${code}` }] });
    assert.equal((await append('111111')).status, 200);
    await waitForStatus(created.executionId, 'running');
    const again = await waitForStatus(created.executionId, 'awaiting');
    assert.equal(again.progress?.logs?.at(-1), 'The one-time code was not accepted. Waiting for a new one-time code');
    assert.equal((await append('222222')).status, 200);
    await waitForStatus(created.executionId, 'finalized');
    assert.deepEqual(
      documented.task(created.executionId)?.codeChecks.map(({ code, accepted }) => [code, accepted]),
      [
        ['111111', false],
        ['222222', true],
      ],
    );
  });

  test('[code-forms=2]: a taken code lets the task run on (new results), then a second code form (a guess)', async () => {
    const created = await create(['Log in, then pay [code-forms=2] [awaiting-lag=0]']);
    const first = await waitForStatus(created.executionId, 'awaiting');
    assert.equal(first.progress?.logs?.at(-1), 'Waiting for a one-time code');
    const append = (code: string) =>
      call('POST', `/tasks/${created.executionId}/instructions`, { instructions: [{ action: `Type ${code}` }] });
    assert.equal((await append('111111')).status, 200);
    await waitForStatus(created.executionId, 'running');
    const second = await waitForStatus(created.executionId, 'awaiting');
    assert.equal(second.progress?.logs?.at(-1), NEXT_CODE_FORM_LINE);
    assert.equal((await results(created.executionId)).results.length, 2, 'the instructions ran after the first code');
    assert.equal((await append('222222')).status, 200);
    await waitForStatus(created.executionId, 'finalized');
    assert.deepEqual(
      documented.task(created.executionId)?.codeChecks.map(({ code, accepted }) => [code, accepted]),
      [
        ['111111', true],
        ['222222', true],
      ],
    );
  });

  test("[needs-totp=NAME]: only the code of the emulator's secret for the current time step is taken", async () => {
    const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    await withEmulator({ totpSecrets: { github: secret } }, async (other) => {
      const api = apiOf(() => other);
      const created = await api.create(['Log in [needs-totp=GitHub] [awaiting-lag=0]']);
      await api.waitForStatus(created.executionId, 'awaiting');
      const step = Math.floor(Date.now() / 30_000);
      const codeOf = (counter: number) => HOTP.generate({ secret: Secret.fromBase32(secret), counter });
      const append = (code: string) =>
        api.call('POST', `/tasks/${created.executionId}/instructions`, { instructions: [{ action: `Type ${code}` }] });
      await append(codeOf(step - 2)); // an old code
      await api.waitForStatus(created.executionId, 'running');
      await api.waitForStatus(created.executionId, 'awaiting');
      await append(codeOf(Math.floor(Date.now() / 30_000)));
      await api.waitForStatus(created.executionId, 'finalized');
      assert.deepEqual(
        other.task(created.executionId)?.codeChecks.map((check) => check.accepted),
        [false, true],
      );
    });
  });

  test('awaitable session: awaiting after each batch, more instructions run in the same session, stop ends it', async () => {
    const created = await create(['Open the shop'], { awaitable: true });
    const idle = await waitForStatus(created.executionId, 'awaiting');
    assert.equal(idle.progress?.logs?.at(-1), 'Waiting for more instructions');
    assert.equal(idle.estimatedCompletion, null);
    assert.equal((await results(created.executionId)).results.length, 1);

    const appended = await call<TaskExecution>('POST', `/tasks/${created.executionId}/instructions`, {
      instructions: [{ action: 'Add the cheapest item', type: 'natural_language' }],
    });
    // The awaiting lag: `awaiting` is stale for a moment; only after `running` does `awaiting` mean idle again.
    assert.equal(appended.json.status, 'awaiting');
    await waitForStatus(created.executionId, 'running');
    await waitForStatus(created.executionId, 'awaiting');
    assert.equal((await results(created.executionId)).results.length, 2);

    const stop = await call('POST', `/tasks/${created.executionId}/command`, { command: 'stop' });
    assert.equal(stop.status, 200);
    const stopped = await metadata(created.executionId);
    assert.equal(stopped.status, 'stopped');
    const kept = await results(created.executionId);
    assert.equal(kept.results.length, 2);
    assert.match(kept.completed!, ISO);
  });

  test('fail: runs, then failed with the navigation error in error and logs', async () => {
    const created = await create([`Open https://nowhere.invalid [FAIL] [duration=${LIFECYCLE_MS}]`]);
    const failed = await waitForStatus(created.executionId, 'failed', 10_000);
    assert.equal(failed.error, 'Navigation failed: net::ERR_NAME_NOT_RESOLVED');
    assert.ok(failed.progress?.logs?.includes('Navigation failed: net::ERR_NAME_NOT_RESOLVED'));
    assert.ok(failed.seen.includes('running'));
    const final = await results(created.executionId);
    assert.equal(final.status, 'failed');
    assert.equal(final.results.at(-1)?.state, 'failed');
  });

  test('large: the final result has exactly the requested size', async () => {
    const created = await create(['Download the catalogue [large=300KB]']);
    const done = await waitForStatus(created.executionId, 'finalized');
    assert.equal(Buffer.byteLength(done.result as string), 300 * 1024);
    const final = await results(created.executionId);
    assert.equal(Buffer.byteLength(final.results.at(-1)!.result!), 300 * 1024);

    const big = await create(['Export everything [large=5MB]'], { awaitable: false });
    const bigDone = await waitForStatus(big.executionId, 'finalized');
    assert.equal((bigDone.result as string).length, 5 * 1024 * 1024);
  });

  test('unknown-status: GET /tasks says "thinking" while running', async () => {
    const created = await create(['Think hard [unknown-status] [duration=600ms]']);
    assert.equal(created.status, 'queued');
    const thinking = await waitForStatus(created.executionId, 'thinking');
    assert.equal(thinking.progress?.status, 'thinking');
    assert.match(thinking.estimatedCompletion!, ISO);
    assert.equal(documented.task(created.executionId)?.status, 'running');
    await waitForStatus(created.executionId, 'finalized');
  });

  test('uppercase-status: every status is upper-case', async () => {
    const created = await create(['Shout [Uppercase-Status]']);
    assert.equal(created.status, 'QUEUED');
    const done = await waitForStatus(created.executionId, 'FINALIZED');
    assert.ok(done.seen.includes('RUNNING'));
    assert.equal((await results(created.executionId)).status, 'FINALIZED');
  });

  test('no-eta: estimatedCompletion is null everywhere', async () => {
    const created = await create(['Hurry [no-eta]']);
    assert.equal(created.estimatedCompletion, null);
    const running = await waitForStatus(created.executionId, 'running');
    assert.equal(running.estimatedCompletion, null);
  });

  test('duration marker sets the running time', async () => {
    const created = await create(['Wait [duration=1s]']);
    const eta = Date.parse(created.estimatedCompletion!) - Date.parse(created.started!);
    assert.equal(eta, QUEUE_MS + 1000);
  });

  test('stop: running -> stopped, a second stop is 409 (the documented mode default), as is appending afterwards', async () => {
    const created = await create(['Crawl forever [slow]']);
    await waitForStatus(created.executionId, 'running');
    const stop = await call('POST', `/tasks/${created.executionId}/command`, { command: 'stop' });
    assert.equal(stop.status, 200);
    assert.deepEqual(stop.json, { message: 'Task stopped successfully' });
    const stopped = await metadata(created.executionId);
    assert.equal(stopped.status, 'stopped');
    assert.equal(stopped.estimatedCompletion, null);
    assert.equal(stopped.progress?.logs?.at(-1), 'Stopped by command');

    const again = await call('POST', `/tasks/${created.executionId}/command`, { command: 'stop' });
    assert.equal(again.status, 409);
    assert.deepEqual(again.json, { error: 'Task already ended' });
    assert.equal(documented.task(created.executionId)?.stopCommands, 2);

    for (const method of ['POST', 'PUT']) {
      const late = await call(method, `/tasks/${created.executionId}/instructions`, {
        instructions: [{ action: 'more' }],
      });
      assert.equal(late.status, 409);
      assert.deepEqual(late.json, { error: 'Task already ended' });
    }
  });

  test('replace: overwrites the instructions and restarts the running phase', async () => {
    const created = await create(['First plan [duration=2s]', 'Second step']);
    const running = await waitForStatus(created.executionId, 'running');
    const replaced = await call<TaskExecution>('PUT', `/tasks/${created.executionId}/instructions`, {
      instructions: [{ action: 'New plan', type: 'natural_language' }],
    });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.json.status, 'running');
    assert.ok(Date.parse(replaced.json.estimatedCompletion!) > Date.parse(running.estimatedCompletion!));
    assert.deepEqual(documented.task(created.executionId)?.instructions, [
      { action: 'New plan', type: 'natural_language' },
    ]);
  });

  test('unknown tasks and bad commands', async () => {
    const notFound = { error: 'Task not found' };
    const append = await call('POST', `/tasks/${UNKNOWN_ID}/instructions`, { instructions: [{ action: 'x' }] });
    assert.equal(append.status, 404);
    assert.deepEqual(append.json, notFound);
    assert.deepEqual(
      (await call('PUT', `/tasks/${UNKNOWN_ID}/instructions`, { instructions: [{ action: 'x' }] })).json,
      notFound,
    );
    assert.equal((await call('GET', `/tasks/${UNKNOWN_ID}`)).status, 404);
    assert.deepEqual((await call('GET', `/results/${UNKNOWN_ID}`)).json, notFound);
    assert.equal((await call('POST', `/tasks/${UNKNOWN_ID}/command`, { command: 'stop' })).status, 404);

    const created = await create(['look']);
    for (const body of [{ command: 'pause' }, {}, undefined]) {
      const bad = await call('POST', `/tasks/${created.executionId}/command`, body);
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.json, { error: 'Invalid command or task ID' });
    }
    for (const body of [{}, { instructions: [] }, { instructions: [{ type: 'x' }] }, 'nope']) {
      const bad = await call('POST', `/tasks/${created.executionId}/instructions`, body);
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.json, { error: 'Invalid input' });
    }
  });
});

describe('saved tasks', () => {
  const name = 'Weekly report / café ☕ 2024';
  const body = {
    name,
    instructions: [{ action: 'Collect the weekly numbers' }],
    type: 'natural_language',
    project: 'default',
    geoLocation: { country: 'DE', city: 'Berlin' },
    cron_settings: '',
  };

  test('create, read by encoded name, list, duplicate 409, unknown 404', async () => {
    const created = await call('POST', '/saved_tasks', body);
    assert.equal(created.status, 200);
    assert.match(created.json.taskId, OBJECT_ID);
    assert.equal(created.json.message, 'Saved task created successfully');

    const read = await call('GET', `/saved_tasks/name/${encodeURIComponent(name)}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.json, { taskId: created.json.taskId, ...body });

    // A bare array, not an object around one.
    const list = await call('GET', '/saved_tasks');
    assert.equal(list.status, 200);
    assert.ok(Array.isArray(list.json));
    assert.ok(list.json.some((saved: { name: string }) => saved.name === name));

    const duplicate = await call('POST', '/saved_tasks', body);
    assert.equal(duplicate.status, 409);
    assert.deepEqual(duplicate.json, { error: 'Saved task already exists' });

    const unknown = await call('GET', `/saved_tasks/name/${encodeURIComponent('no such task')}`);
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.json, { error: 'Saved task not found' });
  });

  test('accepts the crawler_automation spelling; rejects bad bodies with Invalid input', async () => {
    const created = await call('POST', '/saved_tasks', { ...body, name: 'n8n style', type: 'crawler_automation' });
    assert.equal(created.status, 200);
    for (const bad of [
      { ...body, name: '' },
      { ...body, name: 'x', type: 'script_automation' },
      { ...body, name: 'y', instructions: [] },
      'oops',
    ]) {
      const answer = await call('POST', '/saved_tasks', bad);
      assert.equal(answer.status, 400);
      assert.deepEqual(answer.json, { error: 'Invalid input' });
    }
  });
});

describe('faults', () => {
  test('an injected 500 answers once, then the endpoint works again', async () => {
    emulator.inject({ method: 'POST', path: /^\/tasks$/, status: 500 });
    const failed = await call('POST', '/tasks', createBody(['look']));
    assert.equal(failed.status, 500);
    assert.deepEqual(failed.json, { error: 'Internal server error' });
    assert.equal((await call('POST', '/tasks', createBody(['look']))).status, 200);
  });

  test('429 carries Retry-After; times and method filters apply', async () => {
    emulator.inject({ method: 'GET', path: /^\/tasks\//, status: 429, retryAfterSeconds: 7, times: 2 });
    const created = await create(['look']);
    for (let i = 0; i < 2; i++) {
      const limited = await call('GET', `/tasks/${created.executionId}`);
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('retry-after'), '7');
    }
    assert.equal((await call('GET', `/tasks/${created.executionId}`)).status, 200);
    emulator.inject({ status: 429 });
    assert.equal((await call('GET', '/saved_tasks')).headers.get('retry-after'), '1');
  });

  test('hang: the request is held until the client gives up', async () => {
    emulator.inject({ path: /^\/results\//, hang: true });
    const started = Date.now();
    await assert.rejects(
      fetch(`${emulator.baseUrl}/results/${UNKNOWN_ID}`, { headers: authHeaders(), signal: AbortSignal.timeout(200) }),
      { name: 'TimeoutError' },
    );
    assert.ok(Date.now() - started >= 190);
    assert.equal((await call('GET', `/results/${UNKNOWN_ID}`)).status, 404);
  });

  test('dropAfterHandling on create: the answer is lost but the task exists', async () => {
    const stats = async () =>
      (await (await fetch(`${new URL(emulator.baseUrl).origin}/__emulator/stats`)).json()) as {
        tasks: number;
      };
    const tasksBefore = (await stats()).tasks;
    const createsBefore = emulator.count('post', /^\/tasks$/);
    emulator.inject({ method: 'POST', path: /^\/tasks$/, dropAfterHandling: true });
    await assert.rejects(
      fetch(`${emulator.baseUrl}/tasks`, {
        method: 'POST',
        headers: authHeaders(),
        body: JSON.stringify(createBody(['look'])),
      }),
      TypeError,
    );
    assert.equal((await stats()).tasks, tasksBefore + 1);
    assert.equal(emulator.count('POST', /^\/tasks$/), createsBefore + 1);
    const lost = emulator.requests.at(-1)!;
    assert.equal(lost.status, 200);
    assert.equal(lost.fault, 'drop');
  });

  test('close() returns promptly even with a hung request open', async () => {
    const other = await BrowserAIEmulator.start();
    other.inject({ hang: true });
    const pending = fetch(`${other.baseUrl}/saved_tasks`, { headers: { authorization: 'apikey emulator-token' } });
    while (other.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    await other.close();
    assert.ok(Date.now() - started < 1000);
    await assert.rejects(pending);
  });
});

describe('recording and control endpoints', () => {
  const control = (path: string, init?: RequestInit) =>
    fetch(`${new URL(emulator.baseUrl).origin}/__emulator${path}`, init);

  test('requests are recorded with bodies for POST/PUT only; count() filters by method and path', async () => {
    emulator.resetRequests();
    const created = await create(['look']);
    await metadata(created.executionId);
    await metadata(created.executionId);
    assert.equal(emulator.requests.length, 3);
    assert.deepEqual((emulator.requests[0]!.body as { instructions: unknown }).instructions, [{ action: 'look' }]);
    assert.equal(emulator.requests[1]!.body, undefined);
    assert.equal(emulator.requests[1]!.path, `/tasks/${created.executionId}`);
    assert.equal(typeof emulator.requests[1]!.at, 'number');
    assert.equal(emulator.count('GET', /^\/tasks\/[0-9a-f]{24}$/), 2);
    assert.equal(emulator.count('POST', /^\/tasks$/), 1);
  });

  test('stats, requests, faults and reset over HTTP without a token', async () => {
    await control('/requests', { method: 'DELETE' });
    const created = await create(['look']);
    await metadata(created.executionId);

    const stats = (await (await control('/stats')).json()) as { requests: Record<string, number>; tasks: number };
    assert.deepEqual(stats.requests, { 'POST /tasks': 1, 'GET /tasks/{id}': 1 });
    assert.ok(stats.tasks >= 1);

    const recorded = (await (await control('/requests')).json()) as Array<Record<string, unknown>>;
    assert.equal(recorded.length, 2);
    assert.ok(recorded.every((request) => !('body' in request)));

    const injected = await control('/faults', {
      method: 'POST',
      body: JSON.stringify({ method: 'GET', path: '^/saved_tasks$', status: 503, times: 3 }),
    });
    assert.equal(injected.status, 200);
    assert.equal((await call('GET', '/saved_tasks')).status, 503);
    assert.equal((await control('/faults', { method: 'DELETE' })).status, 200);
    assert.equal((await call('GET', '/saved_tasks')).status, 200);

    assert.equal((await control('/faults', { method: 'POST', body: JSON.stringify({ path: '(' }) })).status, 400);
    assert.equal((await control('/faults', { method: 'POST', body: 'nope' })).status, 400);

    const task = (await (await control(`/tasks/${created.executionId}`)).json()) as { codesReceived: string[] };
    assert.deepEqual(task.codesReceived, []);

    await control('/requests', { method: 'DELETE' });
    assert.deepEqual(await (await control('/requests')).json(), []);
    assert.equal(emulator.requests.length, 0);
  });

  test('hundreds of concurrent creates and polls', async () => {
    const created = await Promise.all(Array.from({ length: 300 }, (_, i) => create([`task ${i}`])));
    assert.equal(new Set(created.map((execution) => execution.executionId)).size, 300);
    const polled = await Promise.all(created.map((execution) => metadata(execution.executionId)));
    assert.ok(polled.every((task) => typeof task.status === 'string'));
  });
});

describe('control endpoints are safe from foreign pages and slow patterns', () => {
  /** A control request with the Host (and Origin) headers a browser would send, which fetch cannot set. */
  function controlAs(
    host: string,
    method: string,
    path: string,
    { origin, body }: { origin?: string; body?: unknown } = {},
  ): Promise<{ status: number; text: string }> {
    const { port } = new URL(emulator.baseUrl);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method,
          path: `/__emulator${path}`,
          headers: { host, 'content-type': 'application/json', ...(origin ? { origin } : {}) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  test('a foreign Host or Origin is refused with 403 saying which names are served; local names are served', async () => {
    // Breaks if a page on another site (DNS rebinding, or a form posted to 127.0.0.1) could read
    // the recorded codes or inject faults.
    const { port } = new URL(emulator.baseUrl);
    for (const host of [`attacker.example:${port}`, 'rebind.attacker.example', `10.1.2.3:${port}`]) {
      const refused = await controlAs(host, 'GET', '/requests');
      assert.equal(refused.status, 403, host);
      assert.match(
        refused.text,
        /answer only to this machine's names.*localhost or 127\.0\.0\.1.*EMULATOR_CONTROL_HOSTS/,
      );
    }
    const posted = await controlAs(`127.0.0.1:${port}`, 'POST', '/faults', {
      origin: 'https://attacker.example',
      body: { path: '^/tasks$', status: 500 },
    });
    assert.equal(posted.status, 403);
    assert.equal((await controlAs(`127.0.0.1:${port}`, 'GET', '/faults')).text, '[]');
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      assert.equal((await controlAs(host, 'GET', '/stats')).status, 200, host);
    }
    // The API itself (behind its token) answers to any name: a worker reaches it as `emulator`.
    const api = await fetch(`${emulator.baseUrl}/saved_tasks`, {
      headers: { authorization: `apikey ${emulator.apiToken}` },
    });
    assert.equal(api.status, 200);
    // controlHosts adds names, e.g. a container's service name.
    const named = await BrowserAIEmulator.start({ controlHosts: ['emulator'] });
    try {
      const namedPort = new URL(named.baseUrl).port;
      const asService = await new Promise<number>((resolve, reject) => {
        request(
          { host: '127.0.0.1', port: namedPort, path: '/__emulator/stats', headers: { host: `emulator:${namedPort}` } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        )
          .on('error', reject)
          .end();
      });
      assert.equal(asService, 200);
    } finally {
      await named.close();
    }
  });

  test('a fault path pattern that could backtrack for ever is refused; the emulator keeps answering', async () => {
    // Breaks if `^/(a+)+$` were accepted: the next request for /aaaa…! would freeze the emulator
    // (every client, every test) in catastrophic backtracking.
    const { port } = new URL(emulator.baseUrl);
    for (const path of ['^/(a+)+$', '^/(a|aa)*$', '(x*)*y', '^.*.*.*z', '(a)\\1', '^(?=a)']) {
      const refused = await controlAs(`127.0.0.1:${port}`, 'POST', '/faults', { body: { path, status: 500 } });
      assert.equal(refused.status, 400, path);
      assert.match(
        refused.text,
        /path (repeats a group|has a backreference|has a lookaround|has too many repeats)/,
        path,
      );
    }
    const accepted = await controlAs(`127.0.0.1:${port}`, 'POST', '/faults', {
      body: { path: '^/tasks/[^/]+(/instructions)?$', method: 'GET', status: 503 },
    });
    assert.equal(accepted.status, 200);
    await controlAs(`127.0.0.1:${port}`, 'DELETE', '/faults');
    // The crafted path the refused pattern would have frozen on is answered (404).
    const answer = await fetch(`${emulator.baseUrl}/${'a'.repeat(5_000)}!`, {
      headers: { authorization: `apikey ${emulator.apiToken}` },
    });
    assert.equal(answer.status, 404);
  });
});

describe('scenario and state machine (no HTTP, fake clock)', () => {
  test('markers', () => {
    const parse = (action: string, awaitable?: boolean) =>
      parseScenario({ instructions: [{ action }], awaitable }, 1500);
    assert.equal(parse('x').durationMs, 1500);
    assert.equal(parse('[duration=90s]').durationMs, 90_000);
    assert.equal(parse('[DURATION=1500ms]').durationMs, 1500);
    assert.equal(parse('[duration=2m]').durationMs, 120_000);
    assert.equal(parse('[slow]').durationMs, 30_000);
    assert.equal(parse('[slow] [duration=2s]').durationMs, 2000);
    assert.equal(parse('[large=5MB]').largeResultBytes, 5 * 1024 * 1024);
    assert.equal(parse('[large=300KB]').largeResultBytes, 300 * 1024);
    assert.equal(parse('[large=123456]').largeResultBytes, 123456);
    assert.equal(parse('x').largeResultBytes, null);
    const all = parse('[needs-code][fail][unknown-status][uppercase-status][no-eta]', true);
    assert.deepEqual(
      [all.needsCode, all.fail, all.unknownStatus, all.uppercaseStatus, all.noEta, all.awaitable],
      [true, true, true, true, true, true],
    );
    assert.equal(parse('x').awaitable, false);
    assert.deepEqual(
      [parse('[rejects-code]').rejectCodes, parse('[reject-codes=3]').rejectCodes, parse('[needs-code]').rejectCodes],
      [1, 3, 0],
    );
    assert.equal(parse('[rejects-code]').needsCode, true, 'a task that refuses codes asks for one');
    assert.deepEqual([parse('[needs-totp=GH_1]').totpSecretName, parse('[needs-totp=GH_1]').needsCode], ['GH_1', true]);
    assert.equal(parse('x').totpSecretName, null);
  });

  test('new markers: awaiting-lag, not-visible, big-logs, big-error (sizes capped like [large])', () => {
    const parse = (action: string) => parseScenario({ instructions: [{ action }] }, 1500, 700);
    assert.equal(parse('x').awaitingLagMs, 700);
    assert.equal(parseScenario({ instructions: [{ action: 'x' }] }, 1500).awaitingLagMs, 1000);
    assert.equal(parse('[awaiting-lag=2500ms]').awaitingLagMs, 2500);
    assert.equal(parse('[Awaiting-Lag=0]').awaitingLagMs, 0);
    assert.equal(parse('[awaiting-lag=2s] [duration=3s]').durationMs, 3000);
    assert.equal(parse('x').notVisibleMs, 0);
    assert.equal(parse('[not-visible=2s]').notVisibleMs, 2000);
    assert.equal(parse('[big-logs=3mb]').bigLogBytes, 3 * 1024 * 1024);
    assert.equal(parse('[big-error=10KB]').bigErrorBytes, 10 * 1024);
    assert.equal(parse('[big-logs=1gb]').bigLogBytes, MAX_LARGE_BYTES);
    assert.deepEqual(
      [parse('x').bigLogBytes, parse('x').bigErrorBytes, parse('[big-logs=3mb]').largeResultBytes],
      [null, null, null],
    );
  });

  test('awaiting lag: a second batch joins the run already due; a stop in the lag ends the task', () => {
    const store = new TaskStore({ queueMs: 0, defaultDurationMs: 100, awaitingLagMs: 1000 });
    const t0 = 9_000_000;
    const task = store.create(
      {
        instructions: [{ action: 'a' }],
        geoLocation: { country: 'US' },
        project: 'p',
        type: 'crawler_automation',
        awaitable: true,
      },
      t0,
    );
    assert.equal(task.status(t0 + 100), 'awaiting');
    assert.equal(task.estimatedCompletion(t0 + 100), null);
    assert.equal(task.append([{ action: 'b' }], t0 + 200), 'ok');
    assert.equal(task.estimatedCompletion(t0 + 200), t0 + 1300);
    assert.equal(task.append([{ action: 'c' }], t0 + 700), 'ok');
    assert.equal(task.status(t0 + 1199), 'awaiting');
    assert.equal(task.status(t0 + 1200), 'running');
    assert.equal(task.status(t0 + 1300), 'awaiting');
    assert.deepEqual(
      task.visibleEntries(t0 + 1300).map((entry) => entry.step),
      [1, 2, 3],
    );

    const other = store.create(
      {
        instructions: [{ action: 'a' }],
        geoLocation: { country: 'US' },
        project: 'p',
        type: 'crawler_automation',
        awaitable: true,
      },
      t0,
    );
    other.append([{ action: 'b' }], t0 + 200);
    assert.equal(other.stop(t0 + 500), 'ok');
    assert.equal(other.status(t0 + 5000), 'stopped');
    assert.equal(other.visibleEntries(t0 + 5000).length, 1);
  });

  test('results appear one by one; a stop keeps only the instructions already done', () => {
    const store = new TaskStore({ queueMs: 100, defaultDurationMs: 300 });
    const t0 = 1_000_000;
    const task = store.create(
      {
        instructions: [{ action: 'a' }, { action: 'b' }, { action: 'c' }],
        geoLocation: { country: 'US' },
        project: 'p',
        type: 'crawler_automation',
      },
      t0,
    );
    assert.equal(task.status(t0 + 99), 'queued');
    assert.equal(task.status(t0 + 100), 'running');
    assert.equal(task.visibleEntries(t0 + 199).length, 0);
    assert.equal(task.visibleEntries(t0 + 200).length, 1);
    assert.equal(task.stop(t0 + 250), 'ok');
    assert.equal(task.status(t0 + 10_000), 'stopped');
    assert.equal(task.visibleEntries(t0 + 10_000).length, 1);
    assert.equal(task.endedAt, t0 + 250);
    assert.equal(task.stop(t0 + 10_000), 'ended');
  });

  test('appending to a running task reruns the unfinished instructions after the new ones are added', () => {
    const store = new TaskStore({ queueMs: 0, defaultDurationMs: 200 });
    const t0 = 5_000_000;
    const task = store.create(
      {
        instructions: [{ action: 'a' }, { action: 'b' }],
        geoLocation: { country: 'US' },
        project: 'p',
        type: 'crawler_automation',
      },
      t0,
    );
    assert.equal(task.append([{ action: 'c' }], t0 + 150), 'ok');
    assert.equal(task.estimatedCompletion(t0 + 150), t0 + 350);
    assert.equal(task.status(t0 + 350), 'finalized');
    assert.deepEqual(
      task.visibleEntries(t0 + 350).map((entry) => entry.step),
      [1, 2, 3],
    );
    assert.ok(task.visibleLogs(t0 + 350).includes('Executing instruction 2/3'));
  });
});

describe('awaiting lag (documented mode, to see the estimate)', { concurrency: true }, () => {
  const { call, create, metadata, results, waitForStatus } = documentedApi;

  test('default 1 s: an appended awaiting task reports awaiting for 1 s, then runs; the run ends that much later', async () => {
    const created = await create(['Open the shop'], { awaitable: true });
    await waitForStatus(created.executionId, 'awaiting');
    const appendedAt = Date.now();
    const appended = await call<TaskExecution>('POST', `/tasks/${created.executionId}/instructions`, {
      instructions: [{ action: 'Add the cheapest item' }],
    });
    assert.equal(appended.json.status, 'awaiting');
    await sleep(800);
    assert.equal((await metadata(created.executionId)).status, 'awaiting');
    const running = await waitForStatus(created.executionId, 'running');
    assert.ok(Date.now() - appendedAt >= 1000 - 5, `running after ${Date.now() - appendedAt} ms`);
    const eta = Date.parse(running.estimatedCompletion!) - appendedAt;
    assert.ok(eta >= 1000 + DURATION_MS - 5 && eta <= 1000 + DURATION_MS + 200, `eta ${eta}`);
    await waitForStatus(created.executionId, 'awaiting');
    assert.equal((await results(created.executionId)).results.length, 2);
  });

  test('[awaiting-lag=2500ms] overrides the option for that task, replace included', async () => {
    const created = await create(['Log in [needs-code] [awaiting-lag=2500ms]']);
    await waitForStatus(created.executionId, 'awaiting');
    const replacedAt = Date.now();
    const replaced = await call<TaskExecution>('PUT', `/tasks/${created.executionId}/instructions`, {
      instructions: [{ action: 'Type 112233' }],
    });
    assert.equal(replaced.json.status, 'awaiting');
    assert.deepEqual(documented.task(created.executionId)?.codesReceived, ['112233']);
    assert.equal(documented.task(created.executionId)?.scenario.awaitingLagMs, 2500);
    await sleep(2000);
    assert.equal((await metadata(created.executionId)).status, 'awaiting');
    await waitForStatus(created.executionId, 'running');
    assert.ok(Date.now() - replacedAt >= 2500 - 5);
    await waitForStatus(created.executionId, 'finalized');
  });

  test('awaitingLagMs: 0 runs appended instructions at once (and negative values are refused)', async () => {
    await withEmulator({ awaitingLagMs: 0 }, async (other) => {
      const created = JSON.parse(
        (await rawCall(other, 'POST', '/tasks', createBody(['Open'], { awaitable: true }))).text,
      );
      const deadline = Date.now() + 3000;
      while (other.task(created.executionId)?.status !== 'awaiting') {
        assert.ok(Date.now() < deadline);
        await sleep(15);
      }
      const appended = await rawCall(other, 'POST', `/tasks/${created.executionId}/instructions`, {
        instructions: [{ action: 'More' }],
      });
      assert.equal(JSON.parse(appended.text).status, 'running');
    });
    await assert.rejects(BrowserAIEmulator.start({ awaitingLagMs: -1 }), RangeError);
  });
});

describe('answer faults', () => {
  test('a create answered {executionId} only still creates a real task', async () => {
    emulator.inject({
      method: 'POST',
      path: /^\/tasks$/,
      answer: { transform: (real: TaskExecution) => ({ executionId: real.executionId }) },
    });
    const answer = await call('POST', '/tasks', createBody(['look']));
    assert.equal(answer.status, 200);
    assert.deepEqual(Object.keys(answer.json), ['executionId']);
    assert.equal(emulator.task(answer.json.executionId)?.status, 'queued');
    assert.equal(emulator.requests.at(-1)?.fault, 'answer');
    // Only once: the next create answers in full.
    assert.equal((await call('POST', '/tasks', createBody(['look']))).json.status, 'queued');
  });

  test('an HTML page with status 200 (the create happened)', async () => {
    const before = emulator.listTasks().length;
    emulator.inject({ method: 'POST', path: /^\/tasks$/, answer: { raw: '<html><body>Bad gateway</body></html>' } });
    const answer = await rawCall(emulator, 'POST', '/tasks', createBody(['look']));
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type')!, /^text\/html/);
    assert.equal(answer.text, '<html><body>Bad gateway</body></html>');
    assert.equal(emulator.listTasks().length, before + 1);
  });

  test('over HTTP: `not json` as application/json on an append that really happened; json and status too', async () => {
    const control = controlOf(emulator);
    const created = await create(['Open [slow]']);
    const injected = await control('/faults', {
      method: 'POST',
      body: JSON.stringify({
        method: 'POST',
        path: '/instructions$',
        answer: { raw: 'not json', contentType: 'application/json' },
      }),
    });
    assert.equal(injected.status, 200);
    const answer = await rawCall(emulator, 'POST', `/tasks/${created.executionId}/instructions`, {
      instructions: [{ action: 'next' }],
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'application/json');
    assert.equal(answer.text, 'not json');
    assert.equal(emulator.task(created.executionId)?.instructions.length, 2);

    await control('/faults', {
      method: 'POST',
      body: JSON.stringify({ path: '^/results/', answer: { status: 202, json: { results: 'soon' } } }),
    });
    const odd = await rawCall(emulator, 'GET', `/results/${created.executionId}`);
    assert.equal(odd.status, 202);
    assert.deepEqual(JSON.parse(odd.text), { results: 'soon' });

    for (const answer of ['x', { transform: 'x' }, { raw: 1 }, { status: 1000 }]) {
      assert.equal((await control('/faults', { method: 'POST', body: JSON.stringify({ answer }) })).status, 400);
    }
    await call('POST', `/tasks/${created.executionId}/command`, { command: 'stop' });
  });
});

describe(
  'big outputs and visibility (documented mode: logs of ended tasks, error as a string)',
  { concurrency: true },
  () => {
    const { call, create, metadata, results, waitForStatus } = documentedApi;

    const MB = 1024 * 1024;

    test('[big-logs=3mb]: one log line of 3 MiB beside the normal lines, while running and after', async () => {
      const created = await create(['Dump the DOM [big-logs=3mb] [duration=600ms]']);
      const running = await waitForStatus(created.executionId, 'running');
      const bigLines = (logs: string[]) => logs.filter((line) => line.length === 3 * MB);
      assert.equal(bigLines(running.progress!.logs!).length, 1);
      assert.ok(running.progress!.logs!.includes('Opening browser'));
      const done = await waitForStatus(created.executionId, 'finalized');
      const logs = done.progress!.logs!;
      assert.equal(bigLines(logs).length, 1);
      assert.equal(Buffer.byteLength(bigLines(logs)[0]!), 3 * MB);
      assert.deepEqual(
        logs.filter((line) => line.length < 1000 && !line.includes('wss')),
        ['Task queued', 'Opening browser', 'Executing instruction 1/1', 'Task finalized'],
      );
    });

    test('[big-error=3mb] with [fail]: error is a 3 MiB string that starts with the usual failure', async () => {
      const created = await create(['Open https://nowhere.invalid [fail] [big-error=3mb]']);
      const failed = await waitForStatus(created.executionId, 'failed');
      assert.equal(typeof failed.error, 'string');
      assert.equal(Buffer.byteLength(failed.error as string), 3 * MB);
      assert.ok((failed.error as string).startsWith('Navigation failed: net::ERR_NAME_NOT_RESOLVED'));
      const quiet = await create(['Fine [big-error=3mb]']);
      assert.equal((await waitForStatus(quiet.executionId, 'finalized')).error, null);
    });

    test('[not-visible=5s]: reads and stop answer 404 Task not found for 5 s after the create; the stop is not applied', async () => {
      // 5 s, not less: the three requests below must fall inside the window on a busy machine too.
      const createdAt = Date.now();
      const created = await create(['Look [not-visible=5s] [duration=8s]']);
      const notFound = { error: 'Task not found' };
      for (const [method, path, body] of [
        ['GET', `/tasks/${created.executionId}`],
        ['GET', `/results/${created.executionId}`],
        ['POST', `/tasks/${created.executionId}/command`, { command: 'stop' }],
      ] as const) {
        const answer = await call(method, path, body);
        assert.equal(answer.status, 404, `${method} ${path}`);
        assert.deepEqual(answer.json, notFound);
      }
      const hidden = documented.task(created.executionId)!;
      assert.equal(hidden.stopCommands, 0);
      assert.ok(!['stopped'].includes(hidden.status));
      assert.ok(Date.now() - createdAt < 5000, 'the 404s above must fall inside the window');

      await sleep(5000 - (Date.now() - createdAt) + 20);
      assert.equal((await metadata(created.executionId)).status, 'running');
      assert.equal((await results(created.executionId)).executionId, created.executionId);
      assert.equal((await call('POST', `/tasks/${created.executionId}/command`, { command: 'stop' })).status, 200);
      assert.equal(documented.task(created.executionId)?.stopCommands, 1);
    });
  },
);

describe('random faults', () => {
  /** Sends `count` creates one by one; returns what the client saw for each. */
  async function outcomes(target: BrowserAIEmulator, count: number): Promise<string[]> {
    const seen: string[] = [];
    for (let i = 0; i < count; i++) {
      try {
        // A hang holds the answer for ever; 500 ms tells it from a slow answer on a busy machine.
        const answer = await rawCall(target, 'POST', '/tasks', createBody([`chaos ${i}`]), AbortSignal.timeout(500));
        seen.push(
          answer.status === 429 ? `429 retry-after=${answer.headers.get('retry-after')}` : String(answer.status),
        );
      } catch (error) {
        seen.push((error as Error).name === 'TimeoutError' ? 'hang' : 'lost');
      }
    }
    return seen;
  }

  const kindOf: Record<string, RandomFaultKind> = {
    '500': 'server-error',
    '429 retry-after=1': 'rate-limited',
    hang: 'hang',
    lost: 'answer-lost',
  };

  test('seeded: every kind happens, counts match what clients saw, the same seed repeats the same run', async () => {
    const runs: string[][] = [];
    for (let run = 0; run < 2; run++) {
      await withEmulator({ randomFaults: { rate: 0.5, seed: 42 } }, async (other) => {
        const seen = await outcomes(other, 40);
        runs.push(seen);
        const expected: Record<RandomFaultKind, number> = {
          'server-error': 0,
          'rate-limited': 0,
          hang: 0,
          'answer-lost': 0,
        };
        for (const outcome of seen) if (outcome !== '200') expected[kindOf[outcome]!] += 1;
        assert.deepEqual(other.injectedFaults(), expected);
        assert.ok(
          Object.values(expected).every((n) => n > 0),
          JSON.stringify(expected),
        );
        assert.ok(seen.includes('200'));
        // A lost answer still created its task; a 500, 429 or hang did not.
        assert.equal(other.listTasks().length, seen.filter((o) => o === '200').length + expected['answer-lost']);
        assert.deepEqual(
          other.requests.map((request) => request.randomFault ?? null),
          seen.map((outcome) => (outcome === '200' ? null : kindOf[outcome])),
        );
        // Control endpoints are never disturbed.
        for (let i = 0; i < 10; i++) assert.equal((await controlOf(other)('/stats')).status, 200);
      });
    }
    assert.deepEqual(runs[0], runs[1]);
  });

  test('set and cleared at runtime, in-process and over HTTP; kinds restrict the choice', async () => {
    await withEmulator({}, async (other) => {
      const control = controlOf(other);
      other.setRandomFaults({ rate: 1, kinds: ['rate-limited'] });
      assert.deepEqual(await outcomes(other, 3), ['429 retry-after=1', '429 retry-after=1', '429 retry-after=1']);
      other.setRandomFaults(undefined);
      assert.deepEqual(await outcomes(other, 2), ['200', '200']);

      const set = await control('/random-faults', {
        method: 'PUT',
        body: JSON.stringify({ rate: 1, seed: 7, kinds: ['server-error'] }),
      });
      assert.equal(set.status, 200);
      assert.deepEqual(await outcomes(other, 2), ['500', '500']);
      const state = (await (await control('/random-faults')).json()) as {
        options: unknown;
        injected: Record<string, number>;
      };
      assert.deepEqual(state.options, { rate: 1, seed: 7, kinds: ['server-error'] });
      assert.deepEqual(state.injected, { 'server-error': 2, 'rate-limited': 3, hang: 0, 'answer-lost': 0 });
      assert.equal((await control('/random-faults', { method: 'DELETE' })).status, 200);
      assert.deepEqual(await outcomes(other, 1), ['200']);
      assert.deepEqual(((await (await control('/random-faults')).json()) as { options: unknown }).options, null);

      for (const bad of [
        { rate: 2 },
        { rate: 0.5, kinds: ['meteor'] },
        { rate: 0.5, kinds: [] },
        { rate: 0.5, seed: 1.5 },
        'x',
      ]) {
        assert.equal((await control('/random-faults', { method: 'PUT', body: JSON.stringify(bad) })).status, 400);
      }
      assert.throws(() => other.setRandomFaults({ rate: -1 }), RangeError);
    });
    await assert.rejects(BrowserAIEmulator.start({ randomFaults: { rate: 0.1, kinds: [] } }), RangeError);
  });

  test('close() finishes promptly with randomly hung requests still open', async () => {
    const other = await BrowserAIEmulator.start({ randomFaults: { rate: 1, kinds: ['hang'] } });
    const pending = [1, 2, 3].map(() => rawCall(other, 'GET', '/saved_tasks'));
    const rejected = Promise.all(pending.map((request) => assert.rejects(request)));
    while (other.requests.length < 3) await sleep(5);
    const started = Date.now();
    await other.close();
    assert.ok(Date.now() - started < 1000);
    await rejected;
    assert.equal(other.injectedFaults().hang, 3);
  });
});

describe('tasks left behind, stop commands, codes and creates per project', () => {
  test('runningTasks() lists the tasks not ended; stopCommands counts accepted and refused stops', async () => {
    await withEmulator({}, async (other) => {
      const make = async (actions: string[], extra: Record<string, unknown> = {}) =>
        JSON.parse((await rawCall(other, 'POST', '/tasks', createBody(actions, extra))).text) as TaskExecution;
      const slow = await make(['Crawl [slow]'], { project: 'alpha' });
      const quick = await make(['Look'], { project: 'alpha' });
      const code = await make(['Log in [needs-code] [awaiting-lag=0]'], { project: 'beta' });
      const running = () =>
        other
          .runningTasks()
          .map((task) => task.executionId)
          .sort();
      assert.deepEqual(running(), [slow.executionId, quick.executionId, code.executionId].sort());

      while (
        other.task(quick.executionId)?.status !== 'finalized' ||
        other.task(code.executionId)?.status !== 'awaiting'
      )
        await sleep(15);
      assert.deepEqual(running(), [slow.executionId, code.executionId].sort());
      await rawCall(other, 'POST', `/tasks/${code.executionId}/instructions`, {
        instructions: [{ action: 'Code 4711 then 998877' }],
      });
      assert.deepEqual(other.runningTasks().find((task) => task.executionId === code.executionId)?.codesReceived, [
        '4711',
        '998877',
      ]);

      assert.equal(
        (await rawCall(other, 'POST', `/tasks/${slow.executionId}/command`, { command: 'stop' })).status,
        200,
      );
      // Refused with the default ended-task answer of `observed` mode: 400.
      assert.equal(
        (await rawCall(other, 'POST', `/tasks/${slow.executionId}/command`, { command: 'stop' })).status,
        400,
      );
      assert.equal(
        (await rawCall(other, 'POST', `/tasks/${quick.executionId}/command`, { command: 'stop' })).status,
        400,
      );
      assert.equal(other.task(slow.executionId)?.stopCommands, 2);
      assert.equal(other.task(quick.executionId)?.stopCommands, 1);
      assert.ok(!running().includes(slow.executionId));

      const createsIn = (project: string) =>
        other.requests.filter(
          (r) => r.method === 'POST' && r.path === '/tasks' && (r.body as { project?: string }).project === project,
        ).length;
      assert.deepEqual([createsIn('alpha'), createsIn('beta'), createsIn('gamma')], [2, 1, 0]);
    });
  });
});
