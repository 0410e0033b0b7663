// Configuration from the environment, checked as a whole at start-up so a misconfigured
// worker says everything that is wrong at once, and what to set, before it connects anywhere.
//
// The Temporal connection (address, namespace, API key, TLS, gRPC metadata) follows Temporal's
// standard environment configuration, through @temporalio/envconfig: the TEMPORAL_* variables the
// Temporal CLI and every SDK read, and `temporal.toml` profiles (TEMPORAL_CONFIG_FILE,
// TEMPORAL_PROFILE). Our own settings (TEMPORAL_TASK_QUEUE, BROWSERAI_*, WORKER_*,
// TEMPORAL_PAYLOAD_KEY*) stay ours.
import { existsSync, readFileSync } from 'node:fs';
import { platform } from 'node:os';
import { isIP } from 'node:net';
import { isAbsolute, join } from 'node:path';
import type { ConnectionOptions } from '@temporalio/client';
import {
  loadClientConfig,
  loadClientConfigProfile,
  toClientOptions,
  type ClientConfigProfile,
  type ConfigDataSource,
} from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import {
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MIN_MAX_RESPONSE_BYTES,
  MIN_REQUESTS_PER_SECOND,
  REQUEST_TIMEOUT_RANGE_MS,
} from './browserai/client';
import { fleetLimitProblems, type FleetLimitOptions } from './activities/fleet';
import { codeLoopConfigFrom, type CodeLoopConfig } from './code-loop-config';
import { ConfigError } from './contract/errors';
import { allowanceArgument, CALLER_ALLOWANCE_KINDS } from './contract/callers';
import type { CallerAllowanceName } from './contract/input';
import { NEXUS_ALLOW_WORDS } from './nexus/fence';
import type { NexusServiceOptions } from './nexus/options';
import { LOG_LEVELS, parseLogFormat, parseLogLevel, type LogFormat, type LogLevel } from './telemetry/logging';

/**
 * What both `Connection.connect` (@temporalio/client, the starters) and `NativeConnection.connect`
 * (@temporalio/worker) accept: the fields the two option types share, with the narrower type of each.
 */
export type TemporalConnectionOptions = Pick<ConnectionOptions, 'address' | 'tls' | 'metadata'> &
  Pick<NativeConnectionOptions, 'address' | 'tls' | 'metadata' | 'apiKey'> & { address: string };

export interface TemporalConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  /** Pass as they are to Connection.connect or NativeConnection.connect. */
  connectionOptions: TemporalConnectionOptions;
  /** Where the address came from: TEMPORAL_ADDRESS, the config file's profile, or the default (localhost:7233). */
  addressFrom: 'env' | 'profile' | 'default';
  /** The temporal.toml profile in use, if the file has it. */
  profile?: { name: string; file: string };
}

export interface WorkerConfig {
  temporal: TemporalConfig;
  browserai: {
    baseUrl: string;
    apiToken: string;
    requestTimeoutMs: number;
    /** BROWSERAI_MAX_RESPONSE_BYTES: the largest answer body read (BrowserAIClientOptions.maxResponseBytes). */
    maxResponseBytes: number;
    maxRequestsPerSecond?: number;
  };
  shutdownGraceMs: number;
  maxConcurrentActivities: number;
  maxCachedWorkflows: number | undefined;
  /** WORKER_METRICS_ADDRESS: where the Prometheus endpoint listens (`host:port`); undefined: no endpoint. */
  metricsAddress?: string;
  /** WORKER_LOG_FORMAT and WORKER_LOG_LEVEL. */
  log: WorkerLogConfig;
  /** TOTP secrets and the webhook destination (BROWSERAI_TOTP_*, BROWSERAI_WEBHOOK_*; code-loop-config.ts). */
  codeLoop: CodeLoopConfig;
  /** TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID: the Worker Deployment Version this worker polls as; undefined: unversioned. */
  deployment?: WorkerDeploymentVersionConfig;
  /** WORKER_NEXUS_SERVICE: register the `browserai` Nexus service on the worker's task queue. */
  nexusService: boolean;
  /** WORKER_NEXUS_ALLOW: what the Nexus service's callers may set beyond their own task; empty: nothing. */
  nexusAllow: NexusServiceOptions;
  /** BROWSERAI_FLEET_*: the fleet-wide limit on running tasks; undefined: none. */
  fleetLimit?: FleetLimitOptions;
}

