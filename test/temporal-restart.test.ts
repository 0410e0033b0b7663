// Temporal itself goes away: the dev server (on a database file) is killed and restarted on it.
// The real worker entry point runs in a child process and must find the server by itself, also
// when it starts while the server is down. `npm run chaos` does the same at scale, with a pause.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { RestartableDevServer } from '../dev/dev-server';
import { WorkerChild, workerEnvironment } from '../dev/worker-child';
import { BrowserAIEmulator, emulatorOptionsFromEnv } from '../src/emulator';
import { BrowserTasks } from '../src/starters/tasks';
import { eventually, taskInput } from './helpers/stack';

let server: RestartableDevServer;
let emulator: BrowserAIEmulator;
const workers: WorkerChild[] = [];

before(async () => {
  // One after the other: a server that fails to start must not leave the emulator unassigned and
  // listening, which kept this file's process (and CI) waiting forever instead of failing.
  emulator = await BrowserAIEmulator.start({
    defaultDurationMs: 800,
    queueMs: 100,
    ...emulatorOptionsFromEnv(process.env),
  });
  server = await RestartableDevServer.start();
});
after(async () => {
  await Promise.all(workers.map((worker) => worker.signal('SIGKILL', 5_000)));
  await emulator?.close();
  await server?.stop();
});

test('a worker started while Temporal is down waits for it, connects once it is back and runs tasks', async () => {
  await server.kill();
  const taskQueue = 'started-while-down';
  const worker = new WorkerChild(
    workerEnvironment({
      temporalAddress: server.address,
      taskQueue,
      browserAIBaseUrl: emulator.baseUrl,
      browserAIToken: emulator.apiToken,
    }),
  );
  workers.push(worker);
  await eventually(
    'the worker saying it cannot reach Temporal, or exiting',
    () => worker.hasExited || worker.outputTail.some((line) => line.includes('cannot be reached')),
    60_000,
  );
  assert.equal(worker.hasExited, false, `the worker exited: ${worker.outputTail.slice(-5).join('\n')}`);
  await server.restart();
  assert.equal(await worker.ready, true, 'the worker polls once the server is back');
  const connection = await Connection.connect({ address: server.address });
  try {
    const tasks = new BrowserTasks(new Client({ connection }), taskQueue);
    const result = await tasks.run(taskInput());
    assert.equal(result.status, 'finalized');
  } finally {
    await connection.close();
  }
});

test('a worker waiting for Temporal ends on SIGTERM, with nothing to drain', async () => {
  await server.kill();
  try {
    const worker = new WorkerChild(
      workerEnvironment({
        temporalAddress: server.address,
        taskQueue: 'stopped-while-waiting',
        browserAIBaseUrl: emulator.baseUrl,
        browserAIToken: emulator.apiToken,
      }),
    );
    workers.push(worker);
    // A process start takes seconds on a busy machine: the bound is generous, the wait ends as soon as it says so.
    await eventually(
      'the worker waiting for Temporal',
      () => worker.outputTail.some((line) => line.includes('cannot be reached')),
      60_000,
    );
    // The SDK's Runtime holds SIGTERM: without the worker's own handling it would wait on forever.
    assert.equal(await worker.signal('SIGTERM', 30_000), 'exited');
    assert.deepEqual(worker.exit, { code: 0, signal: null });
  } finally {
    await server.restart();
  }
});
