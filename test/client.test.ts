// BrowserAIClient against the emulator over real HTTP: typed answers of every endpoint, typed
// errors for every way a call can end, the headers it sends, the token kept out of every error,
// and request pacing.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { inspect } from 'node:util';
import { BrowserAIEmulator } from '../src/emulator';
import { BrowserAIClient, BrowserAIError, type BrowserAIErrorKind } from '../src/browserai';
import type { CreateTaskRequest } from '../src/browserai/types';

const TOKEN = 'tok-SECRET-7f3a9c1e-do-not-leak';
const WRONG_TOKEN = 'tok-WRONG-55aa0033-also-secret';

let emu: BrowserAIEmulator;
let client: BrowserAIClient;

before(async () => {
  emu = await BrowserAIEmulator.start({ defaultDurationMs: 300, queueMs: 50, apiToken: TOKEN });
  client = new BrowserAIClient({ apiToken: emu.apiToken, baseUrl: emu.baseUrl });
});

after(async () => {
  await emu.close();
});

function createBody(action = 'Open example.com and read the title', extra: Partial<CreateTaskRequest> = {}): CreateTaskRequest {
  return { instructions: [{ action }], geoLocation: { country: 'US' }, project: 'default', type: 'crawler_automation', ...extra };
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
    assert.match(answer.executionId, /^exec_[0-9a-f]+$/);
    assert.equal(answer.status, 'queued');
    assert.equal(answer.scriptType, 'crawler_automation');
    assert.deepEqual(answer.geoLocation, { country: 'US' });
    assert.equal(typeof answer.started, 'string');
    assert.ok(!Number.isNaN(Date.parse(answer.started!)));
    assert.ok(Date.parse(answer.estimatedCompletion!) > Date.parse(answer.started!));
    assert.ok(emu.task(answer.executionId), 'the emulator knows the created task');
  });

  test('getTask returns the task metadata', async () => {
    const { executionId } = await client.createTask(createBody());
    const meta = await client.getTask(executionId);
    assert.equal(meta.executionId, executionId);
    assert.match(meta.scriptId!, /^script_/);
    assert.equal(meta.scriptType, 'crawler_automation');
    assert.equal(typeof meta.status, 'string');
    assert.ok(Array.isArray(meta.progress?.logs));
    assert.ok(meta.progress!.logs!.includes('Task queued'));
    assert.equal(typeof meta.started, 'string');
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
    assert.deepEqual(emu.task(executionId)!.instructions.map((i) => i.action), ['First', 'Second']);

    const replaced = await client.replaceInstructions(executionId, { instructions: [{ action: 'Only this' }] });
    assert.equal(replaced.executionId, executionId);
    assert.deepEqual(emu.task(executionId)!.instructions.map((i) => i.action), ['Only this']);
    assert.equal(emu.count('POST', new RegExp(`^/tasks/${executionId}/instructions$`)), 1);
    assert.equal(emu.count('PUT', new RegExp(`^/tasks/${executionId}/instructions$`)), 1);
  });

  test('stopTask stops the task and answers a message', async () => {
    const { executionId } = await client.createTask(createBody('[duration=30s] long task'));
    const answer = await client.stopTask(executionId);
    assert.equal(answer.message, 'Task stopped');
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
    assert.match(created.taskId, /^st_/);

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

  test('stopping a task twice -> Conflict (409)', async () => {
    const { executionId } = await client.createTask(createBody('[duration=30s] long task'));
    await client.stopTask(executionId);
    const err = await expectError(client.stopTask(executionId), 'Conflict');
    assert.equal(err.status, 409);
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
    const version = (JSON.parse(readFileSync(resolve(__dirname, '../../package.json'), 'utf8')) as { version: string }).version;
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
      await Promise.all(Array.from({ length: 5 }, (_, i) => paced.getTask(`exec_${i}`)));
      assert.equal(seen.length, 5);
      const arrivals = seen.map((s) => s.at).sort((a, b) => a - b);
      for (let i = 1; i < arrivals.length; i++) {
        const gap = arrivals[i]! - arrivals[i - 1]!;
        assert.ok(gap >= gapMs - 15, `request ${i} arrived ${gap.toFixed(1)} ms after the previous one (spacing ${gapMs} ms)`);
      }
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
