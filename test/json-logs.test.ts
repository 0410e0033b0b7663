// WORKER_LOG_FORMAT=json: a full run's output is JSON lines with no secret in any of them. The
// real worker entry point, in a child process at TRACE (where the SDK and the core write whole
// activations, activity tasks and history events, payloads included), runs a one-time-code task (two codes, one
// per task: each signalled, each typed), a plain task whose engine logs carry the proxy password
// (the emulator's observed mode) and whose one poll fails with an error quoting the URL and the
// API token, a task BrowserAI fails, and a cancelled one. Then every line the worker wrote, on
// stdout and stderr, is searched for the token, the codes and the proxy passwords in every
// spelling (helpers/secrets.ts), and every stdout line must be a JSON object with time, level
// and message.
//
// So it cannot pass for want of looking: the emulator got the codes and gave the passwords, the
// failing poll happened, and the output has TRACE and DEBUG lines, lines naming each workflow,
// the core's forwarded lines, activity lines with their attributes, and an error written as
// {name, message, stack}.
import assert from 'node:assert/strict';
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { BrowserTasks } from '../src/starters/tasks';
import { BrowserAIEmulator } from '../src/emulator';
import { stateQuery } from '../src/contract/messages';
import { leaks, rawTaskAnswer, startWorkerProcess, type WorkerProcess } from './helpers/secrets';
import { eventually, startTemporal, taskInput } from './helpers/stack';

const TOKEN = `tok-${randomBytes(12).toString('hex')}`;
/** Eight digits (the emulator takes 4 to 8 as a code): long enough not to turn up by chance among the numbers of a log. */
const CODES = [String(randomInt(10_000_000, 100_000_000)), String(randomInt(10_000_000, 100_000_000))];
const POLLING = { initialIntervalMs: 250, maxIntervalMs: 1_000, heartbeatTimeoutMs: 3_000 };

let env: TestWorkflowEnvironment;
let emulator: BrowserAIEmulator;
let worker: WorkerProcess | undefined;

before(async () => {
  [env, emulator] = await Promise.all([startTemporal(), BrowserAIEmulator.start({ apiToken: TOKEN, queueMs: 100 })]);
});
after(async () => {
  worker?.kill();
  await emulator?.close();
  await env?.teardown();
});

interface Line {
  time: string;
  level: string;
  message: string;
  [attribute: string]: unknown;
}

