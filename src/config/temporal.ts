// The Temporal connection from the environment, for the worker, the starters and the CLI alike,
// checked as a whole so a misconfigured process says everything that is wrong at once.
//
// It follows Temporal's standard environment configuration, through @temporalio/envconfig: the
// TEMPORAL_* variables the Temporal CLI and every SDK read, and `temporal.toml` profiles
// (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE). TEMPORAL_TASK_QUEUE stays ours.
import { existsSync, readFileSync } from 'node:fs';
import { platform } from 'node:os';
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
import { ConfigError } from '../contract/errors';
import type { Env } from './env';

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

/** Options for the worker's NativeConnection and the starters' Connection alike. */
export function connectionOptions(config: TemporalConfig): TemporalConnectionOptions {
  return { ...config.connectionOptions };
}
