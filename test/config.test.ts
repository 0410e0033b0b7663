// Configuration from the environment: the Temporal connection through Temporal's standard
// environment configuration (@temporalio/envconfig: TEMPORAL_* variables and temporal.toml
// profiles), our own settings, and the start-up errors that say what to fix. Each test passes its
// env explicitly (no HOME, so the developer's own ~/.config/temporalio/temporal.toml is never read).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionOptions } from '@temporalio/client';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { BrowserAIClient } from '../src/browserai';
import { BrowserTasks } from '../src/starters/tasks';
import { runWorkerFromEnv } from '../src/worker';
import { WebhookSender } from '../src/activities/webhooks';
import { ConfigError } from '../src/contract/errors';
import {
  connectionOptions,
  loadTemporalConfig,
  RENAMED_TEMPORAL_VARIABLES,
  type TemporalConfig,
} from '../src/config/temporal';
import { loadWorkerConfig } from '../src/config/worker';
import { startTemporal } from '../dev/dev-server';

const dir = mkdtempSync(join(tmpdir(), 'browserai-config-'));
const file = (name: string, content: string): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const CERT = file('client.pem', '-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n');
const KEY = file('client.key', '-----BEGIN PRIVATE KEY-----\nkey\n-----END PRIVATE KEY-----\n');
const CA = file('ca.pem', '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n');
const MISSING = join(dir, 'missing.pem');

const TOML = file(
  'temporal.toml',
  `
[profile.default]
address = "default-host:7233"

[profile.prod]
address = "prod.tmprl.cloud:7233"
namespace = "prod-ns"
api_key = "prod-key"

[profile.prod.grpc_meta]
x_team_header = "browserai"

[profile.mtls]
address = "mtls.example.com:7233"
namespace = "mtls-ns"

[profile.mtls.tls]
client_cert_path = "${CERT}"
client_key_path = "${KEY}"
server_ca_cert_path = "${CA}"
server_name = "temporal.internal"

[profile.broken_cert.tls]
client_cert_path = "${MISSING}"
client_key_path = "${KEY}"
`,
);

after(() => rmSync(dir, { recursive: true, force: true }));

