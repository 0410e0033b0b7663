// Python and Go callers against a real dev server, our worker and the emulator: the examples in
// examples/ start a browserTask by name, learn from the nextInputRequest update that it needs a
// code (and again after BrowserAI refused one), submit each code, and read the result or handle a
// typed failure. What they send, and what the update answered them, is checked against the shipped
// schemas (read back from the workflow's history), and their hand-written types against the
// schemas by their own tests. The payload codec round-trips with Python (ours and Temporal's Python
// encryption sample), and both examples run against an encrypting worker with the same key. The Go
// part needs `go` on PATH (.ci/run insists on it).
// Slow: installs the Python SDK and builds the Go example before it runs them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { dataConverterWithEncryption, EncryptionCodec } from '../src/codec/encryption-codec';
import { FAIL_ERROR } from '../src/emulator/scenario';
import { assertMatchesSchema } from './helpers/schemas';
import {
  buildGoExample,
  EXAMPLES_DIR,
  goVersion,
  pythonForExamples,
  runExample,
  type ExampleRun,
} from './helpers/polyglot';
import { startStack, storedHistory, storedRuns, type Stack } from './helpers/stack';

const SCHEMAS_DIR = join(EXAMPLES_DIR, '..', 'schemas');
const go = goVersion();
if (!go) console.log('# `go` is not on PATH: the Go example is skipped (CI installs Go and never skips it).');

interface Language {
  name: string;
  dir: string;
  /** The command and arguments that run the example (set up in `before`). */
  command?: [string, string[]];
  /** Runs the example's own tests: its types against the schemas. */
  testTypes(): void;
  skip?: string;
}

let python: string;
const languages: Language[] = [
  {
    name: 'Python',
    dir: join(EXAMPLES_DIR, 'python'),
    testTypes() {
      execFileSync(python, ['-m', 'unittest', '-v'], {
        cwd: this.dir,
        env: { ...process.env, BROWSERAI_SCHEMAS_DIR: SCHEMAS_DIR },
      });
    },
  },
  {
    name: 'Go',
    dir: join(EXAMPLES_DIR, 'go'),
    testTypes() {
      execFileSync('go', ['test', './...'], {
        cwd: this.dir,
        env: { ...process.env, BROWSERAI_SCHEMAS_DIR: SCHEMAS_DIR },
      });
    },
    skip: go ? undefined : '`go` is not on PATH',
  },
];

before(() => {
  python = pythonForExamples();
  languages[0]!.command = [python, ['service.py']];
  if (go) languages[1]!.command = [buildGoExample(), []];
});

/**
 * What a workflow was started with, signalled and asked by update (with the update's answer),
 * decoded from its history as the server stores it.
 */
async function sentPayloads(client: Client, workflowId: string, codec?: PayloadCodec) {
  const [run] = await storedRuns(client, workflowId);
  const decode = async (payloads: Payload[] | null | undefined) =>
    (codec ? await codec.decode(payloads ?? []) : (payloads ?? [])).map((p) => defaultPayloadConverter.fromPayload(p));
  let input: unknown;
  const signals: Array<{ name: string; args: unknown[] }> = [];
  const updates = new Map<string, { name: string; args: unknown[]; answer?: unknown }>();
  for (const event of run!.history.events ?? []) {
    const started = event.workflowExecutionStartedEventAttributes;
    if (started) [input] = await decode(started.input?.payloads as Payload[]);
    const signalled = event.workflowExecutionSignaledEventAttributes;
    if (signalled)
      signals.push({ name: signalled.signalName!, args: await decode(signalled.input?.payloads as Payload[]) });
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
    if (accepted)
      updates.set(accepted.meta!.updateId!, {
        name: accepted.input!.name!,
        args: await decode(accepted.input!.args?.payloads as Payload[]),
      });
    const completed = event.workflowExecutionUpdateCompletedEventAttributes;
    if (completed)
      [updates.get(completed.meta!.updateId!)!.answer] = await decode(
        completed.outcome!.success!.payloads as Payload[],
      );
  }
  return { input, signals, updates: [...updates.values()] };
}

function eventNames(run: ExampleRun): string[] {
  return run.events.map((e) => e.event);
}

