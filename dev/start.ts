// `npm start`: the whole stack on one machine with embedded defaults. Without a Temporal address
// (TEMPORAL_ADDRESS, or the temporal.toml profile in use) it starts a Temporal dev server with its
// UI (search attributes registered); without BROWSERAI_API_TOKEN it starts the BrowserAI emulator
// and says so loudly; then the worker.
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { BrowserAIClient } from '../src/browserai';
import { ConfigError } from '../src/contract/errors';
import { connectionOptions, describeTemporal, loadTemporalConfig } from '../src/config/temporal';
import { logConfigFrom, loadWorkerConfig, metricsAddressFrom } from '../src/config/worker';
import { BrowserAIEmulator, emulatorOptionsFromEnv } from '../src/emulator';
import { inboxOptionsFromEnv, startInbox } from '../src/inbox';
import { ALL_SEARCH_ATTRIBUTES } from '../src/contract/search-attributes';
import { startCodecServer } from '../src/codec/codec-server';
import { dataConverterWithEncryption, payloadCodecFromEnv } from '../src/codec/encryption-codec';
import { createWorker } from '../src/create-worker';
import { findTemporalCli } from './temporal-cli';
import { installWorkerRuntime, logFatalAfterFlush } from '../src/telemetry/runtime';
import { tracingFromEnv } from '../src/telemetry/tracing';
import { recordBrowserAIRequest } from '../src/telemetry/activity-metrics';

const UI_PORT = Number(process.env.TEMPORAL_UI_PORT ?? 8233);
const INBOX_PORT = Number(process.env.INBOX_PORT ?? 8790);