test(
  'WORKER_LOG_FORMAT=json: every line is JSON, and none holds the token, a code or a proxy password',
  { timeout: 240_000 },
  async (t) => {
    const taskQueue = `json-logs-${randomUUID()}`;
    worker = await startWorkerProcess({
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_NAMESPACE: env.namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      BROWSERAI_BASE_URL: emulator.baseUrl,
      BROWSERAI_API_TOKEN: TOKEN,
      WORKER_SHUTDOWN_GRACE_MS: '1000',
      WORKER_LOG_FORMAT: 'json',
      WORKER_LOG_LEVEL: 'TRACE',
    });
    const tasks = new BrowserTasks(env.client, taskQueue);

    const plain = await tasks.start(
      taskInput({ instructions: [{ action: 'Read the catalogue [duration=4s]' }], polling: POLLING }),
    );
    const otps = await Promise.all(
      CODES.map(() =>
        tasks.start(
          taskInput({
            instructions: [{ action: 'Log in to the portal [needs-code] [duration=2s]' }],
            polling: POLLING,
          }),
        ),
      ),
    );
    const failing = await tasks.start(
      taskInput({ instructions: [{ action: 'Open a page that does not exist [fail]' }], polling: POLLING }),
    );
    const cancelled = await tasks.start(
      taskInput({ instructions: [{ action: 'Crawl everything [duration=60s]' }], polling: POLLING }),
    );
    const handles = [plain, ...otps, failing, cancelled];

    /** Per task, a running answer straight from the emulator that carries its proxy URL in clear. */
    const rawAnswers = new Map<string, string>();
    const runningWithPassword = (handle: (typeof handles)[number]) =>
      eventually(`${handle.workflowId} runs, its engine logging the proxy URL`, async () => {
        const { executionId } = await handle.query(stateQuery);
        const secrets = executionId && emulator.taskSecrets(executionId);
        if (!secrets) return undefined;
        const answer = await rawTaskAnswer(emulator, executionId);
        if (!answer.includes(secrets.connectionUrl)) return undefined;
        rawAnswers.set(executionId, answer);
        return executionId;
      });

    // One poll of the plain task fails, BrowserAI's error quoting the proxy URL and the token.
    const plainExecution = await runningWithPassword(plain);
    emulator.inject({
      method: 'GET',
      path: new RegExp(`^/tasks/${plainExecution}$`),
      status: 500,
      error: `Engine lost ${emulator.taskSecrets(plainExecution)!.connectionUrl} (key ${TOKEN})`,
    });
    // Each one-time-code task gets its code once it waits for one.
    await Promise.all(
      otps.map(async (handle, i) => {
        await runningWithPassword(handle);
        await eventually(
          'awaiting a code',
          async () => (await handle.query(stateQuery)).awaitingInput || undefined,
          60_000,
        );
        await tasks.submitCode(handle.workflowId, CODES[i]!);
      }),
    );
    await runningWithPassword(cancelled);
    await tasks.cancel(cancelled.workflowId);

    for (const handle of [plain, ...otps]) assert.equal((await handle.result()).status, 'finalized');
    for (const handle of [failing, cancelled]) await assert.rejects(handle.result(), WorkflowFailedError);
    const executionIds = await Promise.all(
      handles.map(async (handle) => (await handle.query(stateQuery)).executionId!),
    );
    await worker.stop();
    const { stdout, stderr } = worker;
    worker = undefined;

    // Every line on stdout is a JSON object with time, level and message; stderr has none of ours.
    const lines: Line[] = [];
    const rawLines = stdout.split('\n').filter((line) => line.trim() !== '');
    for (const raw of rawLines) {
      let line: Line;
      try {
        line = JSON.parse(raw) as Line;
      } catch {
        assert.fail(`not a JSON line: ${raw.slice(0, 500)}`);
      }
      assert.ok(
        line !== null && typeof line === 'object' && !Array.isArray(line),
        `not an object: ${raw.slice(0, 500)}`,
      );
      assert.ok(
        !Number.isNaN(Date.parse(line.time)) && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(line.time),
        `time is ISO-8601: ${raw.slice(0, 300)}`,
      );
      assert.ok(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'].includes(line.level), `level: ${raw.slice(0, 300)}`);
      assert.equal(typeof line.message, 'string', `message: ${raw.slice(0, 300)}`);
      assert.deepEqual(
        Object.keys(line).slice(0, 3),
        ['time', 'level', 'message'],
        'time, level and message come first',
      );
      assert.ok(!raw.includes('[object Object]'), `no [object Object]: ${raw.slice(0, 500)}`);
      lines.push(line);
    }
    const stderrLines = stderr.split('\n').filter((line) => line.trim() !== '');
    assert.deepEqual(stderrLines, [], 'nothing on stderr');
    const levels: Record<string, number> = {};
    for (const line of lines) levels[line.level] = (levels[line.level] ?? 0) + 1;
    t.diagnostic(
      `${lines.length} JSON lines (${Math.round(stdout.length / 1024)} KiB): ` +
        Object.entries(levels)
          .map(([level, count]) => `${count} ${level}`)
          .join(', '),
    );

    // Not vacuous: the emulator typed the codes and gave out the passwords, the failing poll
    // happened, and the output is as detailed as DEBUG makes it.
    for (const [i, code] of CODES.entries()) {
      assert.deepEqual(
        emulator.task(executionIds[1 + i]!)?.codesReceived,
        [code],
        `the emulator received code ${i + 1}`,
      );
    }
    // Every task but the one that fails at once was seen logging its password (runningWithPassword).
    assert.equal(rawAnswers.size, handles.length - 1, 'the running tasks logged their proxy URLs');
    for (const [executionId, answer] of rawAnswers) {
      assert.ok(
        leaks([{ where: 'answer', text: answer }], [emulator.taskSecrets(executionId)!.proxyPassword]).length > 0,
        'the search finds a password in an answer',
      );
    }
    const passwords = executionIds.flatMap((executionId) => emulator.taskSecrets(executionId)?.proxyPassword ?? []);
    assert.ok(passwords.length >= rawAnswers.size);
    assert.ok(
      emulator.requests.some((r) => r.fault === 'status' && r.status === 500),
      'the poll whose error quotes the URL and the token failed',
    );
    assert.ok(levels.DEBUG! > 0, 'DEBUG lines were written');
    assert.ok(
      levels.TRACE! > 0,
      'TRACE lines were written (with activations, activity tasks and history events: payloads)',
    );
    for (const handle of handles) {
      assert.ok(
        lines.some((line) => line.workflowId === handle.workflowId),
        `lines carry the workflowId ${handle.workflowId}`,
      );
    }
    const banner = lines.find((line) => line.message.startsWith('browserai-temporal worker: task queue'));
    assert.equal(banner?.taskQueue, taskQueue, 'the banner is a JSON line with its attributes');
    assert.ok(
      lines.some((line) => line.sdkComponent === 'core' && typeof line.target === 'string'),
      "the core's logs are forwarded",
    );
    const activityLine = lines.find(
      (line) => line.activityType === 'browserAIPollTask' && line.activityId && line.attempt !== undefined,
    );
    assert.ok(activityLine, 'activity lines carry activityType, activityId and attempt');
    assert.ok(
      activityLine.namespace && activityLine.taskQueue === taskQueue && activityLine.workflowId,
      'and namespace, taskQueue and workflowId',
    );
    const withError = lines.find((line) => {
      const error = line.error as Record<string, unknown> | undefined;
      return (
        error &&
        typeof error === 'object' &&
        typeof error.name === 'string' &&
        typeof error.message === 'string' &&
        typeof error.stack === 'string'
      );
    });
    assert.ok(withError, 'an error is written as {name, message, stack}');
    assert.ok(stdout.includes('•••'), 'masked text reached the logs');

    const found = leaks(
      [
        { where: 'worker stdout', text: stdout },
        { where: 'worker stderr', text: stderr },
      ],
      [TOKEN, ...CODES, ...passwords],
    );
    assert.deepEqual(found, [], `secrets found in the worker's output`);
  },
);