export interface WorkerDeploymentVersionConfig {
  deploymentName: string;
  buildId: string;
}

export interface WorkerLogConfig {
  /** `text`: the SDK's DefaultLogger lines on stderr; `json`: one JSON object per line on stdout. */
  format: LogFormat;
  /** The least severe level written; the core's (Rust) logs are forwarded at it too. */
  level: LogLevel;
}

type Env = Record<string, string | undefined>;

export const DEFAULT_TASK_QUEUE = 'browserai';
export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';
export const DEFAULT_TEMPORAL_NAMESPACE = 'default';

/** Names this project read before it used Temporal's standard ones: refused, so a rename is never silently ignored. */
export const RENAMED_TEMPORAL_VARIABLES: Readonly<Record<string, string>> = {
  TEMPORAL_TLS_CERT_PATH: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  TEMPORAL_TLS_KEY_PATH: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
  TEMPORAL_TLS_CA_PATH: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
};

const TLS_FILES = [
  { field: 'clientCert', what: 'client certificate', env: 'TEMPORAL_TLS_CLIENT_CERT', toml: 'client_cert' },
  { field: 'clientKey', what: 'client key', env: 'TEMPORAL_TLS_CLIENT_KEY', toml: 'client_key' },
  { field: 'serverCACert', what: 'server CA certificate', env: 'TEMPORAL_TLS_SERVER_CA_CERT', toml: 'server_ca_cert' },
] as const;

/**
 * The Temporal connection from the environment, for the worker, the starters and the CLI alike:
 * the standard TEMPORAL_* variables over the selected profile of temporal.toml, plus
 * TEMPORAL_TASK_QUEUE. Pass `connectionOptions` to Connection.connect or NativeConnection.connect.
 *
 * Without `problems`, throws a ConfigError listing every problem. With it, adds them there and
 * returns defaults where a value was unusable (loadWorkerConfig reports them with its own).
 */