async function main(): Promise<void> {
  const env = { ...process.env };
  const cleanups: Array<() => Promise<void>> = [];

  // With payload encryption on, the UI needs a codec server to show anything but ciphertext.
  const codec = payloadCodecFromEnv(env);
  let codecUrl: string | undefined;
  if (codec) {
    // Open (no token) on loopback only, and only for the dev UI's origins and localhost Host names:
    // the dev UI cannot send a token. Run `npm run codec-server` with CODEC_SERVER_TOKEN for anything shared.
    const started = await startCodecServer(codec, {
      port: Number(env.CODEC_SERVER_PORT ?? 8234),
      host: '127.0.0.1',
      open: true,
      allowedOrigins: [`http://localhost:${UI_PORT}`, `http://127.0.0.1:${UI_PORT}`],
    });
    codecUrl = started.url;
    cleanups.push(() => new Promise((resolve) => started.server.close(() => resolve())));
  }

  // The Temporal connection is checked before anything starts; without an address (neither
  // TEMPORAL_ADDRESS nor the temporal.toml profile in use has one) a dev server is started.
  const problems: string[] = [];
  const temporal = loadTemporalConfig(env, problems);
  // Worker metrics on by default here (WORKER_METRICS_ADDRESS=off turns them off).
  const metricsAddress = metricsAddressFrom(env, problems);
  const log = logConfigFrom(env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  // Traces when OTEL_* asks (docs/observability.md, "Traces"), exported at the end, after the worker stopped. Here,
  // before anything starts, so settings it refuses stop nothing half-started.
  const tracing = tracingFromEnv(env, 'browserai-temporal-worker');
  if (tracing) cleanups.push(() => tracing.shutdown());
  // Before the dev server and the connection: they would create a default Runtime (default logger, no endpoint).
  const runtime = installWorkerRuntime({
    metricsAddress: metricsAddress === null ? undefined : (metricsAddress ?? '127.0.0.1:9464'),
    log: { ...log, secrets: [env.BROWSERAI_API_TOKEN?.trim() ?? ''] },
  });
  const { metricsUrl } = runtime;

  let devServer: TestWorkflowEnvironment | undefined;
  if (temporal.addressFrom === 'default') {
    const cli = findTemporalCli();
    runtime.announce(
      cli
        ? `Starting a Temporal dev server (${cli})...`
        : 'No `temporal` CLI found: downloading the Temporal dev server...',
    );
    devServer = await withoutOtelEnv(() =>
      TestWorkflowEnvironment.createLocal({
        server: {
          ...(cli ? { executable: { type: 'existing-path' as const, path: cli } } : {}),
          ip: '127.0.0.1',
          port: Number(env.TEMPORAL_PORT ?? 7233),
          ui: true,
          uiPort: UI_PORT,
          // Kept across restarts, like a real cluster: workflows survive `npm start` being stopped.
          dbFilename: env.TEMPORAL_DEV_DB ?? '.temporal-dev.db',
          searchAttributes: ALL_SEARCH_ATTRIBUTES,
          extraArgs: codecUrl ? ['--ui-codec-endpoint', codecUrl] : [],
        },
      }),
    );
    cleanups.push(() => devServer!.teardown());
    env.TEMPORAL_ADDRESS = devServer.address;
  }

  // With the emulator, the inbox runs too, with secrets of its own unless BROWSERAI_INBOX_* set
  // them: the emulator's sites send their `[sms-code=…]` and `[email-code=…]` codes to it.
  const inboxWanted = !env.BROWSERAI_API_TOKEN || Object.keys(env).some((name) => name.startsWith('BROWSERAI_INBOX_'));
  if (!env.BROWSERAI_API_TOKEN) {
    env.BROWSERAI_INBOX_TWILIO_AUTH_TOKEN ||= randomBytes(16).toString('hex');
    env.BROWSERAI_INBOX_MAILGUN_SIGNING_KEY ||= `key-${randomBytes(16).toString('hex')}`;
  }
  const inboxOptions = inboxWanted ? inboxOptionsFromEnv(env) : undefined;
  if (!env.BROWSERAI_API_TOKEN) {
    const emulator = await BrowserAIEmulator.start({
      port: Number(env.EMULATOR_PORT ?? 8787),
      ...emulatorOptionsFromEnv(env),
      inbox: {
        url: `http://127.0.0.1:${INBOX_PORT}`,
        twilioAuthToken: env.BROWSERAI_INBOX_TWILIO_AUTH_TOKEN,
        mailgunSigningKey: env.BROWSERAI_INBOX_MAILGUN_SIGNING_KEY,
      },
    });
    cleanups.push(() => emulator.close());
    env.BROWSERAI_API_TOKEN = emulator.apiToken;
    runtime.logger.addSecrets(emulator.apiToken);
    env.BROWSERAI_BASE_URL = emulator.baseUrl;
    runtime.announce(
      [
        '',
        '*****************************************************************************',
        '*  BROWSERAI_API_TOKEN is not set: using the local BrowserAI EMULATOR.       *',
        '*  No real browser runs. Set BROWSERAI_API_TOKEN to use BrowserAI itself.    *',
        `*  Emulator: ${emulator.baseUrl.padEnd(63)}*`,
        '*****************************************************************************',
        '',
      ].join('\n'),
    );
  }

  const config = loadWorkerConfig(env);
  const connection = await NativeConnection.connect(connectionOptions(config.temporal));
  cleanups.unshift(() => connection.close());
  const worker = await createWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    client: new BrowserAIClient({
      apiToken: config.browserai.apiToken,
      baseUrl: config.browserai.baseUrl,
      onRequest: recordBrowserAIRequest,
    }),
    shutdownGraceTime: config.shutdownGraceMs,
    dataConverter: codec ? dataConverterWithEncryption(codec) : undefined,
    plugins: tracing ? [tracing.plugin] : [],
  });

  let inboxUrl: string | undefined;
  if (inboxOptions) {
    const clientConnection = await Connection.connect(connectionOptions(config.temporal));
    cleanups.unshift(() => clientConnection.close());
    const inbox = await startInbox({
      ...inboxOptions,
      client: new Client({
        connection: clientConnection,
        namespace: config.temporal.namespace,
        dataConverter: codec ? dataConverterWithEncryption(codec) : undefined,
      }),
      taskQueue: config.temporal.taskQueue,
      port: INBOX_PORT,
    });
    cleanups.unshift(() => inbox.close());
    inboxUrl = inbox.url;
  }

  const ui = devServer ? `http://localhost:${UI_PORT}` : '(your cluster’s Temporal UI)';
  runtime.announce(
    [
      '',
      `Worker running: task queue "${config.temporal.taskQueue}", Temporal at ${describeTemporal(config.temporal)}.`,
      `Temporal UI:    ${ui}`,
      ...(metricsUrl ? [`Metrics:        ${metricsUrl} (Prometheus; WORKER_METRICS_ADDRESS=host:port or off)`] : []),
      ...(tracing ? [`Traces:         ${tracing.destination}`] : []),
      ...(codecUrl ? [`Payloads are encrypted; the UI decodes them through the codec server at ${codecUrl}.`] : []),
      ...(inboxUrl ? [`Inbox:          ${inboxUrl} (SMS and email codes: docs/one-time-codes.md#the-inbox)`] : []),
      '',
      'Start a task from another terminal:',
      '  npm run starter -- start --instruction "Open https://example.com and return the page title" --project demo --country US --wait',
      'One that needs a one-time code:',
      '  npm run starter -- start --instruction "Log in to the portal [needs-code]" --project demo --country US',
      '  npm run starter -- submit-code <workflow-id> 123456',
      'One whose code the emulated site texts to the inbox, which types it:',
      '  npm run starter -- start --instruction "Log in to the portal [sms-code=+14155550123]" --code-recipient +14155550123 --project demo --country US --wait',
      '',
      'Stop with Ctrl+C.',
    ].join('\n'),
  );
  try {
    await worker.run(); // returns after SIGINT/SIGTERM, once in-flight work is handed back
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

/**
 * Runs `start` with no OTEL_* variable in this process's environment, which a child process
 * inherits: Temporal's server reads them too, and refuses to start on a value it does not support
 * (`OTEL_TRACES_EXPORTER=console`). Our traces are the worker's, not the dev server's.
 */
async function withoutOtelEnv<T>(start: () => Promise<T>): Promise<T> {
  const saved = Object.entries(process.env).filter(([name]) => name.startsWith('OTEL_'));
  for (const [name] of saved) delete process.env[name];
  try {
    return await start();
  } finally {
    Object.assign(process.env, Object.fromEntries(saved));
  }
}

main().catch((err) => {
  logFatalAfterFlush(err, process.env, { messageOnly: true });
  process.exit(1);
});