function exampleRun(
  language: Language,
  stack: Stack,
  args: string[],
  { codes = ['482913'], env: extraEnv = {} }: { codes?: string[]; env?: Record<string, string> } = {},
) {
  const [command, base] = language.command!;
  return runExample(command, [...base, ...args], {
    cwd: language.dir,
    codes,
    env: {
      TEMPORAL_ADDRESS: stack.env.address,
      TEMPORAL_NAMESPACE: stack.env.namespace ?? 'default',
      TEMPORAL_TASK_QUEUE: stack.taskQueue,
      ...extraEnv,
    },
  });
}

describe('the examples against a dev server, our worker and the emulator', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  for (const language of languages) {
    test(`${language.name}: its contract types match the schemas`, { skip: language.skip }, () => {
      language.testTypes();
    });

    test(
      `${language.name}: starts a task, is told by nextInputRequest that it needs a code, is told again when BrowserAI refuses it, submits a new one and reads the result`,
      { skip: language.skip },
      async () => {
        const run = await exampleRun(language, stack, ['--instructions', 'Log in to the portal [rejects-code]'], {
          codes: ['482913', '739104'],
        });
        assert.equal(run.exitCode, 0, run.stderr);
        assert.deepEqual(eventNames(run), [
          'started',
          'input-requested',
          'code-submitted',
          'input-requested',
          'code-submitted',
          'completed',
        ]);
        const requests = run.events.filter((e) => e.event === 'input-requested');
        assert.deepEqual(
          requests.map((e) => [e.sequence, e.kind, e.refusedCodes]),
          [
            [1, 'code', 0],
            [2, 'code', 1],
          ],
        );
        const completed = run.events.at(-1)!;
        assert.equal(completed.status, 'finalized');
        assert.deepEqual(stack.emulator.task(completed.executionId as string)?.codesReceived, ['482913', '739104']);

        const { input, signals, updates } = await sentPayloads(stack.env.client, run.events[0]!.workflowId as string);
        assertMatchesSchema('BrowserTaskInput', input, `the input ${language.name} sent`);
        assert.deepEqual(
          signals.map((s) => s.name),
          ['submitCode', 'submitCode'],
        );
        for (const signal of signals)
          assertMatchesSchema('CodeMessage', signal.args[0], `submitCode from ${language.name}`);
        // One update per request and one for the end: no polling.
        assert.deepEqual(
          updates.map((u) => [
            u.name,
            (u.args[0] as { after?: number }).after ?? 0,
            (u.answer as { kind: string }).kind,
          ]),
          [
            ['nextInputRequest', 0, 'input-requested'],
            ['nextInputRequest', 1, 'input-requested'],
            ['nextInputRequest', 2, 'finished'],
          ],
        );
        for (const update of updates) {
          assertMatchesSchema('NextInputRequestMessage', update.args[0], `the update argument ${language.name} sent`);
          assertMatchesSchema('InputRequestWait', update.answer, `the update answer ${language.name} read`);
        }
      },
    );

    test(
      `${language.name}: input the workflow refuses fails InvalidInput with its problems, before anything is sent`,
      { skip: language.skip },
      async () => {
        const tasksBefore = stack.emulator.listTasks().length;
        const run = await exampleRun(language, stack, ['--instructions', 'Read the title', '--country', 'UK']);
        assert.equal(run.exitCode, 0, run.stderr);
        const failed = run.events.at(-1)!;
        assert.equal(failed.type, 'InvalidInput');
        assert.match((failed.problems as string[]).join(), /geoLocation\.country must be an ISO 3166-1 alpha-2 code/);
        assert.equal(stack.emulator.listTasks().length, tasksBefore, 'no task was created');
      },
    );

    test(
      `${language.name}: a task BrowserAI fails is BrowserAITaskFailed, with the outcome as its detail`,
      { skip: language.skip },
      async () => {
        const run = await exampleRun(language, stack, ['--instructions', 'Open a page that does not exist [fail]']);
        assert.equal(run.exitCode, 0, run.stderr);
        const failed = run.events.at(-1)!;
        assert.equal(failed.type, 'BrowserAITaskFailed');
        assert.equal(failed.error, FAIL_ERROR);
        assert.equal(stack.emulator.task(failed.executionId as string)?.status, 'failed');
      },
    );
  }
});

