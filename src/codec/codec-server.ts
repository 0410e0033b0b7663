// A codec server for the Temporal UI and CLI: with payload encryption on, the UI shows
// ciphertext until it is pointed here (Settings -> Codec Server, or `npm start` does it).
//
// It decrypts for whoever it lets in, so it lets in little:
// - authentication: a shared token (CODEC_SERVER_TOKEN), sent as `Authorization: Bearer <token>`
//   (the Temporal CLI's --codec-auth, a proxy) or as the password of HTTP Basic (a browser that
//   logged in at the server's own URL, then the UI's "Include cross-origin credentials"), compared
//   in constant time; or a custom check (`authenticate`, e.g. of the OIDC access token the UI sends
//   with "Pass the user access token"). Running it open takes an explicit flag, on loopback only;
// - CORS for the configured UI origins only (no `*`): other origins are refused, preflight or not;
// - a Host allow-list, against DNS rebinding (421 for any other Host);
// - a body limit (413), checked before and while reading, never buffering more than the limit.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { ConfigError } from '../contract/errors';
import { payloadCodecFromEnv } from './encryption-codec';

export const DEFAULT_CODEC_SERVER_PORT = 8234;
export const DEFAULT_CODEC_SERVER_HOST = '127.0.0.1';
/** Largest request body the codec server reads (4 MiB); larger ones get 413. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
const MIN_TOKEN_LENGTH = 16;
const REALM = 'browserai-temporal codec server';

/**
 * Options of `startCodecServer`: where it listens, who it lets in (token, origins, Host names), and how much it reads.
 */
export interface CodecServerOptions {
  /** Default 8234; 0 picks a free port. */
  port?: number;
  /** The address to bind. Default 127.0.0.1. */
  host?: string;
  /**
   * The shared secret a request must carry: `Authorization: Bearer <token>`, or HTTP Basic with
   * the token as password (any user name). At least 16 characters. Required unless `open` or
   * `authenticate` is given.
   */
  token?: string;
  /**
   * Extra (or, without `token`, the only) way in: e.g. verify the OIDC access token the Temporal UI
   * sends with "Pass the user access token". Return true to let the request in.
   */
  authenticate?: (req: IncomingMessage) => boolean | Promise<boolean>;
  /** No authentication at all. Refused unless `host` is a loopback address. */
  open?: boolean;
  /**
   * The origins of the Temporal UI(s) allowed to call from a browser, e.g. `https://temporal.example.com`.
   * Default none: only non-browser clients (the CLI), since browsers send an Origin and are refused.
   */
  allowedOrigins?: string[] | string;
  /** @deprecated use `allowedOrigins`. */
  allowOrigin?: string;
  /**
   * Host header values served, besides the defaults (the bind host, localhost, 127.0.0.1 and [::1]
   * with the port). An entry without a port matches any port: `codec.example.com`.
   */
  allowedHosts?: string[];
  /** Largest request body; larger ones get 413. Default 4 MiB. */
  maxBodyBytes?: number;
}

interface JSONPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

const fromJSON = ({ metadata, data }: JSONPayload): Payload => ({
  metadata: metadata
    ? Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')]))
    : undefined,
  data: data ? Buffer.from(data, 'base64') : undefined,
});

const toJSON = ({ metadata, data }: Payload): JSONPayload => ({
  metadata: metadata
    ? Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v).toString('base64')]))
    : undefined,
  data: data ? Buffer.from(data).toString('base64') : undefined,
});

/** 127.0.0.0/8, ::1, localhost (and the IPv4-mapped forms). */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

function normalizeOrigin(origin: string): string {
  const trimmed = origin.trim().replace(/\/+$/, '');
  if (trimmed === '*' || trimmed === 'null') {
    throw new TypeError(
      `"${trimmed}" is not allowed as the codec server's UI origin: give the Temporal UI's origin, e.g. https://temporal.example.com.`,
    );
  }
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new TypeError(
      `"${origin}" is not an origin: give scheme, host and port if any, e.g. https://temporal.example.com or http://localhost:8233.`,
    );
  }
  const bare =
    url.pathname === '/' &&
    !url.search &&
    !url.hash &&
    !url.username &&
    !url.password &&
    !/\/.+/.test(trimmed.replace(/^[a-z]+:\/\//i, ''));
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !bare) {
    throw new TypeError(
      `"${origin}" is not an origin (scheme, host and port only): e.g. https://temporal.example.com or http://localhost:8233.`,
    );
  }
  return url.origin;
}

