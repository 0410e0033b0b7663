// The worker's loggers without a worker: WORKER_LOG_FORMAT / WORKER_LOG_LEVEL parsing, the JSON
// line (fields, order, values JSON cannot hold), and the masking of secrets and payload bytes.
// Unit tests: no Temporal server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { MASK } from '../src/browserai';
import { ConfigError } from '../src/contract/errors';
import { logConfigFrom, loadWorkerConfig } from '../src/config/worker';
import { JsonLogger, TextLogger, maskCorePayloads, parseLogLevel, toLoggable } from '../src/telemetry/logging';
import { coreLogFilter } from '../src/telemetry/runtime';

const TOKEN = 'tok-0123456789abcdef';

function jsonLines(level: 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' = 'TRACE', secrets = [TOKEN]) {
  const written: string[] = [];
  const logger = new JsonLogger(level, { secrets, write: (line) => written.push(line) });
  const parsed = () => written.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, written, parsed };
}

test('WORKER_LOG_FORMAT and WORKER_LOG_LEVEL: defaults, any case, and problems that say what to write', () => {
  assert.deepEqual(logConfigFrom({}, []), { format: 'text', level: 'INFO' });
  assert.deepEqual(logConfigFrom({ WORKER_LOG_FORMAT: ' JSON ', WORKER_LOG_LEVEL: 'debug' }, []), {
    format: 'json',
    level: 'DEBUG',
  });
  assert.deepEqual(logConfigFrom({ WORKER_LOG_FORMAT: '', WORKER_LOG_LEVEL: '' }, []), {
    format: 'text',
    level: 'INFO',
  });
  for (const level of ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'])
    assert.equal(parseLogLevel(level.toLowerCase()), level);
  const problems: string[] = [];
  assert.deepEqual(logConfigFrom({ WORKER_LOG_FORMAT: 'logfmt', WORKER_LOG_LEVEL: 'verbose' }, problems), {
    format: 'text',
    level: 'INFO',
  });
  assert.deepEqual(problems, [
    'WORKER_LOG_FORMAT must be text (the default) or json (got "logfmt")',
    'WORKER_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR (INFO is the default; got "verbose")',
  ]);
  const base = { BROWSERAI_API_TOKEN: 't', TEMPORAL_CONFIG_FILE: '', HOME: '/nonexistent' };
  assert.deepEqual(loadWorkerConfig({ ...base, WORKER_LOG_FORMAT: 'json', WORKER_LOG_LEVEL: 'warn' }).log, {
    format: 'json',
    level: 'WARN',
  });
  assert.throws(
    () => loadWorkerConfig({ ...base, WORKER_LOG_LEVEL: 'loud' }),
    (err: unknown) =>
      err instanceof ConfigError && err.problems.some((p) => p.startsWith('WORKER_LOG_LEVEL must be one of')),
  );
});

test("the core's filter follows the level; the crates under it stay quieter", () => {
  assert.deepEqual(coreLogFilter('TRACE'), { core: 'TRACE', other: 'DEBUG' });
  assert.deepEqual(coreLogFilter('DEBUG'), { core: 'DEBUG', other: 'INFO' });
  assert.deepEqual(coreLogFilter('WARN'), { core: 'WARN', other: 'WARN' });
});

test('a JSON line: time, level, message first, then the attributes; the SDK timestamp is the time; lower levels are dropped', () => {
  const { logger, written, parsed } = jsonLines('INFO');
  const nanos = BigInt(Date.UTC(2030, 0, 2, 3, 4, 5, 678)) * 1_000_000n + 123_456n;
  logger.info('Activity completed', {
    [Symbol.for('log_timestamp')]: nanos,
    sdkComponent: 'worker',
    activityType: 'browserAIPollTask',
    attempt: 2,
    message: 'mine',
  });
  logger.debug('not written');
  logger.trace('nor this');
  assert.equal(written.length, 1);
  assert.ok(written[0]!.endsWith('\n') && !written[0]!.slice(0, -1).includes('\n'), 'one line');
  const [line] = parsed();
  assert.deepEqual(Object.keys(line!), [
    'time',
    'level',
    'message',
    'sdkComponent',
    'activityType',
    'attempt',
    'attributes.message',
  ]);
  assert.deepEqual(line, {
    time: '2030-01-02T03:04:05.678Z',
    level: 'INFO',
    message: 'Activity completed',
    sdkComponent: 'worker',
    activityType: 'browserAIPollTask',
    attempt: 2,
    'attributes.message': 'mine',
  });
});

test('values JSON cannot hold are written readably, never thrown on', () => {
  const { logger, parsed } = jsonLines();
  const circular: Record<string, unknown> = { name: 'loop' };
  circular.self = circular;
  const cause = new TypeError('socket hang up');
  const failure = ApplicationFailure.create({ message: 'BrowserAI GET /tasks/x failed', type: 'ServerError', cause });
  const throwing = Object.defineProperty({}, 'boom', {
    enumerable: true,
    get() {
      throw new Error('no');
    },
  });
  logger.warn('many kinds', {
    error: failure,
    big: 12345678901234567890n,
    circular,
    bytes: new Uint8Array([1, 2, 3]),
    when: new Date(0),
    nan: Number.NaN,
    fn: function named() {},
    map: new Map([['a', 1]]),
    set: new Set([1, 2]),
    throwing,
    nothing: undefined,
  });
  const [line] = parsed();
  const error = line!.error as Record<string, unknown>;
  assert.equal(error.name, 'ApplicationFailure');
  assert.equal(error.message, 'BrowserAI GET /tasks/x failed');
  assert.match(error.stack as string, /^ApplicationFailure: BrowserAI GET/);
  assert.equal(error.type, 'ServerError');
  assert.deepEqual((error.cause as Record<string, unknown>).name, 'TypeError');
  assert.equal((error.cause as Record<string, unknown>).message, 'socket hang up');
  assert.equal(line!.big, '12345678901234567890');
  assert.deepEqual(line!.circular, { name: 'loop', self: '[Circular]' });
  assert.equal(line!.bytes, '[3 bytes]');
  assert.equal(line!.when, '1970-01-01T00:00:00.000Z');
  assert.equal(line!.nan, 'NaN');
  assert.equal(line!.fn, '[Function named]');
  assert.deepEqual(line!.map, { a: 1 });
  assert.deepEqual(line!.set, [1, 2]);
  assert.deepEqual(line!.throwing, { boom: '[unreadable: no]' });
  assert.ok(!('nothing' in line!));
  assert.ok(!JSON.stringify(line).includes('[object Object]'));
  // A message that is not a string is written as one.
  logger.error(new Error('thrown as a message') as unknown as string);
  assert.equal(parsed()[1]!.message, 'Error: thrown as a message');
});

test('payload bytes are never written: protobuf messages keep their bytes as lengths, and the core’s payload dumps are masked', () => {
  const code = '48291375';
  const data = new TextEncoder().encode(JSON.stringify({ code }));
  const task = temporal.api.common.v1.Payloads.create({
    payloads: [{ metadata: { encoding: new TextEncoder().encode('json/plain') }, data }],
  });
  assert.equal(typeof task.toJSON, 'function', 'a protobuf message has a toJSON that writes bytes in base64');
  const safe = JSON.stringify(toLoggable({ task }));
  assert.ok(!safe.includes(Buffer.from(data).toString('base64')) && !safe.includes(code), safe);
  assert.ok(safe.includes(`[${data.length} bytes]`), safe);

  const b64 = Buffer.from(data).toString('base64');
  const long = Buffer.from(
    JSON.stringify({ instructions: [{ action: `Enter the one-time code ${code}` }], padding: 'x'.repeat(80) }),
  );
  const abbreviated = `[${long.subarray(0, 32).toString('base64')}..${long.subarray(-32).toString('base64')}]`;
  const line = `input: Some(Payloads { payloads: [${`[${b64}]`}] }), result: Success(${abbreviated}), messages: [], commands: [ScheduleActivity], r: [TriggerWFTaskStarted]`;
  assert.equal(
    maskCorePayloads(line),
    `input: Some(Payloads { payloads: [[${MASK}]] }), result: Success([${MASK}]), messages: [], commands: [ScheduleActivity], r: [TriggerWFTaskStarted]`,
  );

  const { logger, written } = jsonLines();
  logger.trace('handling event', {
    sdkComponent: 'core',
    target: 'temporalio_sdk_core::worker::workflow::machines',
    event: line,
  });
  assert.ok(!written[0]!.includes(b64), 'masked in a core line');
  // Only core lines: ours may say `[fail]`.
  logger.info('Ignored signal [fail] [abcd]', { sdkComponent: 'workflow' });
  assert.match(written[1]!, /\[fail\] \[abcd\]/);
});

test('the API token, URL credentials and token-like parameters are masked in the message and every attribute, JSON and text alike', () => {
  const url = `wss://brd-customer-hl_1-zone-browser_ai:s3cretPw@brd.superproxy.io:9222`;
  const meta = {
    header: `apikey ${TOKEN}`,
    nested: {
      deeper: [
        { link: `https://inspect.example/devtools?wss=${encodeURIComponent(url.slice(6))}` },
        `GET /x?api_key=${encodeURIComponent(TOKEN)}`,
      ],
    },
    error: new Error(`Engine lost ${url} (key ${TOKEN})`),
    escaped: JSON.stringify({ token: TOKEN }),
  };
  const { logger, written } = jsonLines();
  logger.warn(`Connecting to browser: ${url} with ${TOKEN}`, meta);
  const textWritten: string[] = [];
  new TextLogger('TRACE', { secrets: [TOKEN], write: (line) => textWritten.push(line), colors: false }).warn(
    `Connecting to browser: ${url} with ${TOKEN}`,
    meta,
  );
  for (const [format, out] of [
    ['json', written.join('')],
    ['text', textWritten.join('')],
  ] as const) {
    for (const secret of [TOKEN, 's3cretPw', encodeURIComponent(TOKEN)])
      assert.ok(!out.includes(secret), `${format}: ${secret} in ${out}`);
    assert.ok(out.includes(`wss://${MASK}@brd.superproxy.io:9222`), `${format}: the URL stays readable`);
    assert.ok(out.includes(`apikey ${MASK}`), format);
  }
  // A secret learned later (the emulator's token in `npm start`).
  const later = jsonLines('INFO', []);
  later.logger.addSecrets('late-secret-value');
  later.logger.info('the late-secret-value');
  assert.equal(JSON.parse(later.written[0]!).message, `the ${MASK}`);
});