describe('one key for a polyglot fleet', () => {
  const key = randomBytes(32);
  const codec = new EncryptionCodec(key, 'fleet-2026', { decryptKeys: { 'fleet-2025': randomBytes(32) } });
  const keyEnv = { TEMPORAL_PAYLOAD_KEY: key.toString('base64'), TEMPORAL_PAYLOAD_KEY_ID: 'fleet-2026' };
  const asJson = (payloads: Payload[]) => ({
    payloads: payloads.map((p) => ({
      metadata: Object.fromEntries(
        Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
      ),
      data: Buffer.from(p.data ?? []).toString('base64'),
    })),
  });
  const fromJson = (body: { payloads: Array<{ metadata: Record<string, string>; data: string }> }): Payload[] =>
    body.payloads.map((p) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
      data: Buffer.from(p.data, 'base64'),
    }));
  const pythonCodec = (command: 'encode' | 'decode', payloads: Payload[]): Payload[] =>
    fromJson(
      JSON.parse(
        execFileSync(python, ['browserai_codec.py', command], {
          cwd: join(EXAMPLES_DIR, 'python'),
          input: JSON.stringify(asJson(payloads)),
          env: { ...process.env, ...keyEnv },
          encoding: 'utf8',
        }),
      ),
    );
  const values = [{ code: '731942' }, { instructions: [{ action: 'Log in as jane@example.com' }] }, 'plain'];

  test('the Python codec decrypts what ours encrypted, and ours decrypts what it encrypted', async () => {
    const plain = values.map((v) => defaultPayloadConverter.toPayload(v));
    const ours = await codec.encode(plain);
    assert.deepEqual(
      pythonCodec('decode', ours).map((p) => defaultPayloadConverter.fromPayload(p)),
      values,
    );
    const theirs = pythonCodec('encode', plain);
    assert.equal(Buffer.from(theirs[0]!.metadata!['encryption-key-id']!).toString(), 'fleet-2026');
    assert.deepEqual(
      (await codec.decode(theirs)).map((p) => defaultPayloadConverter.fromPayload(p)),
      values,
    );
  });

  test("ours decrypts what Temporal's Python encryption sample encrypted (its key and key id)", async () => {
    const fixture = JSON.parse(
      readFileSync(join(__dirname, '..', '..', 'test', 'fixtures', 'python-sample-encrypted-payloads.json'), 'utf8'),
    ) as { key: string; keyId: string; values: unknown[]; payloads: Parameters<typeof fromJson>[0]['payloads'] };
    const sampleCodec = new EncryptionCodec(Buffer.from(fixture.key, 'base64'), fixture.keyId);
    const decoded = await sampleCodec.decode(fromJson({ payloads: fixture.payloads }));
    assert.deepEqual(
      decoded.map((p) => defaultPayloadConverter.fromPayload(p)),
      fixture.values,
    );
  });

  let stack: Stack;
  before(async () => {
    stack = await startStack({ dataConverter: dataConverterWithEncryption(codec) });
  });
  after(async () => {
    await stack?.stop();
  });

  for (const language of languages) {
    test(
      `${language.name}: with the fleet's key, a code task runs against an encrypting worker and history holds ciphertext`,
      { skip: language.skip },
      async () => {
        const run = await exampleRun(
          language,
          stack,
          ['--instructions', 'Log in as jane.doe@example.com [needs-code]'],
          {
            env: keyEnv,
          },
        );
        assert.equal(run.exitCode, 0, run.stderr);
        assert.deepEqual(eventNames(run), ['started', 'input-requested', 'code-submitted', 'completed']);
        const workflowId = run.events[0]!.workflowId as string;
        const stored = await storedHistory(stack.env.client, workflowId);
        for (const secret of ['482913', 'jane.doe@example.com'])
          assert.ok(!stored.includes(secret), `"${secret}" is in the stored history`);
        const { input, updates } = await sentPayloads(stack.env.client, workflowId, codec);
        assertMatchesSchema('BrowserTaskInput', input, `the input ${language.name} encrypted`);
        for (const update of updates) assertMatchesSchema('InputRequestWait', update.answer, 'a decrypted answer');

        const failed = await exampleRun(language, stack, ['--instructions', 'Open it [fail]'], { env: keyEnv });
        assert.equal(
          failed.events.at(-1)?.type,
          'BrowserAITaskFailed',
          `the encrypted failure is read in ${language.name}: ${JSON.stringify(failed.events)} ${failed.stderr}`,
        );
        assert.equal(failed.events.at(-1)!.error, FAIL_ERROR);
      },
    );
  }
});