/** The problems loadTemporalConfig throws (it must throw a ConfigError). */
function problemsOf(env: Record<string, string>): string[] {
  try {
    loadTemporalConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`);
    return err.problems;
  }
  assert.fail('expected a ConfigError');
}

describe('Temporal connection: standard variables', () => {
  test('defaults: localhost:7233, namespace default, task queue browserai, plain gRPC', () => {
    const config = loadTemporalConfig({});
    assert.equal(config.address, 'localhost:7233');
    assert.equal(config.namespace, 'default');
    assert.equal(config.taskQueue, 'browserai');
    assert.equal(config.addressFrom, 'default');
    assert.equal(config.profile, undefined);
    assert.deepEqual(config.connectionOptions, { address: 'localhost:7233' });
  });

  test('address, namespace, task queue; an API key turns TLS on', () => {
    const config = loadTemporalConfig({
      TEMPORAL_ADDRESS: 'ns.a1b2c.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'ns.a1b2c',
      TEMPORAL_TASK_QUEUE: 'bq',
      TEMPORAL_API_KEY: 'secret-key',
    });
    assert.equal(config.address, 'ns.a1b2c.tmprl.cloud:7233');
    assert.equal(config.namespace, 'ns.a1b2c');
    assert.equal(config.taskQueue, 'bq');
    assert.equal(config.addressFrom, 'env');
    assert.deepEqual(config.connectionOptions, {
      address: 'ns.a1b2c.tmprl.cloud:7233',
      apiKey: 'secret-key',
      tls: true,
    });
  });

  test('mTLS: client certificate and key files are read, with the server CA and name', () => {
    const config = loadTemporalConfig({
      TEMPORAL_ADDRESS: 'temporal.example.com:7233',
      TEMPORAL_TLS_CLIENT_CERT_PATH: CERT,
      TEMPORAL_TLS_CLIENT_KEY_PATH: KEY,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: CA,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    const tls = config.connectionOptions.tls;
    assert.ok(tls && typeof tls === 'object');
    assert.equal(tls.serverNameOverride, 'temporal.internal');
    assert.match(Buffer.from(tls.clientCertPair!.crt).toString(), /client/);
    assert.match(Buffer.from(tls.clientCertPair!.key).toString(), /PRIVATE KEY/);
    assert.match(Buffer.from(tls.serverRootCACertificate!).toString(), /ca/);
    assert.equal(config.connectionOptions.apiKey, undefined);
  });

  test('certificates given as data (TEMPORAL_TLS_CLIENT_CERT_DATA / _KEY_DATA)', () => {
    const config = loadTemporalConfig({
      TEMPORAL_TLS_CLIENT_CERT_DATA: 'CERT-DATA',
      TEMPORAL_TLS_CLIENT_KEY_DATA: 'KEY-DATA',
    });
    const tls = config.connectionOptions.tls;
    assert.ok(tls && typeof tls === 'object');
    assert.equal(Buffer.from(tls.clientCertPair!.crt).toString(), 'CERT-DATA');
    assert.equal(Buffer.from(tls.clientCertPair!.key).toString(), 'KEY-DATA');
  });

  test('TEMPORAL_TLS: true/1 turn TLS on, false/0 off (even with an API key), anything else is refused', () => {
    // On: an empty TLS config (system CAs, no client certificate), the same as `tls: true`.
    const on = (value: string) => {
      const tls = loadTemporalConfig({ TEMPORAL_TLS: value }).connectionOptions.tls;
      assert.ok(
        tls === true || (typeof tls === 'object' && tls !== null && Object.values(tls).every((v) => v === undefined)),
        `${value}: ${tls}`,
      );
    };
    on('true');
    on('1');
    on('TRUE');
    assert.equal(loadTemporalConfig({ TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'k' }).connectionOptions.tls, false);
    assert.deepEqual(problemsOf({ TEMPORAL_TLS: 'yes' }), ['TEMPORAL_TLS must be true or false (got "yes")']);
  });

  test('TEMPORAL_GRPC_META_* become gRPC headers (lower case, `_` -> `-`)', () => {
    const config = loadTemporalConfig({ TEMPORAL_GRPC_META_X_MY_HEADER: 'v1', TEMPORAL_GRPC_META_AUTHZ: 'v2' });
    assert.deepEqual(config.connectionOptions.metadata, { 'x-my-header': 'v1', authz: 'v2' });
  });

  test('empty variables count as unset (as docker compose passes `${VAR:-}`)', () => {
    const config = loadTemporalConfig({
      TEMPORAL_ADDRESS: '',
      TEMPORAL_NAMESPACE: '',
      TEMPORAL_API_KEY: '',
      TEMPORAL_TLS: '',
      TEMPORAL_PROFILE: '',
    });
    assert.deepEqual(config.connectionOptions, { address: 'localhost:7233' });
    assert.equal(config.namespace, 'default');
  });

  test('the options suit both Connection (client) and NativeConnection (worker)', () => {
    const config: TemporalConfig = loadTemporalConfig({ TEMPORAL_API_KEY: 'k', TEMPORAL_GRPC_META_X: 'y' });
    const forClient: ConnectionOptions = connectionOptions(config);
    const forWorker: NativeConnectionOptions = connectionOptions(config);
    assert.deepEqual(forClient, forWorker);
  });
});

describe('Temporal connection: temporal.toml profiles', () => {
  test('TEMPORAL_PROFILE selects a profile of TEMPORAL_CONFIG_FILE', () => {
    const config = loadTemporalConfig({ TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'prod' });
    assert.equal(config.address, 'prod.tmprl.cloud:7233');
    assert.equal(config.namespace, 'prod-ns');
    assert.equal(config.addressFrom, 'profile');
    assert.deepEqual(config.profile, { name: 'prod', file: TOML });
    assert.deepEqual(config.connectionOptions, {
      address: 'prod.tmprl.cloud:7233',
      apiKey: 'prod-key',
      tls: true,
      metadata: { 'x-team-header': 'browserai' },
    });
  });

  test('a profile with mTLS reads its certificate files', () => {
    const config = loadTemporalConfig({ TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'mtls' });
    const tls = config.connectionOptions.tls;
    assert.ok(tls && typeof tls === 'object');
    assert.equal(tls.serverNameOverride, 'temporal.internal');
    assert.match(Buffer.from(tls.clientCertPair!.crt).toString(), /client/);
    assert.match(Buffer.from(tls.serverRootCACertificate!).toString(), /ca/);
  });

  test('variables override the profile', () => {
    const config = loadTemporalConfig({
      TEMPORAL_CONFIG_FILE: TOML,
      TEMPORAL_PROFILE: 'prod',
      TEMPORAL_NAMESPACE: 'other',
      TEMPORAL_ADDRESS: 'elsewhere:7233',
    });
    assert.equal(config.namespace, 'other');
    assert.equal(config.address, 'elsewhere:7233');
    assert.equal(config.addressFrom, 'env');
    assert.equal(config.connectionOptions.apiKey, 'prod-key');
  });

  test('without TEMPORAL_PROFILE the "default" profile is used', () => {
    const config = loadTemporalConfig({ TEMPORAL_CONFIG_FILE: TOML });
    assert.equal(config.address, 'default-host:7233');
    assert.deepEqual(config.profile, { name: 'default', file: TOML });
  });

  test(
    'the standard location ($XDG_CONFIG_HOME/temporalio/temporal.toml) is read when it exists',
    { skip: process.platform !== 'linux' },
    () => {
      const xdg = join(dir, 'xdg');
      mkdirSync(join(xdg, 'temporalio'), { recursive: true });
      writeFileSync(join(xdg, 'temporalio', 'temporal.toml'), '[profile.default]\nnamespace = "from-xdg"\n');
      const config = loadTemporalConfig({ XDG_CONFIG_HOME: xdg });
      assert.equal(config.namespace, 'from-xdg');
      assert.equal(config.address, 'localhost:7233');
      assert.equal(config.addressFrom, 'default');
    },
  );

  test('no config file is not an error', () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const config = loadTemporalConfig({ HOME: home, XDG_CONFIG_HOME: join(home, 'nothing-here') });
    assert.equal(config.address, 'localhost:7233');
    assert.equal(config.profile, undefined);
  });
});

describe('Temporal connection: start-up errors', () => {
  for (const [old, standard] of Object.entries(RENAMED_TEMPORAL_VARIABLES)) {
    test(`${old} is refused, naming ${standard}`, () => {
      const problems = problemsOf({ [old]: CERT });
      assert.equal(problems.length, 1);
      assert.match(problems[0], new RegExp(`^${old} is no longer read: rename it to ${standard}\\b`));
    });
  }

  test('the three old names are refused at once, even next to the new ones', () => {
    const problems = problemsOf({
      TEMPORAL_TLS_CERT_PATH: CERT,
      TEMPORAL_TLS_KEY_PATH: KEY,
      TEMPORAL_TLS_CA_PATH: CA,
      TEMPORAL_TLS_CLIENT_CERT_PATH: CERT,
      TEMPORAL_TLS_CLIENT_KEY_PATH: KEY,
    });
    assert.deepEqual(
      problems.map((p) => p.split(' ')[0]),
      ['TEMPORAL_TLS_CERT_PATH', 'TEMPORAL_TLS_KEY_PATH', 'TEMPORAL_TLS_CA_PATH'],
    );
  });

  test('an old name set empty is ignored', () => {
    assert.doesNotThrow(() => loadTemporalConfig({ TEMPORAL_TLS_CERT_PATH: '' }));
  });

  test('invalid TOML: a ConfigError naming the file and the line', () => {
    const bad = file('bad.toml', '[profile.default]\naddress = "a:7233"\n[profile.prod\n');
    const problems = problemsOf({ TEMPORAL_CONFIG_FILE: bad });
    assert.equal(problems.length, 1);
    assert.match(
      problems[0],
      new RegExp(`^TEMPORAL_CONFIG_FILE=${bad} is not valid TOML \\(.+, line 3, column \\d+\\): fix the file`),
    );
  });

  test('unknown profile: a ConfigError listing the profiles there are', () => {
    const problems = problemsOf({ TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'staging' });
    assert.equal(problems.length, 1);
    assert.match(
      problems[0],
      /^TEMPORAL_PROFILE=staging: no \[profile\.staging\] in .*temporal\.toml \(it has "default", "prod", "mtls", "broken_cert"\)/,
    );
  });

  test('TEMPORAL_PROFILE without any config file', () => {
    const problems = problemsOf({ TEMPORAL_PROFILE: 'prod' });
    assert.match(problems[0], /^TEMPORAL_PROFILE=prod, but the Temporal config file does not exist or has no profiles/);
  });

  test('TEMPORAL_CONFIG_FILE naming a file that does not exist', () => {
    const problems = problemsOf({ TEMPORAL_CONFIG_FILE: join(dir, 'nope.toml') });
    assert.deepEqual(problems, [
      `TEMPORAL_CONFIG_FILE=${join(dir, 'nope.toml')} does not exist: point it at your temporal.toml, or unset it`,
    ]);
  });

  test('a config file that cannot be read', () => {
    const problems = problemsOf({ TEMPORAL_CONFIG_FILE: dir }); // a directory: EISDIR, even for root
    assert.deepEqual(problems, [
      `TEMPORAL_CONFIG_FILE=${dir} cannot be read (EISDIR): make it a readable file, or point TEMPORAL_CONFIG_FILE elsewhere`,
    ]);
  });

  test('unreadable certificate files: each named, by the variable or the profile key that set it', () => {
    const problems = problemsOf({
      TEMPORAL_TLS_CLIENT_CERT_PATH: MISSING,
      TEMPORAL_TLS_CLIENT_KEY_PATH: KEY,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: MISSING,
    });
    assert.deepEqual(problems, [
      `TEMPORAL_TLS_CLIENT_CERT_PATH=${MISSING} cannot be read (ENOENT): point it at the client certificate's PEM file`,
      `TEMPORAL_TLS_SERVER_CA_CERT_PATH=${MISSING} cannot be read (ENOENT): point it at the server CA certificate's PEM file`,
    ]);
    const fromProfile = problemsOf({ TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'broken_cert' });
    assert.deepEqual(fromProfile, [
      `client_cert_path "${MISSING}" in profile "broken_cert" of ${TOML} cannot be read (ENOENT): point it at the client certificate's PEM file`,
    ]);
  });

  test('a client certificate without its key (or the other way round)', () => {
    assert.match(
      problemsOf({ TEMPORAL_TLS_CLIENT_CERT_PATH: CERT })[0],
      /^TEMPORAL_TLS_CLIENT_CERT_PATH is set but no client key: .*TEMPORAL_TLS_CLIENT_KEY_PATH/,
    );
    assert.match(
      problemsOf({ TEMPORAL_TLS_CLIENT_KEY_PATH: KEY })[0],
      /^TEMPORAL_TLS_CLIENT_KEY_PATH is set but no client certificate: .*TEMPORAL_TLS_CLIENT_CERT_PATH/,
    );
  });

  test('a certificate given both as a path and as data', () => {
    const problems = problemsOf({
      TEMPORAL_TLS_CLIENT_CERT_PATH: CERT,
      TEMPORAL_TLS_CLIENT_CERT_DATA: 'x',
      TEMPORAL_TLS_CLIENT_KEY_PATH: KEY,
    });
    assert.match(problems[0], /^the TLS client certificate is given both as a file and as data .*: keep one$/);
  });

  test('TEMPORAL_TLS_DISABLE_HOST_VERIFICATION=true is refused (the TypeScript SDK cannot do it)', () => {
    assert.match(
      problemsOf({ TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' })[0],
      /not supported .* TEMPORAL_TLS_SERVER_NAME/,
    );
    assert.doesNotThrow(() => loadTemporalConfig({ TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'false' }));
  });

  test('the worker lists Temporal problems together with its own', () => {
    assert.throws(
      () =>
        loadWorkerConfig({ TEMPORAL_TLS_CERT_PATH: CERT, TEMPORAL_PROFILE: 'nope', WORKER_SHUTDOWN_GRACE_MS: '-1' }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.problems.length, 4, err.message);
        assert.match(
          err.message,
          /TEMPORAL_TLS_CERT_PATH is no longer read: rename it to TEMPORAL_TLS_CLIENT_CERT_PATH/,
        );
        assert.match(err.message, /TEMPORAL_PROFILE=nope/);
        assert.match(err.message, /BROWSERAI_API_TOKEN is not set/);
        assert.match(err.message, /WORKER_SHUTDOWN_GRACE_MS must be a positive number/);
        return true;
      },
    );
  });

  test('WORKER_NEXUS_ALLOW: the allowances of Nexus callers, by word; nothing when unset; anything else refused', () => {
    const allow = (value?: string, service = 'true') =>
      loadWorkerConfig({
        BROWSERAI_API_TOKEN: 't',
        WORKER_NEXUS_SERVICE: service,
        ...(value === undefined ? {} : { WORKER_NEXUS_ALLOW: value }),
      }).nexusAllow;
    assert.deepEqual(allow(), {});
    assert.deepEqual(
      allow(
        'totp:PORTAL, totp:BANK,code-template,webhooks,webhook-reference:nexus:team-a:,notify:partner-,task-queue:browserai-nexus,code-recipient:+14155550123,priority,max-timeout-ms:600000',
      ),
      {
        totpSecretNames: ['PORTAL', 'BANK'],
        codeInstructionTemplates: true,
        webhooks: true,
        webhookReferencePrefixes: ['nexus:team-a:'],
        notifyWorkflowIdPrefixes: ['partner-'],
        activityTaskQueues: ['browserai-nexus'],
        codeRecipients: ['+14155550123'],
        priority: true,
        maxTimeoutMs: 600_000,
      },
    );
    assert.throws(
      () => allow('totp,everything,activity-priority,max-timeout-ms:2h'),
      /"totp" is not an allowance.*"everything" is not an allowance.*"activity-priority".*"max-timeout-ms:2h" is not an allowance; write comma-separated totp:NAME, code-template, .*priority, max-timeout-ms:MS/s,
    );
    assert.throws(() => allow('webhooks', 'false'), /WORKER_NEXUS_ALLOW is set but WORKER_NEXUS_SERVICE is not true/);
  });

  test('WORKER_NEXUS_SERVICE: true or 1 serves the Nexus service, false, 0 or unset does not, anything else is refused', () => {
    const nexusService = (value?: string) =>
      loadWorkerConfig({ BROWSERAI_API_TOKEN: 't', ...(value === undefined ? {} : { WORKER_NEXUS_SERVICE: value }) })
        .nexusService;
    for (const on of ['true', 'TRUE', '1']) assert.equal(nexusService(on), true, on);
    for (const off of [undefined, '', 'false', '0']) assert.equal(nexusService(off), false, String(off));
    assert.throws(() => nexusService('yes'), /WORKER_NEXUS_SERVICE must be true or false \(got "yes"\)/);
  });

  test('nonsense limits, names and addresses are refused at start, each saying what to write instead', async () => {
    // Breaks if any of these started a worker: a 0.5 ms timeout (every create AmbiguousRequest), a
    // 1e10 ms one, fractional slot or cache sizes, a rate of one request in 31 years, a blank task
    // queue, a base URL with a space, a metrics address nothing can listen on.
    const refusals: Array<[Record<string, string>, RegExp]> = [
      [
        { BROWSERAI_REQUEST_TIMEOUT_MS: '0.5' },
        /BROWSERAI_REQUEST_TIMEOUT_MS must be a whole number of milliseconds .* from 1000 to 120000 \(got "0\.5"\)/,
      ],
      [
        { BROWSERAI_REQUEST_TIMEOUT_MS: '1e10' },
        /BROWSERAI_REQUEST_TIMEOUT_MS must be .* from 1000 to 120000 \(got "1e10"\)/,
      ],
      [
        { WORKER_MAX_CONCURRENT_ACTIVITIES: '2.5' },
        /WORKER_MAX_CONCURRENT_ACTIVITIES must be a whole number of activities .* \(got "2\.5"\)/,
      ],
      [
        { WORKER_MAX_CACHED_WORKFLOWS: '0.1' },
        /WORKER_MAX_CACHED_WORKFLOWS must be a whole number of workflows from 1 .* \(got "0\.1"\)/,
      ],
      [
        { BROWSERAI_MAX_REQUESTS_PER_SECOND: '1e-9' },
        /BROWSERAI_MAX_REQUESTS_PER_SECOND must be at least 0\.1 .* or unset for no limit \(got "1e-9"\)/,
      ],
      [
        { BROWSERAI_MAX_RESPONSE_BYTES: '100' },
        /BROWSERAI_MAX_RESPONSE_BYTES must be a whole number of bytes .* at least 65536 \(got "100"\)/,
      ],
      [
        { TEMPORAL_TASK_QUEUE: '   ' },
        /TEMPORAL_TASK_QUEUE must be a task queue name without spaces around it .* or unset it for the default/,
      ],
      [
        { BROWSERAI_BASE_URL: 'https://browser.ai/api v1' },
        /BROWSERAI_BASE_URL must be an http\(s\) URL without spaces, e\.g\. https:\/\/browser\.ai\/api\/v1/,
      ],
      [
        { WORKER_METRICS_ADDRESS: '999.1.1.1:9464' },
        /WORKER_METRICS_ADDRESS must be host:port, e\.g\. 127\.0\.0\.1:9464/,
      ],
      [{ WORKER_METRICS_ADDRESS: '-bad-.example:9464' }, /WORKER_METRICS_ADDRESS must be host:port/],
      [{ WORKER_METRICS_ADDRESS: '[not:an:ip:zz]:9464' }, /WORKER_METRICS_ADDRESS must be host:port/],
    ];
    for (const [env, problem] of refusals) {
      assert.throws(
        () => loadWorkerConfig({ BROWSERAI_API_TOKEN: 't', ...env }),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError, String(err));
          assert.equal(err.problems.length, 1, err.message);
          assert.match(err.message, problem);
          return true;
        },
        JSON.stringify(env),
      );
    }
    // The worker's entry point refuses before it connects anywhere.
    await assert.rejects(
      runWorkerFromEnv({ BROWSERAI_API_TOKEN: 't', BROWSERAI_REQUEST_TIMEOUT_MS: '0.5' }),
      (err: unknown) => err instanceof ConfigError && /BROWSERAI_REQUEST_TIMEOUT_MS/.test(err.message),
    );
    // Sensible values still pass.
    const ok = loadWorkerConfig({
      BROWSERAI_API_TOKEN: 't',
      BROWSERAI_REQUEST_TIMEOUT_MS: '45000',
      WORKER_MAX_CONCURRENT_ACTIVITIES: '20',
      WORKER_MAX_CACHED_WORKFLOWS: '100',
      BROWSERAI_MAX_REQUESTS_PER_SECOND: '0.5',
      BROWSERAI_MAX_RESPONSE_BYTES: '1048576',
      TEMPORAL_TASK_QUEUE: 'browserai-eu',
      BROWSERAI_BASE_URL: 'http://127.0.0.1:8787/api/v1',
      WORKER_METRICS_ADDRESS: '[::1]:9464',
    });
    assert.equal(ok.browserai.requestTimeoutMs, 45_000);
    assert.equal(ok.browserai.maxResponseBytes, 1_048_576);
    assert.equal(ok.maxConcurrentActivities, 20);
    assert.equal(ok.temporal.taskQueue, 'browserai-eu');
    // A library user's client refuses the same nonsense.
    assert.throws(
      () => new BrowserAIClient({ apiToken: 't', timeoutMs: 0.5 }),
      /timeoutMs must be whole milliseconds from 1000 to 120000/,
    );
    assert.throws(
      () => new BrowserAIClient({ apiToken: 't', maxRequestsPerSecond: 1e-9 }),
      /maxRequestsPerSecond must be at least 0\.1/,
    );
  });

  test('BrowserTasks.fromEnv refuses before connecting, with a ConfigError', async () => {
    await assert.rejects(BrowserTasks.fromEnv({ TEMPORAL_TLS_KEY_PATH: KEY }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /TEMPORAL_TLS_KEY_PATH is no longer read: rename it to TEMPORAL_TLS_CLIENT_KEY_PATH/);
      return true;
    });
  });
});