export function loadTemporalConfig(env: Env = process.env, problems?: string[]): TemporalConfig {
  if (!problems) {
    const found: string[] = [];
    const config = loadTemporalConfig(env, found);
    if (found.length > 0) throw new ConfigError(found);
    return config;
  }
  for (const [old, standard] of Object.entries(RENAMED_TEMPORAL_VARIABLES)) {
    if (env[old]) {
      problems.push(`${old} is no longer read: rename it to ${standard} (Temporal's standard name for it, same value)`);
    }
  }

  const vars = envconfigVars(env, problems);
  const explicitFile = vars.TEMPORAL_CONFIG_FILE;
  const file = explicitFile ?? defaultConfigFilePath(vars);
  const fileLabel = file
    ? explicitFile
      ? `TEMPORAL_CONFIG_FILE=${file}`
      : `the Temporal config file ${file}`
    : 'the Temporal config file';
  const profileName = vars.TEMPORAL_PROFILE ?? 'default';
  let disableFile = false;
  if (explicitFile && !existsSync(explicitFile)) {
    problems.push(`TEMPORAL_CONFIG_FILE=${explicitFile} does not exist: point it at your temporal.toml, or unset it`);
    disableFile = true; // still check the variables
  }
  if (vars.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION === 'true') {
    problems.push(
      'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported by the Temporal TypeScript SDK: unset it, and set TEMPORAL_TLS_SERVER_NAME ' +
        "to the name in the server's certificate (and TEMPORAL_TLS_SERVER_CA_CERT_PATH to its CA) instead",
    );
  }

  // The profile as the file has it (to tell where a value came from), then with the variables over it.
  let fileProfile: ClientConfigProfile = {};
  let profile: ClientConfigProfile;
  try {
    if (!disableFile) fileProfile = loadClientConfigProfile({ overrideEnvVars: vars, disableEnv: true });
    profile = loadClientConfigProfile({ overrideEnvVars: vars, disableFile });
  } catch (err) {
    problems.push(envconfigProblem(err, { file, fileLabel, profileName, vars }));
    try {
      profile = loadClientConfigProfile({ overrideEnvVars: vars, disableFile: true }); // to check the variables still
    } catch {
      profile = {};
    }
  }
  const profileUsed = !disableFile && file !== undefined && Object.keys(fileProfile).length > 0;
  // Names the variable, or the key of the profile, that set a value.
  const origin = (envName: string, tomlKey: string, value?: string): string =>
    vars[envName] !== undefined
      ? `${envName}${value === undefined ? '' : `=${value}`}`
      : `${tomlKey}${value === undefined ? '' : ` "${value}"`} in profile "${profileName}" of ${file ?? 'the Temporal config file'}`;

  // envconfig reads the certificate files (unless TLS is off); check them first so every unreadable one is named.
  const tls = profile.tls?.disabled ? undefined : profile.tls;
  let tlsReadable = true;
  for (const f of TLS_FILES) {
    const source: ConfigDataSource | undefined = tls?.[f.field];
    if (!source || !('path' in source)) continue;
    try {
      readFileSync(source.path);
    } catch (err) {
      tlsReadable = false;
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      problems.push(
        `${origin(`${f.env}_PATH`, `${f.toml}_path`, source.path)} cannot be read (${code}): point it at the ${f.what}'s PEM file`,
      );
    }
  }
  if (tls && Boolean(tls.clientCert) !== Boolean(tls.clientKey)) {
    const [given, missing] = tls.clientCert ? [TLS_FILES[0], TLS_FILES[1]] : [TLS_FILES[1], TLS_FILES[0]];
    const givenKind = 'path' in (tls[given.field] as ConfigDataSource) ? 'PATH' : 'DATA';
    problems.push(
      `${origin(`${given.env}_${givenKind}`, `${given.toml}_${givenKind.toLowerCase()}`)} is set but no ${missing.what}: mTLS needs both, ` +
        `so set ${missing.env}_PATH (or ${missing.toml}_path in the profile) too, or neither`,
    );
  }

  let connect: ReturnType<typeof toClientOptions>['connectionOptions'] = {};
  let namespace = profile.namespace;
  if (tlsReadable) {
    try {
      const options = toClientOptions(profile);
      connect = options.connectionOptions;
      namespace = options.namespace;
    } catch (err) {
      problems.push(envconfigProblem(err, { file, fileLabel, profileName, vars }));
    }
  }

  const address = connect.address || DEFAULT_TEMPORAL_ADDRESS;
  const connectionOptions: TemporalConnectionOptions = { address };
  if (connect.tls !== undefined && connect.tls !== null) connectionOptions.tls = connect.tls;
  if (connect.apiKey) connectionOptions.apiKey = connect.apiKey;
  const metadata = connect.metadata && Object.entries(connect.metadata);
  // envconfig turns only the first `_` of a header name into `-` (x_my_header -> x-my_header); the
  // Temporal CLI and the other SDKs turn them all.
  if (metadata && metadata.length > 0)
    connectionOptions.metadata = Object.fromEntries(metadata.map(([k, v]) => [k.replaceAll('_', '-'), v]));

  return {
    address,
    namespace: namespace || DEFAULT_TEMPORAL_NAMESPACE,
    taskQueue: taskQueueFrom(env, problems),
    connectionOptions,
    addressFrom:
      vars.TEMPORAL_ADDRESS !== undefined ? 'env' : profileUsed && fileProfile.address ? 'profile' : 'default',
    profile: profileUsed ? { name: profileName, file: file! } : undefined,
  };
}

/** `host:port, namespace "x" (profile "p" of /path/temporal.toml)`, for start-up lines. */
export function describeTemporal(config: TemporalConfig): string {
  const profile = config.profile ? ` (profile "${config.profile.name}" of ${config.profile.file})` : '';
  return `${config.address}, namespace "${config.namespace}"${profile}`;
}

