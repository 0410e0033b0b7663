// The inbox over HTTP (docs/one-time-codes.md, "The inbox"): where SMS and email providers post
// the messages that carry one-time codes. Every request is authenticated as its provider
// documents (unsigned or wrongly signed: 401, and nothing changes), bodies are bounded, slow
// senders are cut off, and what is logged never holds a body or a code. Mount `inboxHandler` in
// your own server, or run `startInbox` (the `inbox` command).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Client } from '@temporalio/client';
import type { ArrivedMessage, Refused } from './arrived-message';
import { deliver, type Delivery } from './deliver';
import { readMailgun } from './mailgun';
import { readSignedJson } from './signed-json';
import { readTwilio } from './twilio';

/** The providers the inbox reads, each enabled by its secret. At least one. */
export interface InboxOptions {
  /** The Temporal client that routes messages and signals tasks. */
  client: Client;
  /** Where the workflow of a recipient starts when no task started it: the workers' task queue. */
  taskQueue: string;
  /** `POST /twilio`: inbound SMS from Twilio, verified with the account's auth token. */
  twilio?: { authToken: string };
  /** `POST /mailgun` and `/mailgun/mime`: emails forwarded by a Mailgun route, verified with the HTTP webhook signing key. */
  mailgun?: { signingKey: string; maxAgeMs?: number };
  /** `POST /messages`: JSON `{ to, from, text }` signed as Standard Webhooks with one of these `whsec_` secrets (the first signs, all verify). */
  secrets?: string[];
  /**
   * The scheme and host (and any path prefix a proxy strips) providers call, e.g.
   * `https://inbox.example.com`: Twilio signs the full URL it called. Default: `http://` and the
   * request's Host header.
   */
  publicUrl?: string;
  /** The code of a project's messages, when the default rule misses it: by project, `*` for the rest. */
  codePatterns?: Record<string, RegExp>;
  /** Largest body taken from an email provider; default 5 MiB (413 beyond). SMS and JSON: 64 KiB. */
  maxEmailBytes?: number;
  /** One line per message (masked addresses, the outcome; never a body or a code). Default: console.log as JSON. */
  log?: (line: InboxLogLine) => void;
}

/** What the inbox logs of one request. */
export interface InboxLogLine {
  provider: 'twilio' | 'mailgun' | 'messages';
  status: number;
  outcome?: Delivery['outcome'];
  reason: string;
  /** The recipient, masked. */
  to?: string;
}

/** A running inbox. */
export interface InboxServer {
  /** http://HOST:PORT */
  url: string;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

const DEFAULT_MAX_EMAIL_BYTES = 5 * 1024 * 1024;
const MAX_SMALL_BYTES = 64 * 1024;

/**
 * The inbox as a request handler, for `http.createServer(handler)` or a path of your server
 * (`app.use('/inbox', handler)`: providers then call `/inbox/twilio`, and `publicUrl` names the
 * origin). Throws a TypeError when no provider is configured or a secret is unusable.
 */
export function inboxHandler(options: InboxOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  if (!options.twilio && !options.mailgun && !options.secrets?.length)
    throw new TypeError(
      'The inbox reads no provider: set BROWSERAI_INBOX_TWILIO_AUTH_TOKEN, BROWSERAI_INBOX_MAILGUN_SIGNING_KEY or BROWSERAI_INBOX_SECRET',
    );
  const verifiers = (options.secrets ?? []).map((secret) => new Webhook(secret));
  const log = options.log ?? ((line: InboxLogLine) => console.log(JSON.stringify({ msg: 'inbox message', ...line })));
  const maxEmailBytes = options.maxEmailBytes ?? DEFAULT_MAX_EMAIL_BYTES;

  return async (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
    const provider =
      path === '/twilio' && options.twilio
        ? 'twilio'
        : (path === '/mailgun' || path === '/mailgun/mime') && options.mailgun
          ? 'mailgun'
          : path === '/messages' && verifiers.length > 0
            ? 'messages'
            : null;
    if (provider === null || req.method !== 'POST') return answer(res, 404, { error: 'Not found' });
    const limit = provider === 'mailgun' ? maxEmailBytes : MAX_SMALL_BYTES;
    let body: Buffer;
    try {
      body = await readBody(req, limit);
    } catch (err) {
      const tooLarge = err instanceof BodyTooLarge;
      log({ provider, status: tooLarge ? 413 : 400, reason: tooLarge ? `body over ${limit} bytes` : 'body not read' });
      return answer(res, tooLarge ? 413 : 400, { error: tooLarge ? `Body over ${limit} bytes` : 'Body not read' });
    }
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    let read: ArrivedMessage | Refused;
    if (provider === 'twilio') {
      const base = options.publicUrl ?? `http://${header('host') ?? 'localhost'}`;
      const url = base.replace(/\/+$/, '') + ((req as { originalUrl?: string }).originalUrl ?? req.url ?? '/');
      read = readTwilio(body, header('x-twilio-signature'), url, options.twilio!.authToken);
    } else if (provider === 'mailgun')
      read = await readMailgun(
        body,
        header('content-type'),
        options.mailgun!.signingKey,
        Date.now(),
        options.mailgun!.maxAgeMs,
      );
    else read = readSignedJson(body, req.headers, verifiers);
    if ('status' in read) {
      log({ provider, status: read.status, reason: read.error });
      return answer(res, read.status, { error: read.error });
    }
    let delivery: Delivery;
    try {
      delivery = await deliver(read, options);
    } catch (err) {
      // Temporal did not take it: the provider's retry is safe (a message recorded twice is dropped as a repeat).
      log({ provider, status: 503, reason: `Temporal did not answer: ${(err as Error).message}` });
      return answer(res, 503, { error: 'The inbox could not reach Temporal; retry later' });
    }
    log({ provider, status: 200, ...delivery });
    // Twilio reads the answer as TwiML: an empty <Response/> sends no reply SMS.
    if (provider === 'twilio') {
      res.writeHead(200, { 'content-type': 'text/xml', 'x-browserai-inbox': delivery.outcome });
      return void res.end('<?xml version="1.0" encoding="UTF-8"?><Response></Response>');
    }
    answer(res, 200, { outcome: delivery.outcome, reason: delivery.reason });
  };
}

/** Starts the inbox on `host:port` (default 127.0.0.1:8790; 0: any free port), with header and body timeouts. */
export async function startInbox(options: InboxOptions & { host?: string; port?: number }): Promise<InboxServer> {
  const handler = inboxHandler(options);
  const server = createServer((req, res) => {
    handler(req, res).catch(() => {
      if (!res.headersSent) answer(res, 500, { error: 'Internal error' });
    });
  });
  // A sender that trickles its headers or body is cut off: a slow request holds no socket for long.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8790, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answer(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

class BodyTooLarge extends Error {}

/** The body, up to `limit` bytes; past it, stops reading and rejects with BodyTooLarge (a declared length too). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length'] ?? 0) > limit) return reject(new BodyTooLarge());
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      // Not `destroy()`: that would cut the socket before the 413 is written.
      req.off('data', onData).off('end', onEnd).pause();
      reject(new BodyTooLarge());
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks));
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}
