// Webhook delivery: one signed POST per attempt, as the Standard Webhooks specification says
// (headers webhook-id, webhook-timestamp, webhook-signature; signed with the `standardwebhooks`
// package). The destination and its secrets are the worker's configuration, never a task's.
// Events go out as BrowserAI requests do: through HTTPS_PROXY / HTTP_PROXY unless NO_PROXY exempts
// the host (browserai/proxy.ts), an https destination through a CONNECT tunnel. Plain http is
// refused except to loopback: an event carries the task's status and the caller's reference.
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { Webhook } from 'standardwebhooks';
import { createTransport, proxyFailure, type Transport } from '../browserai/proxy';
import { FailureType } from '../contract/errors';
import type { WebhookDeliveryInput, WebhookDeliveryOutput } from '../contract/webhooks';

/** Where a worker sends webhook events, and how it signs them. */
export interface WebhookDestination {
  /** https URL the events are POSTed to (plain http only to loopback: localhost, 127.0.0.0/8, [::1]). */
  url: string;
  /**
   * Signing secrets, `whsec_` + base64 (Standard Webhooks' format). Each event is signed with every
   * one (the signature header then holds one signature per secret), so during a rotation both the
   * new and the old secret verify: give the new one first, drop the old once receivers use the new.
   * At most two.
   */
  secrets: string[];
  /** How long one attempt waits for the receiver; default 10 s, at most 15 s. */
  timeoutMs?: number;
  /** How long after the event attempts go on (with backoff up to 10 min apart); default 24 h, 1 min to 3 days. */
  retryWindowMs?: number;
}

export const WEBHOOK_DEFAULTS = { timeoutMs: 10_000, retryWindowMs: 24 * 3_600_000 } as const;
export const WEBHOOK_BOUNDS = {
  timeoutMs: [1_000, 15_000],
  retryWindowMs: [60_000, 3 * 24 * 3_600_000],
} as const;

/**
 * The problems of a destination, naming the setting (`origin`; for a secret, `index` says which)
 * and never showing a secret.
 */
export function webhookDestinationProblems(
  destination: WebhookDestination,
  origin: (field: keyof WebhookDestination, index?: number) => string,
): string[] {
  const problems: string[] = [];
  let url: URL | undefined;
  try {
    url = new URL(destination.url);
  } catch {
    // reported below
  }
  if (!url || !/^https?:$/.test(url.protocol))
    problems.push(`${origin('url')} must be an http(s) URL, e.g. https://example.com/hooks/browserai`);
  else if (url.username || url.password)
    problems.push(`${origin('url')} must not carry credentials: events are signed with the webhook secret instead`);
  else if (url.protocol === 'http:' && !isLoopback(url.hostname))
    problems.push(
      `${origin('url')} must be an https:// URL (write https://${url.host}${url.pathname === '/' ? '' : url.pathname}): ` +
        'plain http is accepted only to loopback (localhost, 127.0.0.1, [::1]), since anyone on the way could read or change an event',
    );
  const { secrets } = destination;
  if (!Array.isArray(secrets) || secrets.length === 0 || secrets.length > 2)
    problems.push(`${origin('secrets')}: give one signing secret, or two while rotating`);
  else
    secrets.forEach((secret, i) => {
      if (!isSigningSecret(secret))
        problems.push(
          `${origin('secrets', i)} must be whsec_ followed by standard base64 (A-Z, a-z, 0-9, + and /, = padding; ` +
            "not base64url's - and _) of 24 to 64 random bytes (e.g. `echo whsec_$(openssl rand -base64 32)`)",
        );
    });
  for (const field of ['timeoutMs', 'retryWindowMs'] as const) {
    const value = destination[field];
    const [min, max] = WEBHOOK_BOUNDS[field];
    if (value !== undefined && !(Number.isFinite(value) && value >= min && value <= max))
      problems.push(`${origin(field)} must be a number of milliseconds from ${min} to ${max}`);
  }
  return problems;
}

/** Whether the signing library takes the secret (its base64 decoder refuses base64url), and it holds 24 to 64 bytes. */
function isSigningSecret(secret: unknown): boolean {
  if (typeof secret !== 'string' || !secret.startsWith('whsec_')) return false;
  try {
    new Webhook(secret);
  } catch {
    return false;
  }
  const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return bytes.length >= 24 && bytes.length <= 64;
}

