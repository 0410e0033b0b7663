// Configuration from the environment, checked as a whole at start-up so a misconfigured
// worker says everything that is wrong at once, and what to set, before it connects anywhere.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from '@temporalio/client';
import { DEFAULT_BASE_URL } from './browserai/client';

export interface TemporalConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  apiKey?: string;
  tls?: {
    serverNameOverride?: string;
    serverRootCACertificate?: Buffer;
    clientCertPair?: { crt: Buffer; key: Buffer };
  };
}

export interface WorkerConfig {
  temporal: TemporalConfig;
  browserai: {
    baseUrl: string;
    apiToken: string;
    requestTimeoutMs: number;
    maxRequestsPerSecond?: number;
  };
  shutdownGraceMs: number;
  maxConcurrentActivities: number;
  maxCachedWorkflows: number | undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`Configuration problems:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Record<string, string | undefined>;

export const DEFAULT_TASK_QUEUE = 'browserai';

export function loadTemporalConfig(env: Env = process.env, problems: string[] = []): TemporalConfig {
  const config: TemporalConfig = {
    address: env.TEMPORAL_ADDRESS || 'localhost:7233',
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE,
    apiKey: env.TEMPORAL_API_KEY || undefined,
  };
  const readFile = (name: string): Buffer | undefined => {
    const path = env[name];
    if (!path) return undefined;
    try {
      return readFileSync(path);
    } catch (err) {
      problems.push(`${name}=${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? err}); point it at a PEM file`);
      return undefined;
    }
  };
  const crt = readFile('TEMPORAL_TLS_CERT_PATH');
  const key = readFile('TEMPORAL_TLS_KEY_PATH');
  const ca = readFile('TEMPORAL_TLS_CA_PATH');
  if (Boolean(env.TEMPORAL_TLS_CERT_PATH) !== Boolean(env.TEMPORAL_TLS_KEY_PATH)) {
    problems.push('TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together: set both for mTLS, or neither');
  }
  // An API key (Temporal Cloud) implies TLS, as does any certificate.
  if (crt || key || ca || config.apiKey || env.TEMPORAL_TLS === 'true' || env.TEMPORAL_TLS_SERVER_NAME) {
    config.tls = {
      serverNameOverride: env.TEMPORAL_TLS_SERVER_NAME || undefined,
      serverRootCACertificate: ca,
      clientCertPair: crt && key ? { crt, key } : undefined,
    };
  }
  return config;
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

export function loadWorkerConfig(env: Env = process.env): WorkerConfig {
  const problems: string[] = [];
  const temporal = loadTemporalConfig(env, problems);
  const apiToken = env.BROWSERAI_API_TOKEN?.trim() ?? '';
  if (!apiToken) {
    problems.push('BROWSERAI_API_TOKEN is not set: export your BrowserAI API token, or run `npm start` to use the local emulator');
  }
  const baseUrl = env.BROWSERAI_BASE_URL || DEFAULT_BASE_URL;
  if (!/^https?:\/\/[^/]+/.test(baseUrl)) problems.push(`BROWSERAI_BASE_URL must be an http(s) URL (got "${baseUrl}")`);
  const maxRps = env.BROWSERAI_MAX_REQUESTS_PER_SECOND ? numberFrom(env, 'BROWSERAI_MAX_REQUESTS_PER_SECOND', 0, problems) : undefined;
  const config: WorkerConfig = {
    temporal,
    browserai: {
      baseUrl,
      apiToken,
      requestTimeoutMs: numberFrom(env, 'BROWSERAI_REQUEST_TIMEOUT_MS', 30_000, problems),
      maxRequestsPerSecond: maxRps || undefined,
    },
    shutdownGraceMs: numberFrom(env, 'WORKER_SHUTDOWN_GRACE_MS', 10_000, problems),
    maxConcurrentActivities: numberFrom(env, 'WORKER_MAX_CONCURRENT_ACTIVITIES', 5_000, problems),
    maxCachedWorkflows: env.WORKER_MAX_CACHED_WORKFLOWS ? numberFrom(env, 'WORKER_MAX_CACHED_WORKFLOWS', 0, problems) : undefined,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** Options shared by the worker's NativeConnection and the starters' Connection. */
export function connectionOptions(config: TemporalConfig): Pick<ConnectionOptions, 'address' | 'tls'> & { apiKey?: string } {
  return { address: config.address, tls: config.tls, apiKey: config.apiKey };
}