describe('Temporal connection: a real dev server, reached through a temporal.toml profile', () => {
  let server: TestWorkflowEnvironment;
  let env: Record<string, string>;
  before(async () => {
    server = await startTemporal();
    const toml = file('dev.toml', `[profile.dev]\naddress = "${server.address}"\nnamespace = "default"\n`);
    env = { TEMPORAL_CONFIG_FILE: toml, TEMPORAL_PROFILE: 'dev', TEMPORAL_TASK_QUEUE: 'config-test' };
  });
  after(() => server?.teardown());

  test('BrowserTasks.fromEnv (Connection) connects', async () => {
    const tasks = await BrowserTasks.fromEnv(env);
    try {
      assert.equal(tasks.taskQueue, 'config-test');
      const info = await tasks.client.workflowService.getSystemInfo({});
      assert.ok(info.serverVersion);
    } finally {
      await tasks.client.connection.close();
    }
  });

  test('the worker options (NativeConnection) connect', async () => {
    const config = loadTemporalConfig(env);
    assert.equal(config.addressFrom, 'profile');
    const connection = await NativeConnection.connect(connectionOptions(config));
    try {
      const info = await connection.workflowService.getSystemInfo({});
      assert.ok(info.serverVersion);
    } finally {
      await connection.close();
    }
  });
});

