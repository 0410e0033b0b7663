// With TEMPORAL_PAYLOAD_KEY set, workflow history holds ciphertext: a one-time code, the
// instructions and failure messages never appear in it, the task still runs, the codec server
// decodes for the UI, and keys rotate without making old histories unreadable.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { ApplicationFailure, Client, WorkflowFailedError } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { startCodecServer } from '../src/codec/codec-server';
import { dataConverterWithEncryption, EncryptionCodec, payloadCodecFromEnv } from '../src/codec/encryption-codec';
import { BrowserTasks } from '../src/starters/tasks';
import { FAIL_ERROR } from '../src/emulator/scenario';
import { createWorker } from '../src/create-worker';
import { stateQuery } from '../src/contract/messages';
import { eventually, startStack, storedHistory, storedRuns, taskInput, type Stack } from './helpers/stack';

const codec = new EncryptionCodec(randomBytes(32), 'test-key');

const dataConverter: DataConverter = dataConverterWithEncryption(codec);

let stack: Stack;
before(async () => {
  stack = await startStack({ dataConverter });
});
after(async () => {
  await stack?.stop();
});

test('an encrypted OTP task completes and its history holds neither the code nor the instructions', async () => {
  const secretInstruction = 'Log in as jane.doe@example.com [needs-code]';
  const handle = await stack.tasks.start(taskInput({ instructions: [{ action: secretInstruction }] }));
  await eventually('awaiting input', async () => (await handle.query(stateQuery)).awaitingInput);
  await stack.tasks.submitCode(handle.workflowId, '731942');
  const result = await handle.result();
  assert.equal(result.status, 'finalized');
  assert.deepEqual(stack.emulator.task(result.executionId)?.codesReceived, ['731942']);

  // The raw history, as the server stores it and the UI fetches it.
  const stored = await storedHistory(stack.env.client, handle.workflowId);
  assert.ok(stored.includes('binary/encrypted'), 'payloads are encrypted');
  for (const secret of ['731942', 'jane.doe@example.com', 'one-time code']) {
    assert.ok(!stored.includes(secret), `"${secret}" found in the stored history`);
  }
});

test('state() reads the polling heartbeat through the codec', async () => {
  // Long enough for a heartbeat: the poll heartbeats only at 90 % of the heartbeat timeout.
  const handle = await stack.tasks.start(taskInput({ instructions: [{ action: 'Crawl [duration=12s]' }] }));
  const live = await eventually('a poll heartbeat', async () => (await stack.tasks.state(handle.workflowId)).lastPoll);
  assert.ok(live.nextPollAt, 'the decoded heartbeat says when the next poll is');
  await handle.cancel();
});

