// The worker's side of the one-time-code loop, from the environment: the TOTP secrets it holds
// (BROWSERAI_TOTP_SECRET_<NAME>, BROWSERAI_TOTP_SECRETS_FILE) and where it sends webhook events
// (BROWSERAI_WEBHOOK_*). Problems name the variable or the file, never a secret's value.
import { readFileSync } from 'node:fs';
import { totpSecretProblems, type TotpSecrets } from '../activities/totp';
import { webhookDestinationProblems, type WebhookDestination } from '../activities/webhooks';
import { createTransport } from '../browserai/proxy';
import type { Env } from './env';

export interface CodeLoopConfig {
  totpSecrets: TotpSecrets;
  webhooks?: WebhookDestination;
}

const TOTP_PREFIX = 'BROWSERAI_TOTP_SECRET_';

const WEBHOOK_VARIABLES: Record<keyof WebhookDestination, string> = {
  url: 'BROWSERAI_WEBHOOK_URL',
  secrets: 'BROWSERAI_WEBHOOK_SECRET',
  timeoutMs: 'BROWSERAI_WEBHOOK_TIMEOUT_MS',
  retryWindowMs: 'BROWSERAI_WEBHOOK_RETRY_WINDOW_MS',
};

/**
 * - `BROWSERAI_TOTP_SECRET_<NAME>=<base32>`: a secret named NAME (compared case-insensitively).
 * - `BROWSERAI_TOTP_SECRETS_FILE=/path/secrets.json`: `{"name": "<base32>" | {secret, digits, period, algorithm}}`,
 *   for secrets mounted as a file (a Kubernetes or Docker secret). A name in both is a problem.
 * - `BROWSERAI_WEBHOOK_URL` with `BROWSERAI_WEBHOOK_SECRET` (`whsec_...`; during a rotation also
 *   `BROWSERAI_WEBHOOK_SECRET_PREVIOUS`), `BROWSERAI_WEBHOOK_TIMEOUT_MS`, `BROWSERAI_WEBHOOK_RETRY_WINDOW_MS`.
 */
export function codeLoopConfigFrom(env: Env, problems: string[]): CodeLoopConfig {
  return { totpSecrets: totpSecretsFrom(env, problems), ...webhooksFrom(env, problems) };
}

function totpSecretsFrom(env: Env, problems: string[]): TotpSecrets {
  const secrets: TotpSecrets = {};
  const origins = new Map<string, string>();
  const add = (name: string, secret: TotpSecrets[string], origin: string) => {
    const key = name.toLowerCase();
    if (origins.has(key)) {
      problems.push(`the TOTP secret "${name}" is set twice (${origins.get(key)} and ${origin}): keep one`);
      return;
    }
    origins.set(key, origin);
    secrets[name] = secret;
  };
  for (const [variable, value] of Object.entries(env)) {
    if (!variable.startsWith(TOTP_PREFIX) || !value) continue;
    add(variable.slice(TOTP_PREFIX.length), value.trim(), variable);
  }
  const file = env.BROWSERAI_TOTP_SECRETS_FILE?.trim();
  if (file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Never the parser's message: it may quote the file's content.
      problems.push(
        `BROWSERAI_TOTP_SECRETS_FILE=${file} ${code ? `cannot be read (${code})` : 'is not JSON'}: make it a JSON object {"name": "BASE32SECRET"}`,
      );
    }
    if (parsed !== undefined) {
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
        problems.push(`BROWSERAI_TOTP_SECRETS_FILE=${file} must hold a JSON object {"name": "BASE32SECRET"}`);
      else
        for (const [name, secret] of Object.entries(parsed as TotpSecrets))
          add(name, secret, `BROWSERAI_TOTP_SECRETS_FILE=${file}`);
    }
  }
  problems.push(
    ...totpSecretProblems(secrets, (name) =>
      origins.get(name.toLowerCase())!.startsWith(TOTP_PREFIX)
        ? origins.get(name.toLowerCase())!
        : `"${name}" in ${origins.get(name.toLowerCase())}`,
    ),
  );
  return secrets;
}

function webhooksFrom(env: Env, problems: string[]): { webhooks?: WebhookDestination } {
  const url = env.BROWSERAI_WEBHOOK_URL?.trim();
  const secret = env.BROWSERAI_WEBHOOK_SECRET?.trim();
  const previous = env.BROWSERAI_WEBHOOK_SECRET_PREVIOUS?.trim();
  if (!url) {
    if (secret || previous)
      problems.push(
        'BROWSERAI_WEBHOOK_SECRET is set but BROWSERAI_WEBHOOK_URL is not: set the URL events go to, or unset the secret',
      );
    return {};
  }
  if (!secret) {
    problems.push(
      'BROWSERAI_WEBHOOK_URL is set but BROWSERAI_WEBHOOK_SECRET is not: events are always signed; set it to whsec_ + base64 of 32 random bytes',
    );
    return {};
  }
  const number = (name: string): number | undefined => {
    const raw = env[name]?.trim();
    return raw ? Number(raw) : undefined;
  };
  const destination: WebhookDestination = {
    url,
    secrets: previous ? [secret, previous] : [secret],
    timeoutMs: number(WEBHOOK_VARIABLES.timeoutMs),
    retryWindowMs: number(WEBHOOK_VARIABLES.retryWindowMs),
  };
  const found = webhookDestinationProblems(destination, (field, index) =>
    field !== 'secrets'
      ? WEBHOOK_VARIABLES[field]
      : index === 1
        ? 'BROWSERAI_WEBHOOK_SECRET_PREVIOUS'
        : index === 0
          ? 'BROWSERAI_WEBHOOK_SECRET'
          : 'BROWSERAI_WEBHOOK_SECRET (or _PREVIOUS)',
  );
  if (found.length === 0) {
    // Events go through the proxy BrowserAI requests use: an unusable proxy variable is found now, not at the first event.
    try {
      createTransport(url, undefined, env);
    } catch (err) {
      found.push(`${(err as Error).message} (webhook events to ${new URL(url).origin} would go through it)`);
    }
  }
  problems.push(...found);
  return found.length === 0 ? { webhooks: destination } : {};
}

/** For the worker's start-up line: what it holds, by name and URL only. */
export function describeCodeLoop(config: CodeLoopConfig): string {
  const names = Object.keys(config.totpSecrets);
  return (
    (names.length > 0 ? `, TOTP secrets: ${names.join(', ')}` : '') +
    (config.webhooks ? `, webhooks to ${new URL(config.webhooks.url).origin}` : '')
  );
}

/** The secrets the worker's logs mask besides the API token (a second line of defence: nothing logs them). */
export function codeLoopSecrets(config: CodeLoopConfig): string[] {
  const totp = Object.values(config.totpSecrets).map((given) => (typeof given === 'string' ? given : given.secret));
  return [...totp, ...(config.webhooks?.secrets ?? [])];
}
