// The proof that secrets in BrowserAI's own output never reach Temporal or the worker's logs.
// The emulator's tasks log, while they run, the browser's connection URL with a proxy password
// of their own (`Connecting to browser: wss://user:<password>@brd.superproxy.io:9222`) and an
// inspector link embedding it percent-encoded, as BrowserAI's engine does; some answers also
// carry the API token, and one poll fails with both in its error message. A real worker, in a
// child process logging at its most verbose, runs a plain task and a one-time-code task through
// several polls while the test reads `state`, the live state (with the poll's heartbeat),
// describe and the current details over and over. Then every run's full history, every
// description and answer, and everything the worker wrote are searched for the password and the
// token in every spelling: as is, percent-encoded once and twice, JSON-escaped, and base64 at any
// alignment (payloads are base64 in history exports). None may be found.
//
// So it cannot pass for want of looking: the emulator's own answers are shown to carry the
// password, the search is shown to find it there (also inside base64), and the masked lines
// (`wss://•••@…`) are shown to have reached Temporal.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { MASK } from '../src/browserai';
import { BrowserTasks } from '../src/starters/tasks';
import { BrowserAIEmulator } from '../src/emulator';
import { stateQuery } from '../src/contract/messages';
import { leaks, rawTaskAnswer, startWorkerProcess, type Seen, type WorkerProcess } from './helpers/secrets';
import { startTemporal, storedRuns, taskInput } from './helpers/stack';

const TOKEN = `tok-${randomBytes(12).toString('hex')}`;
const CODE = '482913';
const POLLING = { initialIntervalMs: 250, maxIntervalMs: 1_000, heartbeatTimeoutMs: 3_000 };
/** What a masked connection line looks like once it has passed the client. */
const MASKED_URL = `wss://${MASK}@brd.superproxy.io:9222`;

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

/**
 * The real worker entry point in a child process, every log it has turned on: the SDK's logger
 * at TRACE, with the native core's logs forwarded to it (WORKER_LOG_LEVEL).
 */
function startVerboseWorker(taskQueue: string): Promise<WorkerProcess> {
  return startWorkerProcess({
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: env.namespace,
    TEMPORAL_TASK_QUEUE: taskQueue,
    BROWSERAI_BASE_URL: emulator.baseUrl,
    BROWSERAI_API_TOKEN: TOKEN,
    WORKER_SHUTDOWN_GRACE_MS: '1000',
    WORKER_LOG_LEVEL: 'TRACE',
  });
}

// ---- What is searched, and how (spellings and the search: helpers/secrets.ts) ---------------

/**
 * A protobuf message as every reader may see it: its binary encoding (as bytes and as base64),
 * its JSON export (bytes as base64, as `temporal workflow show --output json` and the UI's
 * download give it), and each string and byte field in it decoded as text (payloads decoded).
 */
function protoViews(where: string, binary: Uint8Array, json: unknown, decoded: unknown): Seen[] {
  const views: Seen[] = [
    { where: `${where} (binary)`, text: Buffer.from(binary).toString('latin1') },
    { where: `${where} (binary as base64)`, text: Buffer.from(binary).toString('base64') },
    { where: `${where} (JSON)`, text: JSON.stringify(json) },
  ];
  const texts: string[] = [];
  const visited = new Set<object>();
  const visit = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value);
    else if (value instanceof Uint8Array)
      texts.push(Buffer.from(value).toString('utf8'), Buffer.from(value).toString('base64'));
    else if (typeof value === 'object' && value !== null && !visited.has(value)) {
      visited.add(value);
      for (const key of Object.keys(value)) visit((value as Record<string, unknown>)[key]);
    }
  };
  visit(decoded);
  views.push({ where: `${where} (fields and payloads decoded)`, text: texts.join('\n') });
  return views;
}

async function historyViews(workflowId: string): Promise<Seen[]> {
  const { History } = temporal.api.history.v1;
  const runs = await storedRuns(env.client, workflowId);
  return runs.flatMap((run) => {
    const binary = History.encode(run.history).finish();
    const decoded = History.decode(binary);
    return protoViews(
      `history of ${workflowId} run ${run.runId}`,
      binary,
      History.toObject(decoded, { bytes: String, longs: String, enums: String }),
      decoded,
    );
  });
}