function hostKey(host: string): { name: string; port: string | undefined } {
  const h = host.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(h);
  if (bracketed) return { name: `[${bracketed[1]}]`, port: bracketed[2] };
  if (isIP(h) === 6) return { name: `[${h}]`, port: undefined };
  const colon = h.lastIndexOf(':');
  return colon > 0 && /^\d+$/.test(h.slice(colon + 1))
    ? { name: h.slice(0, colon), port: h.slice(colon + 1) }
    : { name: h, port: undefined };
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** The credentials a request carries: a Bearer token, or the password of HTTP Basic. */
function presentedSecret(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization?.trim();
  if (!header) return undefined;
  const space = header.indexOf(' ');
  const scheme = space > 0 ? header.slice(0, space).toLowerCase() : '';
  const value = space > 0 ? header.slice(space + 1).trim() : '';
  if (scheme === 'bearer') return value;
  if (scheme === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon >= 0 ? decoded.slice(colon + 1) : undefined;
  }
  return undefined;
}

class BodyTooLarge extends Error {}

/** The body, up to `limit` bytes; past it, stops reading (no more is buffered) and rejects with BodyTooLarge. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        // Not `destroy()`: that would cut the socket before the 413 is written.
        req.off('data', onData).off('end', onEnd).off('error', onError).pause();
        chunks.length = 0;
        return reject(new BodyTooLarge());
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks));
    const onError = (err: Error): void => reject(err);
    req.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** Starts the codec server; throws (before binding) when the options are unsafe or incomplete, saying what to set. */
export async function startCodecServer(
  codec: PayloadCodec,
  options: CodecServerOptions = {},
): Promise<{ url: string; server: Server }> {
  const host = options.host?.trim() || DEFAULT_CODEC_SERVER_HOST;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0)
    throw new TypeError(`maxBodyBytes must be a positive integer, got ${options.maxBodyBytes}.`);
  const token = options.token?.trim() || undefined;
  if (token && token.length < MIN_TOKEN_LENGTH) {
    throw new TypeError(
      `The codec server token is too short (${token.length} characters, at least ${MIN_TOKEN_LENGTH}): generate one with \`openssl rand -base64 32\`.`,
    );
  }
  if (options.open && (token || options.authenticate)) {
    throw new TypeError(
      'The codec server was given both a token (or an authenticate check) and `open`: drop one (CODEC_SERVER_TOKEN or CODEC_SERVER_OPEN).',
    );
  }
  if (options.open && !isLoopbackHost(host)) {
    throw new TypeError(
      `Refusing to run the codec server without authentication on ${host}, which is not a loopback address: anyone who reaches it could decrypt your payloads. ` +
        'Set CODEC_SERVER_TOKEN (e.g. `openssl rand -base64 32`) and unset CODEC_SERVER_OPEN, or bind to 127.0.0.1 (CODEC_SERVER_HOST).',
    );
  }
  if (!options.open && !token && !options.authenticate) {
    throw new TypeError(
      'The codec server needs authentication: set CODEC_SERVER_TOKEN (e.g. `openssl rand -base64 32`; clients send `Authorization: Bearer <token>`), ' +
        'or, on a loopback address only, CODEC_SERVER_OPEN=1 to run it without.',
    );
  }
  const origins = new Set(
    [
      ...(typeof options.allowedOrigins === 'string'
        ? options.allowedOrigins.split(',')
        : (options.allowedOrigins ?? [])),
      ...(options.allowOrigin ? options.allowOrigin.split(',') : []),
    ]
      .map((o) => o.trim())
      .filter(Boolean)
      .map(normalizeOrigin),
  );
  const tokenHash = token ? sha256(token) : undefined;

  const allowedHosts: Array<{ name: string; port: string | undefined }> = [];
  const hostAllowed = (value: string | undefined): boolean => {
    if (!value) return false;
    const { name, port } = hostKey(value);
    return allowedHosts.some((a) => a.name === name && (a.port === undefined || a.port === (port ?? '80')));
  };

  const refuse = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void => {
    // A body left unread is not read later either: the connection closes once the answer is out.
    const unread = !res.req.complete ? { connection: 'close' } : {};
    res
      .writeHead(status, {
        'content-type': 'text/plain; charset=utf-8',
        'cache-control': 'no-store',
        ...unread,
        ...headers,
      })
      .end(`${message}\n`);
  };

  const authenticated = async (req: IncomingMessage): Promise<boolean> => {
    if (options.open) return true;
    const secret = presentedSecret(req);
    if (tokenHash && secret !== undefined && timingSafeEqual(sha256(secret), tokenHash)) return true;
    return options.authenticate ? Boolean(await options.authenticate(req)) : false;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('cache-control', 'no-store');
    res.setHeader('vary', 'Origin');
    // DNS rebinding: a page whose name now resolves to this address sends its own name as Host.
    if (!hostAllowed(req.headers.host)) {
      return refuse(
        res,
        421,
        `Host "${req.headers.host ?? ''}" is not served here: add it to CODEC_SERVER_ALLOWED_HOSTS (the name clients use to reach this codec server).`,
      );
    }
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!origins.has(origin)) {
        return refuse(
          res,
          403,
          `Origin "${origin}" is not allowed: set CODEC_SERVER_ALLOWED_ORIGIN to the Temporal UI's origin (comma-separated for several)` +
            (origins.size ? `; allowed now: ${[...origins].join(', ')}.` : '; none is set now.'),
        );
      }
      res.setHeader('access-control-allow-origin', origin);
      // The UI's "Include cross-origin credentials" needs it; without credentials it changes nothing.
      res.setHeader('access-control-allow-credentials', 'true');
    }
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'OPTIONS') {
      if (origin === undefined) return refuse(res, 400, 'A preflight request needs an Origin header.');
      res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
      res.setHeader('access-control-allow-headers', 'content-type, x-namespace, authorization');
      res.setHeader('access-control-max-age', '600');
      // Chrome's Private Network Access: a UI on a public origin calling a codec server on a private address.
      if (req.headers['access-control-request-private-network'] === 'true')
        res.setHeader('access-control-allow-private-network', 'true');
      return void res.writeHead(204).end();
    }
    // The protocol lets the endpoints sit at any depth (e.g. /{namespace}/decode): only the last part counts.
    const action = path.endsWith('/encode')
      ? 'encode'
      : path.endsWith('/decode')
        ? 'decode'
        : path === '/'
          ? 'root'
          : undefined;
    if (!action) return refuse(res, 404, 'Not found: POST /decode or /encode.');
    if (action === 'root' ? req.method !== 'GET' && req.method !== 'HEAD' : req.method !== 'POST') {
      return refuse(res, 405, action === 'root' ? 'GET only.' : `POST /${action} only.`, {
        allow: action === 'root' ? 'GET, HEAD' : 'POST, OPTIONS',
      });
    }
    if (!(await authenticated(req))) {
      // On `/`, a Basic challenge: visiting the codec server's URL in the browser logs in, and the UI's
      // "Include cross-origin credentials" then sends those credentials with its requests.
      return refuse(
        res,
        401,
        (req.headers.authorization ? 'Wrong credentials' : 'Authentication required') +
          ': send `Authorization: Bearer <CODEC_SERVER_TOKEN>` (Temporal CLI: --codec-auth "Bearer <token>"), or log in at this URL in the browser ' +
          '(any user name, the token as password) and turn on "Include cross-origin credentials" in the UI\'s codec server settings.',
        {
          'www-authenticate': action === 'root' ? `Basic realm="${REALM}", charset="UTF-8"` : `Bearer realm="${REALM}"`,
        },
      );
    }
    if (action === 'root')
      return refuse(
        res,
        200,
        'Codec server: authenticated. Point the Temporal UI at this URL (Settings -> Codec Server).',
      );
    const declared = Number(req.headers['content-length'] ?? NaN);
    const tooLarge = `Request body over ${maxBodyBytes} bytes: decode fewer payloads at a time, or raise CODEC_SERVER_MAX_BODY_BYTES.`;
    if (declared > maxBodyBytes) return refuse(res, 413, tooLarge);
    let body: Buffer;
    try {
      body = await readBody(req, maxBodyBytes);
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        return refuse(res, 413, tooLarge);
      }
      throw err;
    }
    let input: Payload[];
    try {
      const parsed = JSON.parse(body.toString('utf8')) as { payloads?: unknown };
      if (!Array.isArray(parsed?.payloads)) throw new Error('no payloads array');
      input = (parsed.payloads as JSONPayload[]).map(fromJSON);
    } catch {
      return refuse(res, 400, 'The body must be JSON: {"payloads": [{"metadata": {...}, "data": "<base64>"}]}.');
    }
    try {
      const output = action === 'encode' ? await codec.encode(input) : await codec.decode(input);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ payloads: output.map(toJSON) }));
    } catch (err) {
      refuse(res, 400, err instanceof Error ? err.message : 'The payloads could not be converted.');
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) refuse(res, 500, 'Codec server error.');
      else res.destroy(err instanceof Error ? err : undefined);
    });
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_CODEC_SERVER_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const wildcard = host === '0.0.0.0' || host === '::' || host === '[::]';
  for (const name of [...(wildcard ? [] : [host]), 'localhost', '127.0.0.1', '[::1]'])
    allowedHosts.push({ name: hostKey(name).name, port: String(port) });
  for (const extra of options.allowedHosts ?? []) if (extra.trim()) allowedHosts.push(hostKey(extra));
  const urlHost = isLoopbackHost(host) || wildcard ? 'localhost' : isIP(host) === 6 ? `[${host}]` : host;
  return { url: `http://${urlHost}:${port}`, server };
}