describe('the worker side of the code loop: TOTP secrets and the webhook destination', () => {
  const TOTP = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
  const SIGNING = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const base = { BROWSERAI_API_TOKEN: 'token' };

  test('reads secrets from variables and a file, and the destination with both rotation secrets', () => {
    const secrets = file('totp.json', JSON.stringify({ gitlab: { secret: TOTP, digits: 8 } }));
    const config = loadWorkerConfig({
      ...base,
      BROWSERAI_TOTP_SECRET_GITHUB: TOTP,
      BROWSERAI_TOTP_SECRETS_FILE: secrets,
      BROWSERAI_WEBHOOK_URL: 'https://hooks.example.com/browserai',
      BROWSERAI_WEBHOOK_SECRET: SIGNING,
      BROWSERAI_WEBHOOK_SECRET_PREVIOUS: SIGNING.replace('Bw', 'Cw'),
    });
    assert.deepEqual(config.codeLoop.totpSecrets, { GITHUB: TOTP, gitlab: { secret: TOTP, digits: 8 } });
    assert.equal(config.codeLoop.webhooks?.url, 'https://hooks.example.com/browserai');
    assert.equal(config.codeLoop.webhooks?.secrets.length, 2);
  });

  test('problems name the variable or the file, never a secret', () => {
    const bad = 'not-base32-at-all!';
    assert.throws(
      () =>
        loadWorkerConfig({
          ...base,
          BROWSERAI_TOTP_SECRET_GITHUB: bad,
          BROWSERAI_WEBHOOK_URL: 'ftp://hooks.example.com',
          BROWSERAI_WEBHOOK_SECRET: 'hunter2-not-whsec',
        }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.problems.length, 3, err.message);
        assert.match(err.message, /BROWSERAI_TOTP_SECRET_GITHUB: the secret must be base32/);
        assert.match(err.message, /BROWSERAI_WEBHOOK_URL must be an http\(s\) URL/);
        assert.match(err.message, /BROWSERAI_WEBHOOK_SECRET must be whsec_/);
        assert.ok(!err.message.includes(bad) && !err.message.includes('hunter2'), err.message);
        return true;
      },
    );
    assert.throws(
      () => loadWorkerConfig({ ...base, BROWSERAI_WEBHOOK_URL: 'https://hooks.example.com' }),
      /BROWSERAI_WEBHOOK_SECRET is not/,
    );
  });

  test('a base64url secret is refused at start, naming the variable, instead of stopping the worker at its first event', () => {
    // 0xfb bytes: `+/v7...` in base64, `-_v7...` in base64url, which the signing library cannot decode.
    const base64url = `whsec_${Buffer.alloc(32, 0xfb).toString('base64url')}`;
    const env = { ...base, BROWSERAI_WEBHOOK_URL: 'https://hooks.example.com/browserai' };
    assert.throws(
      () =>
        loadWorkerConfig({ ...env, BROWSERAI_WEBHOOK_SECRET: SIGNING, BROWSERAI_WEBHOOK_SECRET_PREVIOUS: base64url }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.problems.length, 1, err.message);
        assert.match(
          err.problems[0]!,
          /^BROWSERAI_WEBHOOK_SECRET_PREVIOUS must be whsec_ followed by standard base64 .*not base64url/,
        );
        assert.ok(!err.message.includes(base64url.slice(6)), err.message);
        return true;
      },
    );
    // The same check guards the plugin's option, so a worker built in code does not start either.
    assert.throws(
      () => new WebhookSender({ url: 'https://hooks.example.com', secrets: [base64url] }),
      /webhooks\.secrets\[0\] must be whsec_ followed by standard base64/,
    );
    const standard = `whsec_${Buffer.alloc(32, 0xfb).toString('base64')}`;
    assert.equal(loadWorkerConfig({ ...env, BROWSERAI_WEBHOOK_SECRET: standard }).codeLoop.webhooks?.secrets.length, 1);
  });

  test('plain http is refused except to loopback, saying what to write', () => {
    const env = { ...base, BROWSERAI_WEBHOOK_SECRET: SIGNING };
    assert.throws(
      () => loadWorkerConfig({ ...env, BROWSERAI_WEBHOOK_URL: 'http://hooks.example.com/browserai' }),
      /BROWSERAI_WEBHOOK_URL must be an https:\/\/ URL \(write https:\/\/hooks\.example\.com\/browserai\)/,
    );
    for (const url of ['http://127.0.0.1:8080/h', 'http://localhost/h', 'http://[::1]:9/h', 'http://127.8.9.10/h'])
      assert.equal(loadWorkerConfig({ ...env, BROWSERAI_WEBHOOK_URL: url }).codeLoop.webhooks?.url, url);
    for (const url of ['http://10.0.0.5/h', 'http://localhost.example.com/h', 'http://[::2]/h'])
      assert.throws(() => loadWorkerConfig({ ...env, BROWSERAI_WEBHOOK_URL: url }), /must be an https:\/\/ URL/, url);
  });

  test('an unusable proxy variable is a configuration problem at start, naming the variable', () => {
    assert.throws(
      () =>
        loadWorkerConfig({
          ...base,
          BROWSERAI_WEBHOOK_SECRET: SIGNING,
          BROWSERAI_WEBHOOK_URL: 'https://hooks.example.com/browserai',
          HTTPS_PROXY: 'socks5://proxy.example.com:1080',
        }),
      /HTTPS_PROXY names a socks5 proxy.*webhook events to https:\/\/hooks\.example\.com would go through it/,
    );
  });
});