async function describeViews(handle: WorkflowHandle, when: string): Promise<Seen[]> {
  const { DescribeWorkflowExecutionResponse } = temporal.api.workflowservice.v1;
  const description = await handle.describe();
  const binary = DescribeWorkflowExecutionResponse.encode(description.raw).finish();
  const decoded = DescribeWorkflowExecutionResponse.decode(binary);
  const json = DescribeWorkflowExecutionResponse.toObject(decoded, { bytes: String, longs: String, enums: String });
  return protoViews(`describe of ${handle.workflowId} ${when}`, binary, json, decoded);
}

/** Everything a user of the workflow can read while it runs: `state`, the live state with the poll's heartbeat, the current details, describe. */
async function liveViews(tasks: BrowserTasks, handle: WorkflowHandle, when: string): Promise<Seen[]> {
  const id = handle.workflowId;
  const [state, live, metadata, described] = await Promise.all([
    handle.query(stateQuery),
    tasks.state(id),
    handle.query<unknown>('__temporal_workflow_metadata'),
    describeViews(handle, when),
  ]);
  return [
    { where: `state of ${id} ${when}`, text: JSON.stringify(state) },
    { where: `live state of ${id} ${when}`, text: JSON.stringify(live) },
    { where: `metadata (current details) of ${id} ${when}`, text: JSON.stringify(metadata) },
    ...described,
  ];
}

// ---- The run ----------------------------------------------------------------------------