/**
 * The variables envconfig sees: unset and empty ones left out (empty means unset here, as for our
 * other settings), except TEMPORAL_GRPC_META_* where empty removes a header the profile sets.
 */
function envconfigVars(env: Env, problems: string[]): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || (value === '' && !name.startsWith('TEMPORAL_GRPC_META_'))) continue;
    vars[name] = value;
  }
  for (const name of ['TEMPORAL_TLS', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION']) {
    const raw = vars[name];
    if (raw === undefined) continue;
    // envconfig takes anything but `true`/`1` as false: `TEMPORAL_TLS=yes` would turn TLS off.
    if (/^(true|1)$/i.test(raw.trim())) vars[name] = 'true';
    else if (/^(false|0)$/i.test(raw.trim())) vars[name] = 'false';
    else {
      problems.push(`${name} must be true or false (got "${raw}")`);
      delete vars[name];
    }
  }
  return vars;
}

/** Where envconfig looks when TEMPORAL_CONFIG_FILE is unset (its own rule, repeated here for messages). */
function defaultConfigFilePath(vars: Record<string, string>): string | undefined {
  const os = platform();
  if (os === 'win32') return vars.APPDATA ? join(vars.APPDATA, 'temporalio', 'temporal.toml') : undefined;
  if (os === 'darwin')
    return vars.HOME ? join(vars.HOME, 'Library', 'Application Support', 'temporalio', 'temporal.toml') : undefined;
  const xdg = vars.XDG_CONFIG_HOME;
  if (xdg) return isAbsolute(xdg) ? join(xdg, 'temporalio', 'temporal.toml') : undefined;
  return vars.HOME ? join(vars.HOME, '.config', 'temporalio', 'temporal.toml') : undefined;
}

/** An error from envconfig as a problem that says what to fix. */
function envconfigProblem(
  err: unknown,
  context: { file?: string; fileLabel: string; profileName: string; vars: Record<string, string> },
): string {
  const { file, fileLabel, profileName, vars } = context;
  const e = err as Partial<NodeJS.ErrnoException> & { codeblock?: unknown; line?: unknown; column?: unknown };
  const message = e?.message ?? String(err);
  if (typeof e.codeblock === 'string') {
    const reason = message.split('\n')[0].replace(/^Invalid TOML document:\s*/, '');
    return `${fileLabel} is not valid TOML (${reason}, line ${e.line}, column ${e.column}): fix the file${vars.TEMPORAL_CONFIG_FILE ? ', or point TEMPORAL_CONFIG_FILE at another one' : ''}`;
  }
  if (e.code && e.syscall) {
    return `${fileLabel} cannot be read (${e.code}${e.path ? ` on ${e.path}` : ''}): make it a readable file${vars.TEMPORAL_CONFIG_FILE ? ', or point TEMPORAL_CONFIG_FILE elsewhere' : ''}`;
  }
  if (/^Profile '.*' not found/.test(message)) {
    let known: string[] | undefined;
    try {
      known = Object.keys(loadClientConfig({ overrideEnvVars: vars }).profiles);
    } catch {
      // only to list the profiles there are
    }
    if (!known || known.length === 0) {
      return (
        `TEMPORAL_PROFILE=${profileName}, but ${fileLabel} does not exist or has no profiles: ` +
        `add [profile.${profileName}] to it${vars.TEMPORAL_CONFIG_FILE ? '' : ' (or set TEMPORAL_CONFIG_FILE to your temporal.toml)'}, or unset TEMPORAL_PROFILE`
      );
    }
    return (
      `TEMPORAL_PROFILE=${profileName}: no [profile.${profileName}] in ${file} (it has ${known.map((p) => `"${p}"`).join(', ')}): ` +
      'set TEMPORAL_PROFILE to one of these, add the profile, or unset TEMPORAL_PROFILE'
    );
  }
  const both = /Cannot specify both (\w+)_path and \1_data/.exec(message);
  if (both) {
    const f = TLS_FILES.find((t) => t.toml === both[1]);
    const names = f
      ? `${f.env}_PATH or ${f.toml}_path, and ${f.env}_DATA or ${f.toml}_data`
      : `${both[1]}_path and ${both[1]}_data`;
    return `the TLS ${f?.what ?? both[1]} is given both as a file and as data (${names}; the variables add to the profile, they do not replace it): keep one`;
  }
  return `Temporal connection settings (${fileLabel}, profile "${profileName}", TEMPORAL_* variables): ${message}`;
}

