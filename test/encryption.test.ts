// With TEMPORAL_PAYLOAD_KEY set, workflow history holds ciphertext: a one-time code and the
// instructions never appear in it, the task still runs, and the codec server decodes for the UI.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { startCodecServer } from '../src/codec/codec-server';
import { EncryptionCodec, payloadCodecFromEnv } from '../src/codec/encryption-codec';
import { stateQuery } from '../src/workflows/messages';
import { eventually, startStack, storedHistory, taskInput, type Stack } from './helpers/stack';

const codec = new EncryptionCodec(randomBytes(32), 'test-key');
let stack: Stack;
before(async () => {
  stack = await startStack({ dataConverter: { payloadCodecs: [codec] } });
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
  const { url, server } = await startCodecServer(codec, { port: 0 });
  try {
    const [encoded] = await codec.encode([{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"hello"') }]);
    const body = { payloads: [{ metadata: Object.fromEntries(Object.entries(encoded!.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')])), data: Buffer.from(encoded!.data!).toString('base64') }] };
    const response = await fetch(`${url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
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