const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
const truthy = (value: string | undefined): boolean => /^(1|true|yes|on)$/i.test(value?.trim() ?? '');

/**
 * The codec server's options from the environment:
 * CODEC_SERVER_TOKEN, CODEC_SERVER_OPEN (1/true; loopback only), CODEC_SERVER_ALLOWED_ORIGIN
 * (comma-separated; CODEC_SERVER_ALLOW_ORIGIN is read too), CODEC_SERVER_ALLOWED_HOSTS,
 * CODEC_SERVER_HOST (127.0.0.1), CODEC_SERVER_PORT (8234), CODEC_SERVER_MAX_BODY_BYTES (4 MiB).
 */
export function codecServerOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): CodecServerOptions {
  const problems: string[] = [];
  const port = env.CODEC_SERVER_PORT?.trim() ? Number(env.CODEC_SERVER_PORT) : DEFAULT_CODEC_SERVER_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    problems.push(`CODEC_SERVER_PORT must be a port number, got "${env.CODEC_SERVER_PORT}".`);
  const maxBodyBytes = env.CODEC_SERVER_MAX_BODY_BYTES?.trim()
    ? Number(env.CODEC_SERVER_MAX_BODY_BYTES)
    : DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0)
    problems.push(
      `CODEC_SERVER_MAX_BODY_BYTES must be a positive number of bytes, got "${env.CODEC_SERVER_MAX_BODY_BYTES}".`,
    );
  if (problems.length) throw new ConfigError(problems);
  return {
    port,
    host: env.CODEC_SERVER_HOST?.trim() || DEFAULT_CODEC_SERVER_HOST,
    token: env.CODEC_SERVER_TOKEN?.trim() || undefined,
    open: truthy(env.CODEC_SERVER_OPEN),
    allowedOrigins: [...list(env.CODEC_SERVER_ALLOWED_ORIGIN), ...list(env.CODEC_SERVER_ALLOW_ORIGIN)],
    allowedHosts: list(env.CODEC_SERVER_ALLOWED_HOSTS),
    maxBodyBytes,
  };
}

