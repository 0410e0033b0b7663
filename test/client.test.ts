// BrowserAIClient against the emulator over real HTTP: typed answers of every endpoint, typed
// errors for every way a call can end, the headers it sends, the token kept out of every error,
// and request pacing.
// Runs against both emulator modes. The answer shapes the client reads differ between them.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { inspect } from 'node:util';
import { BrowserAIEmulator, emulatorOptionsFromEnv } from '../src/emulator';
import { BrowserAIClient, BrowserAIError, type BrowserAIErrorKind } from '../src/browserai';
import type { CreateTaskRequest } from '../src/contract/browserai-types';

const TOKEN = 'tok-SECRET-7f3a9c1e-do-not-leak';
const WRONG_TOKEN = 'tok-WRONG-55aa0033-also-secret';

let emu: BrowserAIEmulator;
let client: BrowserAIClient;

before(async () => {
  // The mode and the ended-task answer follow BROWSERAI_EMULATOR_MODE / _ENDED_ANSWER, so the client is proven against both.
  emu = await BrowserAIEmulator.start({
    defaultDurationMs: 300,
    queueMs: 50,
    apiToken: TOKEN,
    ...emulatorOptionsFromEnv(process.env),
  });
  client = new BrowserAIClient({ apiToken: emu.apiToken, baseUrl: emu.baseUrl });
});

after(async () => {
  await emu.close();
});

function createBody(
  action = 'Open example.com and read the title',
  extra: Partial<CreateTaskRequest> = {},
): CreateTaskRequest {
  return {
    instructions: [{ action }],
    geoLocation: { country: 'US' },
    project: 'default',
    type: 'crawler_automation',
    ...extra,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitForStatus(id: string, wanted: string, timeoutMs = 4000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (emu.task(id)?.status !== wanted) {
    if (Date.now() > deadline) assert.fail(`task ${id} never reached ${wanted} (is ${emu.task(id)?.status})`);
    await sleep(20);
  }
}

/** Awaits a rejection and checks it is a BrowserAIError of the given kind; returns it for more checks. */
async function expectError(promise: Promise<unknown>, kind: BrowserAIErrorKind): Promise<BrowserAIError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof BrowserAIError, `expected a BrowserAIError, got ${inspect(caught)}`);
  assert.equal(caught.kind, kind, caught.message);
  return caught;
}