/** TEMPORAL_TASK_QUEUE: unset or empty is the default; blank, or with spaces around it, is a problem. */
function taskQueueFrom(env: Env, problems: string[]): string {
  const raw = env.TEMPORAL_TASK_QUEUE;
  if (!raw) return DEFAULT_TASK_QUEUE;
  if (raw.trim() === '' || raw.trim() !== raw) {
    problems.push(
      `TEMPORAL_TASK_QUEUE must be a task queue name without spaces around it (got "${raw}"): write the name, e.g. ${DEFAULT_TASK_QUEUE}, or unset it for the default`,
    );
    return DEFAULT_TASK_QUEUE;
  }
  return raw;
}

/** A whole number from `min` to `max` (inclusive); a problem, and the fallback, otherwise. */
function integerFrom(
  env: Env,
  name: string,
  fallback: number,
  { min, max, unit }: { min: number; max: number; unit: string },
  problems: string[],
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
    problems.push(`${name} must be a whole number of ${unit} ${range} (got "${raw}")`);
    return fallback;
  }
  return value;
}

/** BROWSERAI_BASE_URL: an http(s) URL with a host, nothing to percent-encode by guesswork (no spaces). */
function baseUrlFrom(env: Env, problems: string[]): string {
  const raw = env.BROWSERAI_BASE_URL || DEFAULT_BASE_URL;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || !/^https?:$/.test(url.protocol) || url.hostname === '' || /\s/.test(raw)) {
    problems.push(
      `BROWSERAI_BASE_URL must be an http(s) URL without spaces, e.g. ${DEFAULT_BASE_URL} or http://127.0.0.1:8787/api/v1 for the emulator (got "${raw}")`,
    );
  }
  return raw;
}

function numberFrom(env: Env, name: string, fallback: number, problems: string[]): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    problems.push(`${name} must be a positive number (got "${raw}")`);
    return fallback;
  }
  return value;
}

/**
 * WORKER_METRICS_ADDRESS, the `host:port` the worker serves Prometheus metrics on (`/metrics`):
 * the address; `null` when it says `off`; undefined when unset (each entry point has its default).
 */
export function metricsAddressFrom(env: Env, problems: string[]): string | null | undefined {
  const raw = env.WORKER_METRICS_ADDRESS?.trim();
  if (!raw) return undefined;
  if (raw.toLowerCase() === 'off') return null;
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(raw);
  if (!match || Number(match[2]) < 1 || Number(match[2]) > 65535 || !isListenableHost(match[1]!)) {
    problems.push(
      `WORKER_METRICS_ADDRESS must be host:port, e.g. 127.0.0.1:9464 or 0.0.0.0:9464, or off (got "${raw}")`,
    );
    return undefined;
  }
  return raw;
}

/** An IP address, or a host name of valid labels; a name of digits and dots must be an IPv4 address (999.1.1.1 is not). */
function isListenableHost(host: string): boolean {
  if (host.startsWith('[')) return isIP(host.slice(1, -1)) === 6;
  if (/^[\d.]+$/.test(host)) return isIP(host) === 4;
  return (
    host.length <= 253 && host.split('.').every((label) => /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(label))
  );
}

/**
 * WORKER_LOG_FORMAT (`text`, the default: the SDK's DefaultLogger lines on stderr; `json`: one
 * JSON object per line on stdout, for log shippers) and WORKER_LOG_LEVEL (TRACE, DEBUG, INFO,
 * the default, WARN or ERROR), either in any case. An unusable value is a problem, and the
 * default is returned in its place.
 */