test(
  'no proxy password and no API token from BrowserAI output in history, heartbeats, details, queries or worker logs',
  { timeout: 240_000 },
  async (t) => {
    const taskQueue = `secrets-${randomUUID()}`;
    worker = await startVerboseWorker(taskQueue);
    const tasks = new BrowserTasks(env.client, taskQueue);

    // Some answers also carry the API token, plain and encoded, in their progress lines.
    const tokenLines = [
      `Authorization: apikey ${TOKEN}`,
      `GET https://browser.ai/api/v1/tasks?api_key=${encodeURIComponent(TOKEN)}`,
    ];
    const carryToken = () =>
      emulator.inject({
        method: 'GET',
        path: /^\/tasks\/[^/]+$/,
        times: 40,
        answer: {
          transform: (body: Record<string, any>) => ({
            ...body,
            progress: { ...(body.progress ?? {}), logs: [...(body.progress?.logs ?? []), ...tokenLines] },
          }),
        },
      });
    carryToken();

    const plain = await tasks.start(
      taskInput({ instructions: [{ action: 'Read the catalogue [duration=6s]' }], polling: POLLING }),
    );
    const otp = await tasks.start(
      taskInput({ instructions: [{ action: 'Log in to the portal [needs-code] [duration=3s]' }], polling: POLLING }),
    );
    const handles = [plain, otp];

    const seen: Seen[] = [];
    /** One answer per task straight from the emulator, taken before any fault aims at that task (a fetch here would consume it). */
    const rawAnswers = new Map<string, string>();
    let failedPoll = false;
    let codeSent = false;
    const deadline = Date.now() + 120_000;
    for (let round = 0, running = true; running; round++) {
      running = false;
      for (const handle of handles) {
        const views = await liveViews(tasks, handle, `while running (${round})`);
        seen.push(...views);
        const state = JSON.parse(views[0]!.text) as {
          executionId: string | null;
          awaitingInput: boolean;
          outcome: unknown;
        };
        if (state.outcome === null) running = true;
        const executionId = state.executionId;
        const secrets = executionId ? emulator.taskSecrets(executionId) : undefined;
        if (!executionId || !secrets) continue;
        if (!rawAnswers.has(executionId)) {
          const raw = await rawTaskAnswer(emulator, executionId);
          if (raw.includes(secrets.connectionUrl)) rawAnswers.set(executionId, raw);
        }
        if (handle === otp && state.awaitingInput && !codeSent) {
          await tasks.submitCode(otp.workflowId, CODE);
          codeSent = true;
        }
        // One poll of the plain task fails, BrowserAI's error message quoting the URL and the token.
        if (handle === plain && rawAnswers.has(executionId) && !failedPoll) {
          // Faults fire in the order they were added: this one goes before those carrying the token.
          emulator.clearFaults();
          emulator.inject({
            method: 'GET',
            path: new RegExp(`^/tasks/${executionId}$`),
            status: 500,
            error: `Engine lost ${secrets.connectionUrl} (key ${TOKEN})`,
          });
          carryToken();
          failedPoll = true;
        }
      }
      assert.ok(Date.now() < deadline, `the tasks did not end in time (code sent: ${codeSent})`);
      await new Promise((r) => setTimeout(r, 400));
    }

    const results = await Promise.all(handles.map((handle) => handle.result()));
    for (const result of results) assert.equal(result.status, 'finalized');
    for (const handle of handles)
      seen.push(...(await liveViews(tasks, handle, 'after the end')), ...(await historyViews(handle.workflowId)));
    await worker.stop();
    const workerOutput = worker.output;
    worker = undefined;
    seen.push({ where: 'worker stdout and stderr', text: workerOutput });

    // The secrets: each task's proxy password (its URL holds nothing else secret) and the API token.
    const passwords = results.map((result) => {
      const secrets = emulator.taskSecrets(result.executionId);
      assert.ok(secrets, `the emulator knows the secrets of ${result.executionId}`);
      assert.ok(secrets.connectionUrl.includes(`:${secrets.proxyPassword}@`));
      return secrets;
    });
    t.diagnostic(
      `searched ${seen.length} views (${Math.round(seen.reduce((n, s) => n + s.text.length, 0) / 1024)} KiB, worker output ${Math.round(workerOutput.length / 1024)} KiB)`,
    );

    // It would have seen them: the emulator's answers carried the password in clear and encoded,
    // the search finds it there (and in base64 at every alignment), the token was answered, the
    // failing poll happened, and the masked lines reached Temporal.
    for (const [i, { proxyPassword, connectionUrl }] of passwords.entries()) {
      const answer = rawAnswers.get(results[i]!.executionId);
      assert.ok(answer, 'the emulator answered GET /tasks/{id} with the connection URL in clear');
      assert.ok(answer.includes(encodeURIComponent(connectionUrl)), 'and percent-encoded in the inspector link');
      for (let pad = 0; pad < 3; pad++) {
        const probe = [{ where: 'probe', text: Buffer.from('x'.repeat(pad) + answer).toString('base64') }];
        assert.ok(leaks(probe, [proxyPassword]).length > 0, 'the search finds the password in base64');
      }
      assert.ok(
        leaks([{ where: 'probe', text: answer }], [proxyPassword]).length > 0,
        'the search finds the password in an answer',
      );
    }
    assert.ok(
      emulator.requests.some((r) => r.fault === 'answer' && r.status === 200),
      'answers carrying the API token were sent',
    );
    assert.ok(
      emulator.requests.some((r) => r.fault === 'status' && r.status === 500),
      'the poll whose error quotes the URL failed',
    );
    assert.ok(
      seen.some((s) => s.text.includes(MASKED_URL)),
      `the masked connection line (${MASKED_URL}) reached Temporal`,
    );
    assert.ok(
      seen.some((s) => s.text.includes(`apikey ${MASK}`)),
      'the masked token line reached Temporal',
    );
    assert.ok(/DEBUG|TRACE/.test(workerOutput), 'the worker logged verbosely');

    const found = leaks(seen, [...passwords.map((p) => p.proxyPassword), TOKEN]);
    // One line per place and spelling, rounds of the same place counted together.
    const places = [...new Set(found.map((leak) => leak.replace(/while running \(\d+\)/, 'while running')))];
    assert.equal(found.length, 0, `${found.length} secrets found, in:\n${places.join('\n')}`);
  },
);