/** A closed port on localhost: nothing listens there, so connecting is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

interface Captured {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  at: number;
}

/** A tiny server that records every request and answers a task execution. */
async function recordingServer(): Promise<{ server: Server; baseUrl: string; seen: Captured[] }> {
  const seen: Captured[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, at: performance.now() });
    req.resume();
    req.on('end', () => {
      const body = JSON.stringify({ executionId: 'exec_1', status: 'running' });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { server, baseUrl: `http://127.0.0.1:${port}/api/v1`, seen };
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}

describe('endpoints return typed answers', () => {
  test('createTask returns the task execution', async () => {
    const answer = await client.createTask(createBody());
    assert.match(answer.executionId, /^[0-9a-f]{24}$/, 'a MongoDB ObjectId, as real answers show');
    assert.equal(answer.status, 'queued');
    assert.equal(answer.scriptType, 'crawler_automation');
    assert.equal(answer.geoLocation?.country?.toUpperCase(), 'US');
    if (emu.mode === 'documented') {
      assert.ok(!Number.isNaN(Date.parse(answer.started!)));
      assert.ok(Date.parse(answer.estimatedCompletion!) > Date.parse(answer.started!));
    } else {
      // Real create answers carry neither: nothing may depend on them.
      assert.equal(answer.started, undefined);
      assert.equal(answer.estimatedCompletion, undefined);
    }
    assert.ok(emu.task(answer.executionId), 'the emulator knows the created task');
  });

  test('getTask returns the task metadata', async () => {
    const { executionId } = await client.createTask(createBody());
    const meta = await client.getTask(executionId);
    assert.equal(meta.executionId, executionId);
    if (emu.mode === 'documented') assert.match(meta.scriptId!, /^[0-9a-f]{24}$/);
    assert.equal(meta.scriptType, 'crawler_automation');
    assert.equal(typeof meta.status, 'string');
    assert.ok(Array.isArray(meta.progress?.logs));
    if (emu.mode === 'documented') assert.equal(typeof meta.started, 'string');
  });

  test('getResults returns the results of a finished task', async () => {
    const { executionId } = await client.createTask(createBody('Step one'));
    await waitForStatus(executionId, 'finalized');
    const results = await client.getResults(executionId);
    assert.equal(results.executionId, executionId);
    assert.equal(results.status, 'finalized');
    assert.equal(typeof results.completed, 'string');
    assert.equal(results.results.length, 1);
    const [entry] = results.results;
    assert.equal(entry!.state, 'done');
    assert.equal(entry!.history_index, 0);
    assert.equal(typeof entry!.result, 'string');
    assert.match(entry!.screenshot_url!, /^http:\/\//);
  });

  test('appendInstructions adds to the list and replaceInstructions overwrites it', async () => {
    const { executionId } = await client.createTask(createBody('First', { awaitable: true }));
    const appended = await client.appendInstructions(executionId, { instructions: [{ action: 'Second' }] });
    assert.equal(appended.executionId, executionId);
    assert.equal(typeof appended.status, 'string');
    assert.deepEqual(
      emu.task(executionId)!.instructions.map((i) => i.action),
      ['First', 'Second'],
    );

    const replaced = await client.replaceInstructions(executionId, { instructions: [{ action: 'Only this' }] });
    assert.equal(replaced.executionId, executionId);
    assert.deepEqual(
      emu.task(executionId)!.instructions.map((i) => i.action),
      ['Only this'],
    );
    assert.equal(emu.count('POST', new RegExp(`^/tasks/${executionId}/instructions$`)), 1);
    assert.equal(emu.count('PUT', new RegExp(`^/tasks/${executionId}/instructions$`)), 1);
  });

  test('stopTask stops the task and answers a message', async () => {
    const { executionId } = await client.createTask(createBody('[duration=30s] long task'));
    const answer = await client.stopTask(executionId);
    assert.equal(answer.message, 'Task stopped successfully');
    assert.equal(emu.task(executionId)!.status, 'stopped');
    const body = emu.requests.find((r) => r.method === 'POST' && r.path === `/tasks/${executionId}/command`)!.body;
    assert.deepEqual(body, { command: 'stop' });
  });

  test('createSavedTask, getSavedTask and listSavedTasks round-trip a name with spaces, a slash and unicode', async () => {
    const name = 'Daily check / Zürich 日本 ✓';
    const created = await client.createSavedTask({
      name,
      instructions: [{ action: 'Open the status page' }],
      type: 'natural_language',
      project: 'default',
      geoLocation: { country: 'CH', city: 'Zürich' },
      cron_settings: '',
    });
    assert.match(created.taskId, /^[0-9a-f]{24}$/);

    const saved = await client.getSavedTask(name);
    assert.equal(saved.name, name);
    assert.equal(saved.taskId, created.taskId);
    assert.deepEqual(saved.instructions, [{ action: 'Open the status page' }]);
    assert.deepEqual(saved.geoLocation, { country: 'CH', city: 'Zürich' });
    // The slash travels encoded, so it cannot split the path.
    const read = emu.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/saved_tasks/name/')).at(-1)!;
    assert.ok(read.path.includes('%2F'), read.path);
    assert.ok(!read.path.slice('/saved_tasks/name/'.length).includes('/'), read.path);

    const list = await client.listSavedTasks();
    assert.ok(Array.isArray(list));
    assert.ok(list.some((t) => t.name === name && t.taskId === created.taskId));
  });
});

describe('typed errors', () => {
  test('400 invalid input -> InvalidInput', async () => {
    const err = await expectError(client.createTask(createBody('x', { project: 'missing-project' })), 'InvalidInput');
    assert.equal(err.status, 400);
    assert.equal(err.apiMessage, 'Invalid input or project not found');
    assert.equal(err.mayHaveReachedServer, false);
    assert.equal(err.retryable, false);
  });

  test('401 with a wrong token -> Unauthorized', async () => {
    const wrong = new BrowserAIClient({ apiToken: WRONG_TOKEN, baseUrl: emu.baseUrl });
    const err = await expectError(wrong.createTask(createBody()), 'Unauthorized');
    assert.equal(err.status, 401);
    assert.equal(err.retryable, false);
    assert.equal(err.mayHaveReachedServer, false);
  });

  test('404 on a task -> TaskNotFound', async () => {
    const err = await expectError(client.getTask('exec_does_not_exist'), 'TaskNotFound');
    assert.equal(err.status, 404);
    assert.equal(err.apiMessage, 'Task not found');
    await expectError(client.getResults('exec_does_not_exist'), 'TaskNotFound');
  });

  test('404 on a saved task -> SavedTaskNotFound', async () => {
    const err = await expectError(client.getSavedTask('no such saved task'), 'SavedTaskNotFound');
    assert.equal(err.status, 404);
  });

  test('stopping a task twice is refused with a non-retryable error of the status BrowserAI answers (nothing depends on a 409)', async () => {
    const { executionId } = await client.createTask(createBody('[duration=30s] long task'));
    await client.stopTask(executionId);
    const kind = ({ 409: 'Conflict', 400: 'InvalidCommand', 404: 'TaskNotFound' } as const)[emu.endedTaskAnswer];
    const err = await expectError(client.stopTask(executionId), kind);
    assert.equal(err.status, emu.endedTaskAnswer);
    assert.equal(err.retryable, false);
  });

  test('429 -> RateLimited with retryAfterMs from Retry-After', async () => {
    emu.inject({ method: 'GET', path: /^\/tasks\//, status: 429, retryAfterSeconds: 7 });
    const err = await expectError(client.getTask('exec_anything'), 'RateLimited');
    assert.equal(err.status, 429);
    assert.equal(err.retryAfterMs, 7000);
    assert.equal(err.retryable, true);
    assert.equal(err.mayHaveReachedServer, false);
  });

  test('500 -> ServerError that may have reached the server', async () => {
    emu.inject({ method: 'POST', path: /^\/tasks$/, status: 500 });
    const err = await expectError(client.createTask(createBody()), 'ServerError');
    assert.equal(err.status, 500);
    assert.equal(err.mayHaveReachedServer, true);
    assert.equal(err.retryable, true);
  });

  test('connection refused -> NetworkError that never reached the server', async () => {
    const port = await closedPort();
    const offline = new BrowserAIClient({ apiToken: TOKEN, baseUrl: `http://127.0.0.1:${port}/api/v1` });
    const err = await expectError(offline.createTask(createBody()), 'NetworkError');
    assert.equal(err.mayHaveReachedServer, false);
    assert.equal(err.status, undefined);
    assert.match(err.message, /ECONNREFUSED/);
  });

  test('a hung request with timeoutMs -> Timeout that may have reached the server', async () => {
    emu.inject({ method: 'GET', path: /^\/tasks\/exec_hang_timeout$/, hang: true });
    const err = await expectError(client.getTask('exec_hang_timeout', { timeoutMs: 200 }), 'Timeout');
    assert.equal(err.mayHaveReachedServer, true);
    assert.equal(err.retryable, true);
  });

  test('an AbortSignal aborts a hung request -> Aborted', async () => {
    emu.inject({ method: 'GET', path: /^\/tasks\/exec_hang_abort$/, hang: true });
    const controller = new AbortController();
    const pending = client.getTask('exec_hang_abort', { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const err = await expectError(pending, 'Aborted');
    assert.equal(err.retryable, false);
  });
});

describe('the API token stays secret', () => {
  test('no thrown error shows the token: not in message, JSON or inspect', async () => {
    const port = await closedPort();
    const offline = new BrowserAIClient({ apiToken: TOKEN, baseUrl: `http://127.0.0.1:${port}/api/v1` });
    const wrong = new BrowserAIClient({ apiToken: WRONG_TOKEN, baseUrl: emu.baseUrl });
    emu.inject({ method: 'GET', path: /^\/tasks\/exec_secret_429$/, status: 429 });
    emu.inject({ method: 'GET', path: /^\/tasks\/exec_secret_500$/, status: 500 });
    emu.inject({ method: 'GET', path: /^\/tasks\/exec_secret_hang/, hang: true, times: 2 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);

    const errors = await Promise.all([
      expectError(client.createTask(createBody('x', { project: 'missing-project' })), 'InvalidInput'),
      expectError(wrong.getTask('exec_x'), 'Unauthorized'),
      expectError(client.getTask('exec_missing'), 'TaskNotFound'),
      expectError(client.getSavedTask('missing'), 'SavedTaskNotFound'),
      expectError(client.getTask('exec_secret_429'), 'RateLimited'),
      expectError(client.getTask('exec_secret_500'), 'ServerError'),
      expectError(offline.getTask('exec_x'), 'NetworkError'),
      expectError(client.getTask('exec_secret_hang_1', { timeoutMs: 150 }), 'Timeout'),
      expectError(client.getTask('exec_secret_hang_2', { signal: controller.signal }), 'Aborted'),
    ]);
    for (const err of errors) {
      for (const [label, text] of [
        ['message', err.message],
        ['stack', err.stack ?? ''],
        ['JSON', JSON.stringify(err)],
        ['inspect', inspect(err, { depth: Infinity, showHidden: true })],
      ] as const) {
        assert.ok(!text.includes(TOKEN), `${err.kind}: ${label} shows the token`);
        assert.ok(!text.includes(WRONG_TOKEN), `${err.kind}: ${label} shows the wrong token`);
      }
    }
  });

  test('inspecting the client does not show the token', () => {
    const c = new BrowserAIClient({ apiToken: TOKEN, baseUrl: emu.baseUrl, timeoutMs: 1000, maxRequestsPerSecond: 5 });
    for (const text of [inspect(c), inspect(c, { depth: Infinity, showHidden: true }), JSON.stringify(c), String(c)]) {
      assert.ok(!text.includes(TOKEN), text);
    }
    assert.ok(inspect(c).includes(emu.baseUrl), 'inspect still shows the base URL');
  });

  test('the constructor without a token throws a TypeError naming BROWSERAI_API_TOKEN', () => {
    for (const apiToken of ['', '   ', undefined as unknown as string]) {
      assert.throws(
        () => new BrowserAIClient({ apiToken, baseUrl: emu.baseUrl }),
        (err: unknown) => err instanceof TypeError && /BROWSERAI_API_TOKEN/.test(err.message),
      );
    }
  });
});

describe('requests on the wire', () => {
  test('sends authorization: apikey <token>, the user-agent with the package version, and JSON', async () => {
    const version = (JSON.parse(readFileSync(resolve(__dirname, '../../package.json'), 'utf8')) as { version: string })
      .version;
    const { server, baseUrl, seen } = await recordingServer();
    try {
      const c = new BrowserAIClient({ apiToken: TOKEN, baseUrl });
      await c.createTask(createBody());
      await c.getTask('exec_1');
      assert.equal(seen.length, 2);
      for (const request of seen) {
        assert.equal(request.headers.authorization, `apikey ${TOKEN}`);
        assert.equal(request.headers['user-agent'], `browserai-temporal/${version}`);
      }
      assert.equal(seen[0]!.method, 'POST');
      assert.equal(seen[0]!.url, '/api/v1/tasks');
      assert.match(String(seen[0]!.headers['content-type']), /^application\/json/);
      assert.equal(seen[1]!.url, '/api/v1/tasks/exec_1');
    } finally {
      await closeServer(server);
    }
  });

  test('maxRequestsPerSecond spaces requests out', async () => {
    const { server, baseUrl, seen } = await recordingServer();
    try {
      const perSecond = 10;
      const gapMs = 1000 / perSecond;
      const paced = new BrowserAIClient({ apiToken: TOKEN, baseUrl, maxRequestsPerSecond: perSecond });
      const calledAt = performance.now();
      await Promise.all(Array.from({ length: 5 }, (_, i) => paced.getTask(`exec_${i}`)));
      assert.equal(seen.length, 5);
      // Request i may leave no sooner than i gaps after the calls. (A lower bound only: a busy
      // machine can delay a request, and so bring two arrivals closer, but never make one early.)
      const arrivals = seen.map((s) => s.at).sort((a, b) => a - b);
      arrivals.forEach((at, i) => {
        assert.ok(
          at - calledAt >= i * gapMs - 5,
          `request ${i} arrived ${(at - calledAt).toFixed(1)} ms after the calls (pacing allows it at ${i * gapMs} ms)`,
        );
      });
    } finally {
      await closeServer(server);
    }
  });

  test('a request aborted while waiting for its pacing slot is never sent', async () => {
    const { server, baseUrl, seen } = await recordingServer();
    try {
      const paced = new BrowserAIClient({ apiToken: TOKEN, baseUrl, maxRequestsPerSecond: 2 });
      await paced.getTask('exec_first');
      const controller = new AbortController();
      const pending = paced.getTask('exec_second', { signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      const err = await expectError(pending, 'Aborted');
      assert.equal(err.mayHaveReachedServer, false);
      await sleep(600); // past the slot it would have had
      assert.deepEqual(
        seen.map((s) => s.url),
        ['/api/v1/tasks/exec_first'],
      );
    } finally {
      await closeServer(server);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Answers BrowserAI should never give, from a scripted server: every 2xx is checked per
// endpoint (src/browserai/answers.ts) and ends either as a typed value or as MalformedAnswer.

interface Reply {
  status?: number;
  body: string;
  /** Default application/json; null sends none. */
  contentType?: string | null;
}

/** A server that answers every request with `reply` (or what `reply(request)` returns) and records them. */
async function scriptedServer(reply: Reply | ((request: Captured) => Reply)) {
  const seen: Captured[] = [];
  const server = createServer((req, res) => {
    const captured = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, at: performance.now() };
    seen.push(captured);
    req.resume();
    req.on('end', () => {
      const {
        status = 200,
        body,
        contentType = 'application/json',
      } = typeof reply === 'function' ? reply(captured) : reply;
      const headers: Record<string, string | number> = { 'content-length': Buffer.byteLength(body) };
      if (contentType !== null) headers['content-type'] = contentType;
      res.writeHead(status, headers);
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const c = new BrowserAIClient({ apiToken: TOKEN, baseUrl: `http://127.0.0.1:${port}/api/v1` });
  return { client: c, seen, close: () => closeServer(server) };
}

const json = (value: unknown): Reply => ({ body: JSON.stringify(value) });

/** Runs `fn` against a server answering `reply`, and closes it after. */
async function withAnswer<T>(
  reply: Reply | ((request: Captured) => Reply),
  fn: (c: BrowserAIClient, seen: Captured[]) => Promise<T>,
): Promise<T> {
  const s = await scriptedServer(reply);
  try {
    return await fn(s.client, s.seen);
  } finally {
    await s.close();
  }
}

async function expectMalformed(
  promise: Promise<unknown>,
  method: string,
  path: string,
  message?: RegExp,
): Promise<BrowserAIError> {
  const err = await expectError(promise, 'MalformedAnswer');
  assert.equal(err.mayHaveReachedServer, true, 'a 2xx answer may mean BrowserAI acted');
  assert.equal(err.retryable, false);
  assert.equal(err.status, 200);
  assert.equal(err.method, method);
  assert.equal(err.path, path);
  assert.ok(err.message.startsWith(`BrowserAI ${method} ${path} answered 200 `), err.message);
  if (message) assert.match(err.message, message);
  return err;
}

const SECRET = 'password=hunter2';
const PROXY_SECRET = 'wss://brd-user:s3cr3t-pw@proxy.example:9222';

/** Nothing of the body's secret-looking content shows in the error, however it is looked at. */
function assertNoSecrets(err: BrowserAIError): void {
  for (const [label, text] of [
    ['message', err.message],
    ['stack', err.stack ?? ''],
    ['JSON', JSON.stringify(err)],
    ['inspect', inspect(err, { depth: Infinity, showHidden: true })],
  ] as const) {
    for (const secret of ['hunter2', 's3cr3t-pw', TOKEN])
      assert.ok(!text.includes(secret), `${label} shows "${secret}": ${text}`);
  }
}

describe('create answers (POST /tasks)', () => {
  test('{executionId} without status -> MalformedAnswer carrying the executionId, so the task can be stopped', async () => {
    const err = await withAnswer(json({ executionId: '65f1c0ffee0000000000abcd', note: SECRET }), (c) =>
      expectMalformed(c.createTask(createBody()), 'POST', '/tasks', /without a string "status"/),
    );
    assert.equal(err.executionId, '65f1c0ffee0000000000abcd');
    assert.match(err.message, /fields executionId, note/, 'names the fields present');
    assert.match(err.message, /65f1c0ffee0000000000abcd/, 'names the task that was created');
    assertNoSecrets(err);
  });

  test('{status: "queued"} without executionId -> MalformedAnswer without executionId', async () => {
    const err = await withAnswer(json({ status: 'queued' }), (c) =>
      expectMalformed(c.createTask(createBody()), 'POST', '/tasks', /"executionId"/),
    );
    assert.equal(err.executionId, undefined);
    assert.ok(!('executionId' in err) || err.executionId === undefined);
  });

  test('an executionId that is a number, holds a slash, says "undefined", or is too long -> MalformedAnswer without executionId', async () => {
    for (const executionId of [
      12345,
      'abc/def',
      '../tasks',
      'undefined',
      'null',
      '',
      'a'.repeat(129),
      'exec 1',
      { id: 'x' },
    ]) {
      const err = await withAnswer(json({ executionId, status: 'queued' }), (c) =>
        expectMalformed(c.createTask(createBody()), 'POST', '/tasks', /"executionId"/),
      );
      assert.equal(err.executionId, undefined, `executionId ${JSON.stringify(executionId)}`);
    }
  });

  test('a numeric or empty status -> MalformedAnswer with executionId', async () => {
    for (const status of [1, '', '   ', null, { value: 'queued' }, ['queued'], true]) {
      const err = await withAnswer(json({ executionId: 'exec_abc123', status }), (c) =>
        expectMalformed(c.createTask(createBody()), 'POST', '/tasks'),
      );
      assert.equal(err.executionId, 'exec_abc123', `status ${JSON.stringify(status)}`);
      assert.match(err.message, typeof status === 'string' ? /empty "status"/ : /without a string "status"/);
    }
  });

  test('a body that is a JSON string, array, number or null -> MalformedAnswer', async () => {
    for (const [body, described] of [
      ['"exec_abc123"', /a string of 11 characters instead of a JSON object/],
      ['[{"executionId":"exec_abc123","status":"queued"}]', /an array of 1 item instead of a JSON object/],
      ['42', /a number/],
      ['null', /null instead of a JSON object/],
    ] as const) {
      const err = await withAnswer({ body }, (c) =>
        expectMalformed(c.createTask(createBody()), 'POST', '/tasks', described),
      );
      assert.equal(err.executionId, undefined);
    }
  });

  test('a real-looking answer without started/estimatedCompletion passes; optional fields of the wrong type are dropped', async () => {
    const answer = await withAnswer(
      json({
        executionId: '65f1c0ffee0000000000abcd',
        scriptType: 'crawler_automation',
        status: 'queued',
        geoLocation: { country: 'us' },
      }),
      (c) => c.createTask(createBody()),
    );
    assert.deepEqual(answer, {
      executionId: '65f1c0ffee0000000000abcd',
      scriptType: 'crawler_automation',
      status: 'queued',
      geoLocation: { country: 'us' },
    });
    const odd = await withAnswer(
      json({
        executionId: 'exec_1',
        status: 'queued',
        started: 17,
        estimatedCompletion: { at: 1 },
        scriptType: 3,
        geoLocation: 'US',
        extra: 'kept',
      }),
      (c) => c.createTask(createBody()),
    );
    assert.deepEqual(odd, { executionId: 'exec_1', status: 'queued', extra: 'kept' });
    const nulls = await withAnswer(
      json({ executionId: 'exec_1', status: 'queued', started: null, estimatedCompletion: null }),
      (c) => c.createTask(createBody()),
    );
    assert.equal(nulls.started, null);
    assert.equal(nulls.estimatedCompletion, null);
  });
});

describe('instruction answers (POST and PUT /tasks/{id}/instructions)', () => {
  test('{message: "ok"} is accepted: status null, executionId the one sent', async () => {
    await withAnswer(json({ message: 'ok' }), async (c, seen) => {
      const appended = await c.appendInstructions('exec_abc', { instructions: [{ action: 'Type 123456' }] });
      assert.equal(appended.status, null);
      assert.equal(appended.executionId, 'exec_abc');
      assert.equal(appended.message, 'ok');
      const replaced = await c.replaceInstructions('exec_abc', { instructions: [{ action: 'Only this' }] });
      assert.equal(replaced.status, null);
      assert.equal(replaced.executionId, 'exec_abc');
      assert.deepEqual(
        seen.map((s) => `${s.method} ${s.url}`),
        ['POST /api/v1/tasks/exec_abc/instructions', 'PUT /api/v1/tasks/exec_abc/instructions'],
      );
    });
  });

  test('a status that is not a non-empty string becomes null; an unusable executionId becomes the one sent', async () => {
    for (const status of [7, '', null, { s: 1 }]) {
      const answer = await withAnswer(json({ executionId: 'undefined', status }), (c) =>
        c.appendInstructions('exec_abc', { instructions: [{ action: 'x' }] }),
      );
      assert.equal(answer.status, null);
      assert.equal(answer.executionId, 'exec_abc');
    }
    const ok = await withAnswer(json({ executionId: 'exec_abc', status: 'running' }), (c) =>
      c.replaceInstructions('exec_abc', { instructions: [{ action: 'x' }] }),
    );
    assert.equal(ok.status, 'running');
  });

  test('a body that is not a JSON object -> MalformedAnswer', async () => {
    for (const body of ['[]', '"accepted"', 'null', 'true']) {
      await withAnswer({ body }, async (c) => {
        await expectMalformed(
          c.appendInstructions('exec_abc', { instructions: [{ action: 'x' }] }),
          'POST',
          '/tasks/exec_abc/instructions',
          /instead of a JSON object/,
        );
        await expectMalformed(
          c.replaceInstructions('exec_abc', { instructions: [{ action: 'x' }] }),
          'PUT',
          '/tasks/exec_abc/instructions',
          /instead of a JSON object/,
        );
      });
    }
  });
});

describe('task answers (GET /tasks/{id})', () => {
  test('without a status, or a status that is not a non-empty string -> MalformedAnswer', async () => {
    for (const answer of [
      { executionId: 'exec_1' },
      { executionId: 'exec_1', status: 3 },
      { executionId: 'exec_1', status: '' },
      { status: ['finalized'] },
    ]) {
      await withAnswer(json(answer), (c) => expectMalformed(c.getTask('exec_1'), 'GET', '/tasks/exec_1', /"status"/));
    }
    await withAnswer(json(['finalized']), (c) =>
      expectMalformed(c.getTask('exec_1'), 'GET', '/tasks/exec_1', /an array of 1 item/),
    );
  });

  test('error as an object becomes its message, or its JSON when it has none; not truncated', async () => {
    const long = 'E'.repeat(10_000);
    const cases: Array<[unknown, unknown]> = [
      [{ code: 2001, type: 'engine', message: 'Browser crashed' }, 'Browser crashed'],
      [{ code: 2001, type: 'engine' }, '{"code":2001,"type":"engine"}'],
      [{ code: 1, message: 42 }, '{"code":1,"message":42}'],
      ['Navigation timeout', 'Navigation timeout'],
      [long, long],
      [{ message: long }, long],
      [null, null],
      [404, '404'],
    ];
    for (const [error, expected] of cases) {
      const meta = await withAnswer(json({ executionId: 'exec_1', status: 'failed', error }), (c) =>
        c.getTask('exec_1'),
      );
      assert.equal(meta.error, expected);
    }
    const none = await withAnswer(json({ executionId: 'exec_1', status: 'failed' }), (c) => c.getTask('exec_1'));
    assert.ok(!('error' in none));
  });

  test('progress that is not an object is absent; logs keep only strings; logs that are not an array are []', async () => {
    for (const progress of ['running', 5, null, ['a']]) {
      const meta = await withAnswer(json({ status: 'running', progress }), (c) => c.getTask('exec_1'));
      assert.equal(meta.progress, undefined, `progress ${JSON.stringify(progress)}`);
    }
    const mixed = await withAnswer(
      json({ status: 'running', progress: { status: 'step 2', logs: ['one', 2, null, { l: 1 }, 'two'] } }),
      (c) => c.getTask('exec_1'),
    );
    assert.deepEqual(mixed.progress, { status: 'step 2', logs: ['one', 'two'] });
    const notArray = await withAnswer(json({ status: 'running', progress: { status: 9, logs: 'one line' } }), (c) =>
      c.getTask('exec_1'),
    );
    assert.deepEqual(notArray.progress, { logs: [] });
  });

  test('a real finished answer (no progress, started, estimate) passes; missing executionId is the one asked for', async () => {
    const meta = await withAnswer(
      json({
        scriptType: 'crawler_automation',
        status: 'finalized',
        geoLocation: { country: 'us' },
        result: { title: 'Example' },
      }),
      (c) => c.getTask('65f1c0ffee0000000000abcd'),
    );
    assert.deepEqual(meta, {
      executionId: '65f1c0ffee0000000000abcd',
      scriptType: 'crawler_automation',
      status: 'finalized',
      geoLocation: { country: 'us' },
      result: { title: 'Example' },
    });
  });

  test('a 3 MB progress log line is masked, then cut to 4 KiB with a mark giving its length', async () => {
    // Masked first: a cut must not leave half a credential that the masker no longer recognises.
    const big = `${PROXY_SECRET} `.concat('x'.repeat(3 * 1024 * 1024));
    const meta = await withAnswer(
      json({ executionId: 'exec_1', status: 'running', progress: { status: 'running', logs: ['start', big] } }),
      (c) => c.getTask('exec_1'),
    );
    assert.equal(meta.progress!.logs!.length, 2);
    const masked = big.replace(PROXY_SECRET, 'wss://•••@proxy.example:9222');
    assert.equal(
      meta.progress!.logs![1],
      `${masked.slice(0, 4 * 1024)}…[cut by browserai-temporal: ${masked.length} characters in all]`,
    );
  });

  test('a status of 3,000 characters, a 1 MB progress.status, a 1 MB error and a result nested 20,000 levels deep are bounded', async () => {
    const nested = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
    const body = `{"executionId":"exec_1","status":"${'r'.repeat(3_000)}","progress":{"status":"${'p'.repeat(1 << 20)}"},"error":"${'e'.repeat(1 << 20)}","result":${nested}}`;
    const meta = await withAnswer({ body }, (c) => c.getTask('exec_1'));
    assert.equal(meta.status, `${'r'.repeat(256)}…[cut by browserai-temporal: 3000 characters in all]`);
    assert.equal(
      meta.progress!.status!.length,
      4 * 1024 + '…[cut by browserai-temporal: 1048576 characters in all]'.length,
    );
    assert.match(meta.error!, /^e{16384}…\[cut by browserai-temporal: 1048576 characters in all\]$/);
    const text = JSON.stringify(meta.result);
    assert.match(text, /"\[cut by browserai-temporal: nested deeper than 64 levels\]"/);
    assert.equal(text.split('{"a":').length - 1, 63, 'the first 64 levels are kept');
  });
});

describe('results answers (GET /results/{id})', () => {
  test('results missing or not an array -> []; entries that are not objects are dropped', async () => {
    for (const results of [undefined, 'none', 3, { 0: {} }, null]) {
      const answer = await withAnswer(json({ executionId: 'exec_1', status: 'finalized', results }), (c) =>
        c.getResults('exec_1'),
      );
      assert.deepEqual(answer.results, [], `results ${JSON.stringify(results)}`);
    }
    const mixed = await withAnswer(
      json({
        executionId: 'exec_1',
        status: 'finalized',
        results: [{ result: 'a' }, 'b', null, 3, [{ result: 'c' }], { result: 'd' }],
      }),
      (c) => c.getResults('exec_1'),
    );
    assert.deepEqual(mixed.results, [{ result: 'a' }, { result: 'd' }]);
  });

  test('a status that is not a non-empty string is null; a missing executionId is the one asked for', async () => {
    const answer = await withAnswer(json({ results: [] }), (c) => c.getResults('exec_9'));
    assert.equal(answer.status, null);
    assert.equal(answer.executionId, 'exec_9');
  });

  test('a body that is not a JSON object -> MalformedAnswer', async () => {
    await withAnswer({ body: '[{"result":"a"}]' }, (c) =>
      expectMalformed(c.getResults('exec_1'), 'GET', '/results/exec_1', /an array of 1 item instead of a JSON object/),
    );
  });
});

describe('stop answers (POST /tasks/{id}/command)', () => {
  test('any JSON object or JSON string is fine', async () => {
    const real = await withAnswer(json({ message: 'Task stopped successfully' }), (c) => c.stopTask('exec_1'));
    assert.deepEqual(real, { message: 'Task stopped successfully' });
    const bare = await withAnswer(json({}), (c) => c.stopTask('exec_1'));
    assert.deepEqual(bare, {});
    const odd = await withAnswer(json({ message: 5, ok: true }), (c) => c.stopTask('exec_1'));
    assert.deepEqual(odd, { ok: true });
    const text = await withAnswer(json('stopped'), (c) => c.stopTask('exec_1'));
    assert.deepEqual(text, { message: 'stopped' });
  });

  test('an array, a number, an HTML page or an empty body -> MalformedAnswer', async () => {
    for (const reply of [
      { body: '[]' },
      { body: '1' },
      { body: `<html>${SECRET}</html>`, contentType: 'text/html' },
      { body: '' },
    ]) {
      const err = await withAnswer(reply, (c) =>
        expectMalformed(c.stopTask('exec_1'), 'POST', '/tasks/exec_1/command'),
      );
      assertNoSecrets(err);
    }
  });
});

describe('saved-task answers', () => {
  test('POST /saved_tasks needs an object with a string taskId', async () => {
    const request = {
      name: 'n',
      instructions: [{ action: 'a' }],
      type: 'natural_language' as const,
      project: 'p',
      geoLocation: { country: 'US' },
      cron_settings: '',
    };
    const ok = await withAnswer(json({ taskId: 'st_1', message: 'Saved task created successfully' }), (c) =>
      c.createSavedTask(request),
    );
    assert.deepEqual(ok, { taskId: 'st_1', message: 'Saved task created successfully' });
    for (const answer of [{ message: 'Saved task created successfully' }, { taskId: 7 }, { taskId: '' }, 'st_1', []]) {
      await withAnswer(json(answer), (c) => expectMalformed(c.createSavedTask(request), 'POST', '/saved_tasks'));
    }
  });

  test('GET /saved_tasks/name/{name} needs an object; instructions that are not an array become []', async () => {
    await withAnswer(json(['saved']), (c) =>
      expectMalformed(c.getSavedTask('daily'), 'GET', '/saved_tasks/name/daily', /instead of a JSON object/),
    );
    const saved = await withAnswer(json({ taskId: 'st_1', name: 'daily', instructions: 'open it' }), (c) =>
      c.getSavedTask('daily'),
    );
    assert.deepEqual(saved.instructions, []);
    const mixed = await withAnswer(json({ taskId: 'st_1', name: 'daily', instructions: [{ action: 'a' }, 'b'] }), (c) =>
      c.getSavedTask('daily'),
    );
    assert.deepEqual(mixed.instructions, [{ action: 'a' }]);
  });

  test('GET /saved_tasks stays lenient about JSON, but a non-JSON body is MalformedAnswer', async () => {
    assert.deepEqual(await withAnswer(json({ items: [{ name: 'a' }] }), (c) => c.listSavedTasks()), [{ name: 'a' }]);
    assert.deepEqual(await withAnswer(json({ message: 'none' }), (c) => c.listSavedTasks()), []);
    assert.deepEqual(await withAnswer(json('none'), (c) => c.listSavedTasks()), []);
    await withAnswer({ body: '<html></html>', contentType: 'text/html' }, (c) =>
      expectMalformed(c.listSavedTasks(), 'GET', '/saved_tasks', /not JSON/),
    );
  });
});

describe('2xx bodies that are not JSON', () => {
  const calls: Array<[string, string, (c: BrowserAIClient) => Promise<unknown>]> = [
    ['POST', '/tasks', (c) => c.createTask(createBody())],
    ['POST', '/tasks/exec_1/instructions', (c) => c.appendInstructions('exec_1', { instructions: [{ action: 'x' }] })],
    ['PUT', '/tasks/exec_1/instructions', (c) => c.replaceInstructions('exec_1', { instructions: [{ action: 'x' }] })],
    ['POST', '/tasks/exec_1/command', (c) => c.stopTask('exec_1')],
    ['GET', '/tasks/exec_1', (c) => c.getTask('exec_1')],
    ['GET', '/results/exec_1', (c) => c.getResults('exec_1')],
    [
      'POST',
      '/saved_tasks',
      (c) =>
        c.createSavedTask({
          name: 'n',
          instructions: [{ action: 'a' }],
          type: 'natural_language',
          project: 'p',
          geoLocation: { country: 'US' },
          cron_settings: '',
        }),
    ],
    ['GET', '/saved_tasks/name/n', (c) => c.getSavedTask('n')],
  ];

  test('an HTML page served with 200 -> MalformedAnswer on every endpoint, without the page in the error', async () => {
    const page = `<!doctype html><html><body>Sign in to the proxy. ${SECRET} ${PROXY_SECRET}</body></html>`;
    await withAnswer({ body: page, contentType: 'text/html; charset=utf-8' }, async (c) => {
      for (const [method, path, call] of calls) {
        const err = await expectMalformed(
          call(c),
          method,
          path,
          /with a body that is not JSON \(text\/html, \d+ characters\)/,
        );
        assert.equal(err.executionId, undefined);
        assert.ok(!err.message.includes('<html'), err.message);
        assertNoSecrets(err);
      }
    });
  });

  test('"not json" with content-type application/json -> MalformedAnswer', async () => {
    await withAnswer({ body: `not json ${SECRET}` }, async (c) => {
      for (const [method, path, call] of calls) {
        const err = await expectMalformed(call(c), method, path, /not JSON \(application\/json, /);
        assertNoSecrets(err);
      }
    });
  });

  test('an empty 200 body (with or without content-type) -> MalformedAnswer', async () => {
    for (const contentType of ['application/json', null]) {
      await withAnswer({ body: '', contentType }, async (c) => {
        for (const [method, path, call] of calls) await expectMalformed(call(c), method, path, /with an empty body/);
      });
    }
  });

  test('a 204 without a body -> MalformedAnswer, not another kind of error', async () => {
    await withAnswer({ status: 204, body: '', contentType: null }, async (c) => {
      const err = await expectError(c.getTask('exec_1'), 'MalformedAnswer');
      assert.equal(err.status, 204);
    });
  });

  test('truncated JSON -> MalformedAnswer', async () => {
    await withAnswer({ body: `{"executionId":"exec_1","status":"queued","note":"${SECRET}` }, async (c) => {
      const err = await expectMalformed(c.createTask(createBody()), 'POST', '/tasks', /not JSON/);
      assertNoSecrets(err);
    });
  });

  test('secret-looking field values and field names never reach the error', async () => {
    const body = { executionId: 'exec_1', [`${SECRET}`]: 1, [`x-${PROXY_SECRET}`]: 2, log: PROXY_SECRET, status: 0 };
    const err = await withAnswer(json(body), (c) => expectMalformed(c.createTask(createBody()), 'POST', '/tasks'));
    assert.match(err.message, /fields executionId, log, status and 2 other fields/);
    assertNoSecrets(err);
    const html = await withAnswer(
      { status: 200, body: `<html>${SECRET}</html>`, contentType: `text/html; ${SECRET}` },
      (c) => expectMalformed(c.getTask('exec_1'), 'GET', '/tasks/exec_1'),
    );
    assertNoSecrets(html);
  });

  test('error answers that are not JSON keep working as before', async () => {
    const err = await withAnswer({ status: 404, body: 'Task not found', contentType: 'text/plain' }, (c) =>
      expectError(c.getTask('exec_1'), 'TaskNotFound'),
    );
    assert.equal(err.apiMessage, 'Task not found');
    const json500 = await withAnswer({ status: 500, body: JSON.stringify({ error: 'Internal server error' }) }, (c) =>
      expectError(c.getTask('exec_1'), 'ServerError'),
    );
    assert.equal(json500.apiMessage, 'Internal server error');
  });

  test('a 3 MB error body becomes a message of 2 KiB with a mark giving its length, in apiMessage and the message', async () => {
    const text = 'Upstream failure. '.repeat(175_000).trim();
    for (const body of [JSON.stringify({ error: text }), text]) {
      const err = await withAnswer({ status: 500, body, contentType: null }, (c) =>
        expectError(c.getTask('exec_1'), 'ServerError'),
      );
      assert.equal(
        err.apiMessage,
        `${text.slice(0, 2048)}…[cut by browserai-temporal: ${text.length} characters in all]`,
      );
      assert.ok(err.message.length < 3 * 1024, `a message of ${err.message.length} characters`);
    }
  });
});

describe('unusable IDs are refused before anything is sent', () => {
  const bad = [
    '',
    '   ',
    'undefined',
    'null',
    'NULL',
    'a/b',
    '/',
    '..',
    '.',
    'a..b',
    '../saved_tasks',
    '\ud800',
    undefined as unknown as string,
    null as unknown as string,
    42 as unknown as string,
  ];

  test('appendInstructions, replaceInstructions, stopTask, getTask and getResults -> InvalidInput, never sent', async () => {
    await withAnswer(json({ executionId: 'exec_1', status: 'running' }), async (c, seen) => {
      for (const id of bad) {
        for (const call of [
          () => c.appendInstructions(id, { instructions: [{ action: 'x' }] }),
          () => c.replaceInstructions(id, { instructions: [{ action: 'x' }] }),
          () => c.stopTask(id),
          () => c.getTask(id),
          () => c.getResults(id),
        ]) {
          const err = await expectError(call(), 'InvalidInput');
          assert.equal(err.mayHaveReachedServer, false);
          assert.equal(err.status, undefined);
          assert.match(err.message, /was not sent: .* is not a usable execution ID/);
        }
      }
      assert.equal(seen.length, 0, `sent: ${seen.map((s) => s.url).join(', ')}`);
      // Good IDs still go through, encoded.
      await c.getTask('65f1c0ffee0000000000abcd');
      await c.getTask('exec_1 with space');
      assert.deepEqual(
        seen.map((s) => s.url),
        ['/api/v1/tasks/65f1c0ffee0000000000abcd', '/api/v1/tasks/exec_1%20with%20space'],
      );
    });
  });

  test('getSavedTask with ".", "..", an empty or blank name -> InvalidInput, never sent; slashes and dots inside a name are fine', async () => {
    await withAnswer(json({ taskId: 'st_1', name: 'x', instructions: [] }), async (c, seen) => {
      for (const name of ['.', '..', '', '  ', '\udfff', undefined as unknown as string]) {
        const err = await expectError(c.getSavedTask(name), 'InvalidInput');
        assert.equal(err.mayHaveReachedServer, false);
        assert.match(err.message, /saved task name/);
      }
      assert.equal(seen.length, 0);
      await c.getSavedTask('a/../b');
      await c.getSavedTask('v1.2');
      assert.deepEqual(
        seen.map((s) => s.url),
        ['/api/v1/saved_tasks/name/a%2F..%2Fb', '/api/v1/saved_tasks/name/v1.2'],
      );
    });
  });
});