export function logConfigFrom(env: Env, problems: string[]): WorkerLogConfig {
  const rawFormat = env.WORKER_LOG_FORMAT?.trim();
  const rawLevel = env.WORKER_LOG_LEVEL?.trim();
  const format = rawFormat ? parseLogFormat(rawFormat) : 'text';
  const level = rawLevel ? parseLogLevel(rawLevel) : 'INFO';
  if (!format) problems.push(`WORKER_LOG_FORMAT must be text (the default) or json (got "${rawFormat}")`);
  if (!level)
    problems.push(`WORKER_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (INFO is the default; got "${rawLevel}")`);
  return { format: format ?? 'text', level: level ?? 'INFO' };
}

/**
 * TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID, the names Temporal's worker controller sets
 * (and the other SDKs read): both make the worker a versioned one (Worker Deployment Versioning),
 * neither leaves it unversioned. One without the other is a problem: a worker meant to be versioned
 * would otherwise poll unversioned and take tasks that belong to another version.
 */
export function workerDeploymentFrom(env: Env, problems: string[]): WorkerDeploymentVersionConfig | undefined {
  const deploymentName = env.TEMPORAL_DEPLOYMENT_NAME?.trim();
  const buildId = env.TEMPORAL_WORKER_BUILD_ID?.trim();
  if (deploymentName && buildId) return { deploymentName, buildId };
  if (deploymentName || buildId) {
    const [given, missing] = deploymentName
      ? ['TEMPORAL_DEPLOYMENT_NAME', 'TEMPORAL_WORKER_BUILD_ID']
      : ['TEMPORAL_WORKER_BUILD_ID', 'TEMPORAL_DEPLOYMENT_NAME'];
    problems.push(
      `${given} is set but ${missing} is not: Worker Deployment Versioning needs both (the deployment and this build of it), ` +
        `so set ${missing} too, or unset ${given} for an unversioned worker`,
    );
  }
  return undefined;
}

/** WORKER_NEXUS_SERVICE: `true` registers the `browserai` Nexus service; `false` or unset does not. */
export function nexusServiceFrom(env: Env, problems: string[]): boolean {
  const raw = env.WORKER_NEXUS_SERVICE?.trim();
  if (!raw || /^(false|0)$/i.test(raw)) return false;
  if (/^(true|1)$/i.test(raw)) return true;
  problems.push(`WORKER_NEXUS_SERVICE must be true or false (got "${raw}")`);
  return false;
}

/**
 * WORKER_NEXUS_ALLOW: comma-separated allowances for the Nexus service's callers, e.g.
 * `totp:PORTAL,webhooks,webhook-reference:nexus:`. A switch is its word (`code-template`,
 * `webhooks`, `priority`); a list item or bound has its value after the first colon
 * (`totp:NAME`, `webhook-reference:PREFIX`, `notify:PREFIX`, `task-queue:NAME`, each may repeat;
 * `max-timeout-ms:MS`). The words are NEXUS_ALLOW_WORDS. Unset: nothing.
 */
export function nexusAllowFrom(env: Env, problems: string[]): NexusServiceOptions {
  const raw = env.WORKER_NEXUS_ALLOW?.trim();
  if (!raw) return {};
  const byWord = new Map(Object.entries(NEXUS_ALLOW_WORDS).map(([name, word]) => [word, name as CallerAllowanceName]));
  const allowed: Record<string, boolean | number | string[]> = {};
  for (const item of raw.split(',').map((part) => part.trim())) {
    const colon = item.indexOf(':');
    const [word, value] = colon < 0 ? [item, undefined] : [item.slice(0, colon), item.slice(colon + 1)];
    const name = byWord.get(word);
    const kind = name && CALLER_ALLOWANCE_KINDS[name];
    if (name && kind === 'switch' && value === undefined) allowed[name] = true;
    else if (name && (kind === 'names' || kind === 'prefixes') && value)
      allowed[name] = [...((allowed[name] as string[] | undefined) ?? []), value];
    else if (name && kind === 'bound' && value && /^[1-9]\d*$/.test(value)) allowed[name] = Number(value);
    else
      problems.push(
        `WORKER_NEXUS_ALLOW: "${item}" is not an allowance; write comma-separated ${allowanceWords()} ` +
          '(e.g. totp:PORTAL,webhooks,webhook-reference:nexus:)',
      );
  }
  if (!nexusServiceFrom(env, []))
    problems.push(
      'WORKER_NEXUS_ALLOW is set but WORKER_NEXUS_SERVICE is not true: set it to serve the Nexus service, or unset WORKER_NEXUS_ALLOW',
    );
  return allowed as NexusServiceOptions;
}