/** localhost (and its subdomains), 127.0.0.0/8 and ::1: traffic that never leaves the machine. */
function isLoopback(hostname: string): boolean {
  const host = hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/** Signs and posts events to one destination. The secrets stay in private fields (never inspected or logged). */
export class WebhookSender {
  readonly #signers: Webhook[];
  readonly #url: string;
  readonly #transport: Transport;
  readonly #timeoutMs: number;
  readonly #retryWindowMs: number;

  /**
   * Throws a TypeError naming the problems (never a secret) when the destination is unusable, or
   * when the proxy variable that applies to it (`env`) is not a usable proxy URL.
   */
  constructor(destination: WebhookDestination, env: NodeJS.ProcessEnv = process.env) {
    const problems = webhookDestinationProblems(destination, (field, index) =>
      index === undefined ? `webhooks.${field}` : `webhooks.${field}[${index}]`,
    );
    if (problems.length > 0) throw new TypeError(problems.join('; '));
    this.#signers = destination.secrets.map((secret) => new Webhook(secret));
    this.#url = destination.url;
    this.#transport = createTransport(destination.url, undefined, env);
    this.#timeoutMs = destination.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs;
    this.#retryWindowMs = destination.retryWindowMs ?? WEBHOOK_DEFAULTS.retryWindowMs;
  }

  /** The three Standard Webhooks headers for one attempt: the id is the event's, the timestamp this attempt's. */
  headers(id: string, payload: string, at: Date): Record<string, string> {
    return {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1_000)),
      'webhook-signature': this.#signers.map((signer) => signer.sign(id, at, payload)).join(' '),
    };
  }

  /**
   * One attempt. A 2xx answer delivers the event; anything else (another status, no answer within
   * the timeout, no connection) fails the attempt and Temporal retries it, with the same id, until
   * the retry window since the event has passed.
   */
  async deliver(input: WebhookDeliveryInput): Promise<WebhookDeliveryOutput> {
    const { id, body } = input;
    const ctx = Context.current();
    const eventAtMs = Date.parse(body.timestamp);
    if (Date.now() - eventAtMs > this.#retryWindowMs) {
      log.error('Gave up delivering a webhook event: its retry window has passed', {
        webhookId: id,
        type: body.type,
        attempts: ctx.info.attempt - 1,
        retryWindowMs: this.#retryWindowMs,
      });
      return { delivered: false };
    }
    const payload = JSON.stringify(body);
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    let status: number;
    try {
      status = await this.#post(
        payload,
        this.headers(id, payload, new Date()),
        AbortSignal.any([timeout, ctx.cancellationSignal]),
      );
    } catch (err) {
      const proxy = this.#transport.proxy && proxyFailure(err, this.#transport.proxy);
      const why = timeout.aborted
        ? `did not answer within the webhook timeout (${this.#timeoutMs} ms, BROWSERAI_WEBHOOK_TIMEOUT_MS or the plugin's webhooks.timeoutMs)`
        : proxy
          ? `could not be reached: ${proxy.detail}. ${proxy.advice}`
          : `could not be reached (${errorName(err)})`;
      throw ApplicationFailure.retryable(
        `The webhook receiver ${why}; retrying with the same webhook-id.`,
        FailureType.WebhookNotDelivered,
      );
    }
    if (status >= 200 && status < 300) return { delivered: true };
    throw ApplicationFailure.retryable(
      `The webhook receiver answered ${status}; retrying with the same webhook-id until ${new Date(eventAtMs + this.#retryWindowMs).toISOString()}.`,
      FailureType.WebhookNotDelivered,
    );
  }

  /**
   * POSTs one event on the destination's route (direct, or through the proxy) and resolves with the
   * status. Redirects are not followed: a receiver that moved answers 3xx, a failed attempt.
   */
  #post(payload: string, signed: Record<string, string>, signal: AbortSignal): Promise<number> {
    const secure = this.#url.startsWith('https:');
    const request = secure ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = request(
        this.#url,
        {
          method: 'POST',
          agent: secure ? this.#transport.httpsAgent : this.#transport.httpAgent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
            'user-agent': 'browserai-temporal',
            ...signed,
          },
          signal,
        },
        (res) => {
          resolve(res.statusCode ?? 0);
          res.resume(); // the answer's body is not read: drained, so the connection can be reused
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }
}

/** The kind of a failed request, never its message (which may quote the URL): a system code, else the error's name. */
function errorName(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  if (!(cause instanceof Error)) return 'error';
  const { code } = cause as { code?: unknown };
  return typeof code === 'string' ? code : cause.name;
}

/** The activity when the worker has no destination: a task asked for webhooks nobody configured. */
export function noWebhookDestination(input: WebhookDeliveryInput): WebhookDeliveryOutput {
  log.warn(
    'A task asked for webhooks, but this worker has no destination: set BROWSERAI_WEBHOOK_URL and BROWSERAI_WEBHOOK_SECRET ' +
      "(or the plugin's webhooks option) on every worker of the task queue. The event was dropped.",
    { webhookId: input.id, type: input.body.type },
  );
  return { delivered: false };
}