test('the codec server decodes what the codec encoded, for the Temporal UI', async () => {
  const token = randomBytes(32).toString('base64');
  const { url, server } = await startCodecServer(codec, { port: 0, token });
  try {
    const [encoded] = await codec.encode([
      { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"hello"') },
    ]);
    const body = {
      payloads: [
        {
          metadata: Object.fromEntries(
            Object.entries(encoded!.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
          ),
          data: Buffer.from(encoded!.data!).toString('base64'),
        },
      ],
    };
    const headers = { 'content-type': 'application/json', 'x-namespace': 'default' };
    const refused = await fetch(`${url}/decode`, { method: 'POST', headers, body: JSON.stringify(body) });
    assert.equal(refused.status, 401, 'no token, no plaintext');
    const response = await fetch(`${url}/decode`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 200);
    const { payloads } = (await response.json()) as { payloads: Array<{ data: string }> };
    assert.equal(Buffer.from(payloads[0]!.data, 'base64').toString(), '"hello"');
  } finally {
    server.close();
  }
});

test('a malformed TEMPORAL_PAYLOAD_KEY is refused with what to do', () => {
  assert.equal(payloadCodecFromEnv({}), undefined);
  assert.throws(() => payloadCodecFromEnv({ TEMPORAL_PAYLOAD_KEY: 'c2hvcnQ=' }), /openssl rand -base64 32/);
  assert.ok(payloadCodecFromEnv({ TEMPORAL_PAYLOAD_KEY: randomBytes(32).toString('base64') }));
});

test('a failed task: the failure message is ciphertext in history, and the client reads it decoded', async () => {
  // A worker that bundles the workflows itself, as `npm run worker` without WORKER_WORKFLOW_BUNDLE
  // does: the failure converter then reaches the workflow sandbox, where the workflow's own failure is made.
  const taskQueue = `encrypted-failures-${randomUUID()}`;
  const worker = await createWorker({
    connection: stack.env.nativeConnection,
    namespace: stack.env.namespace ?? 'default',
    taskQueue,
    client: stack.browserai,
    shutdownGraceTime: 1_000,
    dataConverter,
  });
  const running = worker.run();
  try {
    const tasks = new BrowserTasks(
      new Client({ connection: stack.env.connection, namespace: stack.env.namespace, dataConverter }),
      taskQueue,
    );
    const handle = await tasks.start(
      taskInput({ instructions: [{ action: 'Open a page that does not exist [fail]' }] }),
    );
    const error = await handle.result().then(
      () => assert.fail('the task should fail'),
      (err: unknown) => err,
    );
    assert.ok(error instanceof WorkflowFailedError);
    const failure = error.cause as ApplicationFailure;
    assert.ok(failure instanceof ApplicationFailure);
    assert.equal(failure.type, 'BrowserAITaskFailed');
    assert.match(failure.message, /ERR_NAME_NOT_RESOLVED/, 'the client decodes the message');

    const runs = await storedRuns(stack.env.client, handle.workflowId);
    const failed = runs.flatMap((run) => run.history.events ?? []).find((e) => e.workflowExecutionFailedEventAttributes)
      ?.workflowExecutionFailedEventAttributes?.failure;
    assert.ok(failed, 'a WorkflowExecutionFailed event');
    assert.equal(failed.message, 'Encoded failure');
    assert.ok(!failed.stackTrace, 'no plaintext stack trace');
    assert.equal(Buffer.from(failed.encodedAttributes?.metadata?.encoding ?? []).toString(), 'binary/encrypted');
    const failureBytes = Buffer.from(temporal.api.failure.v1.Failure.encode(failed).finish()).toString('latin1');
    assert.ok(
      !failureBytes.includes('ERR_NAME_NOT_RESOLVED') && !failureBytes.includes(FAIL_ERROR),
      'the failure holds no plaintext message',
    );
    const stored = await storedHistory(stack.env.client, handle.workflowId);
    assert.ok(!stored.includes('ERR_NAME_NOT_RESOLVED'), 'nowhere in the stored history');
  } finally {
    worker.shutdown();
    await running.catch(() => undefined);
  }
});

test('key rotation: old payloads decode with the old key as decrypt-only, new ones use the new key', async () => {
  const keyA = randomBytes(32).toString('base64');
  const keyB = randomBytes(32).toString('base64');
  const before = payloadCodecFromEnv({ TEMPORAL_PAYLOAD_KEY: keyA, TEMPORAL_PAYLOAD_KEY_ID: 'key-a' })!;
  const old = await before.encode([
    { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"sealed with A"') },
  ]);

  const rotated = payloadCodecFromEnv({
    TEMPORAL_PAYLOAD_KEY: keyB,
    TEMPORAL_PAYLOAD_KEY_ID: 'key-b',
    TEMPORAL_PAYLOAD_DECRYPT_KEYS: `key-a:${keyA}`,
  })!;
  assert.deepEqual(rotated.decryptKeyIds, ['key-b', 'key-a']);
  const [decodedOld] = await rotated.decode(old);
  assert.equal(Buffer.from(decodedOld!.data!).toString(), '"sealed with A"');
  const fresh = await rotated.encode([
    { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"sealed with B"') },
  ]);
  assert.equal(
    Buffer.from(fresh[0]!.metadata!['encryption-key-id']!).toString(),
    'key-b',
    'new payloads name the new key',
  );
  // The old key alone cannot read them: they really are under B.
  await assert.rejects(before.decode(fresh), /key id "key-b"[\s\S]*TEMPORAL_PAYLOAD_DECRYPT_KEYS/);

  // Once A is dropped, its payloads fail with a message naming the id and what to set.
  const dropped = payloadCodecFromEnv({ TEMPORAL_PAYLOAD_KEY: keyB, TEMPORAL_PAYLOAD_KEY_ID: 'key-b' })!;
  await assert.rejects(
    dropped.decode(old),
    /key id "key-a", which this process does not have[\s\S]*TEMPORAL_PAYLOAD_DECRYPT_KEYS \("key-a:<base64 key>"/,
  );
  // A key changed under the same id is caught, not silently misread.
  const reused = payloadCodecFromEnv({ TEMPORAL_PAYLOAD_KEY: keyB, TEMPORAL_PAYLOAD_KEY_ID: 'key-a' })!;
  await assert.rejects(reused.decode(old), /does not decrypt with this process's key of that id/);
});

test('TEMPORAL_PAYLOAD_DECRYPT_KEYS is checked with what to do', () => {
  const key = randomBytes(32).toString('base64');
  const other = randomBytes(32).toString('base64');
  assert.throws(
    () => payloadCodecFromEnv({ TEMPORAL_PAYLOAD_DECRYPT_KEYS: `a:${key}` }),
    /TEMPORAL_PAYLOAD_KEY is not/,
  );
  assert.throws(
    () => payloadCodecFromEnv({ TEMPORAL_PAYLOAD_KEY: key, TEMPORAL_PAYLOAD_DECRYPT_KEYS: key }),
    /`key-id:base64-key` pairs/,
  );
  assert.throws(
    () => payloadCodecFromEnv({ TEMPORAL_PAYLOAD_KEY: key, TEMPORAL_PAYLOAD_DECRYPT_KEYS: 'old:c2hvcnQ=' }),
    /"old".*openssl rand -base64 32/,
  );
  assert.throws(
    () =>
      payloadCodecFromEnv({
        TEMPORAL_PAYLOAD_KEY: key,
        TEMPORAL_PAYLOAD_KEY_ID: 'k1',
        TEMPORAL_PAYLOAD_DECRYPT_KEYS: `k1:${other}`,
      }),
    /two different keys/,
  );
  assert.throws(
    () => payloadCodecFromEnv({ TEMPORAL_PAYLOAD_KEY: key, TEMPORAL_PAYLOAD_DECRYPT_KEYS: `a:${key},a:${other}` }),
    /two different keys/,
  );
  assert.ok(
    payloadCodecFromEnv({ TEMPORAL_PAYLOAD_KEY: key, TEMPORAL_PAYLOAD_DECRYPT_KEYS: ` a:${other} , b:${key} ,` }),
  );
});