/** Every word WORKER_NEXUS_ALLOW takes, with its value where it takes one: `totp:NAME, code-template, ...`. */
function allowanceWords(): string {
  return Object.entries(NEXUS_ALLOW_WORDS)
    .map(([name, word]) => {
      const argument = allowanceArgument(name as CallerAllowanceName);
      return argument ? `${word}:${argument}` : word;
    })
    .join(', ');
}

/**
 * BROWSERAI_FLEET_LIMIT (tasks running at once across the fleet), BROWSERAI_FLEET_PROJECT_LIMITS
 * (`shop=5,crm=2,*=10`), BROWSERAI_FLEET_CHECK_INTERVAL_MS, BROWSERAI_FLEET_ACCOUNT,
 * BROWSERAI_FLEET_TASK_QUEUE and BROWSERAI_FLEET_SERVE_LIMITER (docs/fleet.md). Undefined when BROWSERAI_FLEET_LIMIT is unset or empty: no limit.
 */
export function fleetLimitFrom(env: Env, problems: string[]): FleetLimitOptions | undefined {
  const raw = env.BROWSERAI_FLEET_LIMIT?.trim();
  const others = [
    'BROWSERAI_FLEET_PROJECT_LIMITS',
    'BROWSERAI_FLEET_CHECK_INTERVAL_MS',
    'BROWSERAI_FLEET_ACCOUNT',
    'BROWSERAI_FLEET_TASK_QUEUE',
    'BROWSERAI_FLEET_SERVE_LIMITER',
  ];
  if (!raw) {
    const stray = others.filter((name) => env[name]?.trim());
    if (stray.length > 0)
      problems.push(`${stray.join(' and ')} set without BROWSERAI_FLEET_LIMIT: set the fleet limit too, or unset them`);
    return undefined;
  }
  const before = problems.length;
  const options: FleetLimitOptions = {
    maxRunning: integerFrom(
      env,
      'BROWSERAI_FLEET_LIMIT',
      0,
      { min: 1, max: 100_000, unit: 'tasks running at once' },
      problems,
    ),
  };
  const perProject = env.BROWSERAI_FLEET_PROJECT_LIMITS?.trim();
  if (perProject) {
    options.perProject = {};
    for (const entry of perProject.split(',')) {
      const match = /^\s*([^=]+?)\s*=\s*(\d+)\s*$/.exec(entry);
      if (!match) {
        problems.push(
          `BROWSERAI_FLEET_PROJECT_LIMITS takes project=N pairs separated by commas, * for every other project (got "${entry.trim()}")`,
        );
        continue;
      }
      options.perProject[match[1]!] = Number(match[2]);
    }
  }
  if (env.BROWSERAI_FLEET_CHECK_INTERVAL_MS?.trim()) {
    options.checkIntervalMs = integerFrom(
      env,
      'BROWSERAI_FLEET_CHECK_INTERVAL_MS',
      0,
      { min: 1_000, max: 3_600_000, unit: 'milliseconds (default 60000)' },
      problems,
    );
  }
  const account = env.BROWSERAI_FLEET_ACCOUNT?.trim();
  if (account) options.account = account;
  const taskQueue = env.BROWSERAI_FLEET_TASK_QUEUE?.trim();
  if (taskQueue) options.taskQueue = taskQueue;
  const serve = env.BROWSERAI_FLEET_SERVE_LIMITER?.trim();
  if (serve) {
    if (/^(true|1)$/i.test(serve)) options.serveLimiter = true;
    else if (/^(false|0)$/i.test(serve)) options.serveLimiter = false;
    else problems.push(`BROWSERAI_FLEET_SERVE_LIMITER must be true or false (got "${serve}")`);
  }
  if (problems.length === before)
    problems.push(...fleetLimitProblems(options).map((problem) => `BROWSERAI_FLEET_PROJECT_LIMITS: ${problem}`));
  return options;
}