if (require.main === module) {
  (async () => {
    const codec = payloadCodecFromEnv();
    if (!codec)
      throw new Error("Set TEMPORAL_PAYLOAD_KEY (base64 of 32 bytes, the workers' key) to run the codec server.");
    const options = codecServerOptionsFromEnv();
    const { url } = await startCodecServer(codec, options);
    const origins = options.allowedOrigins as string[];
    console.log(
      [
        `Codec server on ${url} (bound to ${options.host}), keys ${codec.decryptKeyIds.map((id) => `"${id}"`).join(', ')}.`,
        options.open
          ? 'Authentication: none (CODEC_SERVER_OPEN, loopback only).'
          : 'Authentication: CODEC_SERVER_TOKEN (Bearer, or Basic with the token as password).',
        origins.length
          ? `Browser origins allowed: ${origins.join(', ')}. In the Temporal UI, set it under Settings -> Codec Server.`
          : 'No CODEC_SERVER_ALLOWED_ORIGIN: browsers (the Temporal UI) are refused; the CLI works (--codec-endpoint, --codec-auth).',
        `Host names served: the bind host, localhost, 127.0.0.1${options.allowedHosts?.length ? `, ${options.allowedHosts.join(', ')}` : ' (add others with CODEC_SERVER_ALLOWED_HOSTS)'}.`,
      ].join('\n'),
    );
  })().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
