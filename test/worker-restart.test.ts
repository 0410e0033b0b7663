// A worker dies (SIGKILL) or is shut down (SIGTERM) in the middle of a task. The real worker
// entry point runs in a child process; another one takes over. The task is created once,
// no stop is sent, and the workflow completes.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { BrowserAIEmulator } from '../src/emulator';
import { BrowserTasks } from '../src/client/tasks';
import { eventually, startTemporal, taskInput } from './helpers/stack';

let env: TestWorkflowEnvironment;
let emulator: BrowserAIEmulator;
const children = new Set<ChildProcess>();

before(async () => {
  [env, emulator] = await Promise.all([startTemporal(), BrowserAIEmulator.start({ queueMs: 100 })]);
});
after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await emulator?.close();
  await env?.teardown();
});

async function startWorkerProcess(taskQueue: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [require.resolve('../src/worker')], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      BROWSERAI_BASE_URL: emulator.baseUrl,
      BROWSERAI_API_TOKEN: emulator.apiToken,
      WORKER_SHUTDOWN_GRACE_MS: '1000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (output.includes('browserai-temporal worker: task queue')) resolve();
    });
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`worker exited early (${code}): ${output}`)));
  });
  await ready;
  return child;
}

for (const [signal, what] of [
  ['SIGKILL', 'killed'],
  ['SIGTERM', 'shut down gracefully'],
] as const) {
  test(`a worker ${what} mid-task: another worker finishes it with one create and no stop`, async () => {
    const taskQueue = `restart-${randomUUID()}`;
    const tasks = new BrowserTasks(env.client, taskQueue);
    const first = await startWorkerProcess(taskQueue);
    const handle = await tasks.start(
      taskInput({
        instructions: [{ action: 'Slow crawl [duration=6s]' }],
        polling: { initialIntervalMs: 200, maxIntervalMs: 1_000, heartbeatTimeoutMs: 2_000 },
      }),
    );
    const executionId = await eventually('polling started', () => {
      const poll = emulator.requests.find((r) => r.method === 'GET' && /^\/tasks\/[^/]+$/.test(r.path));
      return poll?.path.split('/')[2];
    });
    first.kill(signal);
    await once(first, 'exit');
    await startWorkerProcess(taskQueue);
    const result = await handle.result();
    assert.equal(result.status, 'finalized');
    assert.equal(result.executionId, executionId);
    assert.equal(emulator.count('POST', /^\/tasks$/), 1, 'one create');
    assert.equal(emulator.count('POST', new RegExp(`^/tasks/${executionId}/command$`)), 0, 'no stop');
    emulator.resetRequests();
  });
}