export function loadWorkerConfig(env: Env = process.env): WorkerConfig {
  const problems: string[] = [];
  const temporal = loadTemporalConfig(env, problems);
  const apiToken = env.BROWSERAI_API_TOKEN?.trim() ?? '';
  if (!apiToken) {
    problems.push(
      'BROWSERAI_API_TOKEN is not set: export your BrowserAI API token, or run `npm start` to use the local emulator',
    );
  }
  const baseUrl = baseUrlFrom(env, problems);
  const maxRps = env.BROWSERAI_MAX_REQUESTS_PER_SECOND
    ? numberFrom(env, 'BROWSERAI_MAX_REQUESTS_PER_SECOND', 0, problems)
    : undefined;
  if (maxRps !== undefined && maxRps > 0 && maxRps < MIN_REQUESTS_PER_SECOND) {
    problems.push(
      `BROWSERAI_MAX_REQUESTS_PER_SECOND must be at least ${MIN_REQUESTS_PER_SECOND} (one request every 10 s; a worker sends several per task), or unset for no limit (got "${env.BROWSERAI_MAX_REQUESTS_PER_SECOND}")`,
    );
  }
  const config: WorkerConfig = {
    temporal,
    browserai: {
      baseUrl,
      apiToken,
      requestTimeoutMs: integerFrom(
        env,
        'BROWSERAI_REQUEST_TIMEOUT_MS',
        DEFAULT_REQUEST_TIMEOUT_MS,
        { ...REQUEST_TIMEOUT_RANGE_MS, unit: 'milliseconds (the deadline of each request, default 30000)' },
        problems,
      ),
      maxResponseBytes: integerFrom(
        env,
        'BROWSERAI_MAX_RESPONSE_BYTES',
        DEFAULT_MAX_RESPONSE_BYTES,
        {
          min: MIN_MAX_RESPONSE_BYTES,
          max: Number.MAX_SAFE_INTEGER,
          unit: `bytes (default ${DEFAULT_MAX_RESPONSE_BYTES})`,
        },
        problems,
      ),
      maxRequestsPerSecond: maxRps || undefined,
    },
    shutdownGraceMs: numberFrom(env, 'WORKER_SHUTDOWN_GRACE_MS', 10_000, problems),
    maxConcurrentActivities: integerFrom(
      env,
      'WORKER_MAX_CONCURRENT_ACTIVITIES',
      5_000,
      { min: 1, max: 1_000_000, unit: 'activities (default 5000)' },
      problems,
    ),
    maxCachedWorkflows: env.WORKER_MAX_CACHED_WORKFLOWS
      ? integerFrom(env, 'WORKER_MAX_CACHED_WORKFLOWS', 0, { min: 1, max: 1_000_000, unit: 'workflows' }, problems)
      : undefined,
    log: logConfigFrom(env, problems),
    codeLoop: codeLoopConfigFrom(env, problems),
    nexusService: nexusServiceFrom(env, problems),
    nexusAllow: nexusAllowFrom(env, problems),
  };
  const deployment = workerDeploymentFrom(env, problems);
  if (deployment) config.deployment = deployment;
  const fleetLimit = fleetLimitFrom(env, problems);
  if (fleetLimit) config.fleetLimit = fleetLimit;
  const metricsAddress = metricsAddressFrom(env, problems);
  if (metricsAddress) config.metricsAddress = metricsAddress;
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** Options for the worker's NativeConnection and the starters' Connection alike. */
export function connectionOptions(config: TemporalConfig): TemporalConnectionOptions {
  return { ...config.connectionOptions };
}
