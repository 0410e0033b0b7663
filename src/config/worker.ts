// The worker's settings from the environment, checked as a whole at start-up so a misconfigured
// worker says everything that is wrong at once, and what to set, before it connects anywhere:
// BrowserAI (BROWSERAI_*), the worker's own (WORKER_*), the code loop (code-loop.ts), the Nexus
// service (nexus-allow.ts), the fleet limit, over the Temporal connection (temporal.ts).
import { isIP } from 'node:net';
import {
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MIN_MAX_RESPONSE_BYTES,
  MIN_REQUESTS_PER_SECOND,
  REQUEST_TIMEOUT_RANGE_MS,
} from '../browserai/client';
import { fleetLimitProblems, type FleetLimitOptions } from '../activities/fleet';
import type { CallerAllowances } from '../contract/callers';
import { ConfigError } from '../contract/errors';
import { LOG_LEVELS, parseLogFormat, parseLogLevel, type LogFormat, type LogLevel } from '../telemetry/logging';
import { codeLoopConfigFrom, type CodeLoopConfig } from './code-loop';
import { integerFrom, numberFrom, type Env } from './env';
import { nexusAllowFrom, nexusServiceFrom } from './nexus-allow';
import { loadTemporalConfig, type TemporalConfig } from './temporal';

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
  /** TOTP secrets and the webhook destination (BROWSERAI_TOTP_*, BROWSERAI_WEBHOOK_*; code-loop.ts). */
  codeLoop: CodeLoopConfig;
  /** TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID: the Worker Deployment Version this worker polls as; undefined: unversioned. */
  deployment?: WorkerDeploymentVersionConfig;
  /** WORKER_NEXUS_SERVICE: register the `browserai` Nexus service on the worker's task queue. */
  nexusService: boolean;
  /** WORKER_NEXUS_ALLOW: what the Nexus service's callers may set beyond their own task; empty: nothing. */
  nexusAllow: CallerAllowances;
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
