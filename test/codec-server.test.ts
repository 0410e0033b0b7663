// The codec server lets in only what it is configured for: a token, the UI's origin, its own
// Host names, bodies up to the limit; it refuses to start open anywhere but on loopback.
// Unit tests: no Temporal server.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request, type IncomingHttpHeaders, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { codecServerOptionsFromEnv, isLoopbackHost, startCodecServer } from '../src/codec/codec-server';
import { EncryptionCodec } from '../src/codec/encryption-codec';

const codec = new EncryptionCodec(randomBytes(32), 'server-test');
const TOKEN = randomBytes(24).toString('base64');
const UI = 'https://temporal.example.com';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A raw HTTP request, so Host and Origin are exactly what the test says (fetch sets Host itself). */
function send(
  port: number,
  options: {
    method?: string;
    path?: string;
    headers?: Record<string, string | number>;
    body?: string | Buffer;
    chunks?: Buffer[];
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'POST',
        path: options.path ?? '/decode',
        headers: { host: `localhost:${port}`, ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    // The server may close the connection while a large body is still being written; the answer is what counts.
    req.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err),
    );
    if (options.chunks) {
      for (const chunk of options.chunks) req.write(chunk);
      req.end();
    } else {
      req.end(options.body);
    }
  });
}

async function decodeBody(): Promise<string> {
  const [encoded] = await codec.encode([
    { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"hello"') },
  ]);
  return JSON.stringify({
    payloads: [
      {
        metadata: Object.fromEntries(
          Object.entries(encoded!.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
        ),
        data: Buffer.from(encoded!.data!).toString('base64'),
      },
    ],
  });
}

const json = { 'content-type': 'application/json' };
const bearer = { authorization: `Bearer ${TOKEN}` };

describe('with a token', () => {
  let server: Server;
  let port: number;
  before(async () => {
    const started = await startCodecServer(codec, {
      port: 0,
      token: TOKEN,
      allowedOrigins: UI,
      allowedHosts: ['codec.example.com'],
      maxBodyBytes: 64 * 1024,
    });
    server = started.server;
    port = Number(new URL(started.url).port);
  });
  after(() => server?.close());

  test('decodes with the token (Bearer), as the CLI sends it', async () => {
    const answer = await send(port, {
      headers: { ...json, ...bearer, 'x-namespace': 'default' },
      body: await decodeBody(),
    });
    assert.equal(answer.status, 200, answer.body);
    const { payloads } = JSON.parse(answer.body) as { payloads: Array<{ data: string }> };
    assert.equal(Buffer.from(payloads[0]!.data, 'base64').toString(), '"hello"');
    assert.equal(answer.headers['cache-control'], 'no-store');
  });

  test('decodes for the allowed UI origin, with CORS headers for it', async () => {
    const answer = await send(port, {
      path: '/default/decode',
      headers: { ...json, ...bearer, origin: UI },
      body: await decodeBody(),
    });
    assert.equal(answer.status, 200, answer.body);
    assert.equal(answer.headers['access-control-allow-origin'], UI);
    assert.equal(answer.headers['access-control-allow-credentials'], 'true');
  });

  test('takes the token as the password of HTTP Basic (a browser that logged in)', async () => {
    const basic = `Basic ${Buffer.from(`anyone:${TOKEN}`).toString('base64')}`;
    const answer = await send(port, {
      headers: { ...json, authorization: basic, origin: UI },
      body: await decodeBody(),
    });
    assert.equal(answer.status, 200, answer.body);
    const root = await send(port, { method: 'GET', path: '/' });
    assert.equal(root.status, 401);
    assert.match(
      root.headers['www-authenticate'] ?? '',
      /^Basic realm=/,
      'visiting the URL in a browser asks for the token',
    );
  });

  test('no token: 401, saying what to send', async () => {
    const answer = await send(port, { headers: json, body: await decodeBody() });
    assert.equal(answer.status, 401);
    assert.match(answer.headers['www-authenticate'] ?? '', /^Bearer/);
    assert.match(answer.body, /Authorization: Bearer/);
    assert.doesNotMatch(answer.body, /hello/);
  });

  test('wrong token: 401, also when only its length differs', async () => {
    for (const wrong of [`${TOKEN}x`, TOKEN.slice(1), 'x'.repeat(TOKEN.length), '']) {
      const answer = await send(port, {
        headers: { ...json, authorization: `Bearer ${wrong}` },
        body: await decodeBody(),
      });
      assert.equal(answer.status, 401, `"${wrong}"`);
      assert.match(answer.body, /Wrong credentials/);
    }
    const basicWrong = `Basic ${Buffer.from('user:nope').toString('base64')}`;
    assert.equal((await send(port, { headers: { ...json, authorization: basicWrong }, body: '{}' })).status, 401);
  });

  test('a foreign origin gets no CORS allow header: 403 on preflight and on the request', async () => {
    const preflight = await send(port, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,authorization',
      },
    });
    assert.equal(preflight.status, 403);
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
    assert.match(preflight.body, /CODEC_SERVER_ALLOWED_ORIGIN/);
    const direct = await send(port, {
      headers: { ...json, ...bearer, origin: 'https://evil.example' },
      body: await decodeBody(),
    });
    assert.equal(direct.status, 403, 'even with the token: a page elsewhere must not read decoded payloads');
    assert.equal(direct.headers['access-control-allow-origin'], undefined);
  });

  test('the UI origin gets its preflight answered (without a token: browsers send none)', async () => {
    const preflight = await send(port, {
      method: 'OPTIONS',
      headers: {
        origin: UI,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace,authorization',
        'access-control-request-private-network': 'true',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], UI);
    assert.match(preflight.headers['access-control-allow-headers'] ?? '', /authorization/);
    assert.match(preflight.headers['access-control-allow-headers'] ?? '', /x-namespace/);
    assert.equal(preflight.headers['access-control-allow-private-network'], 'true');
  });

  test('a foreign Host (DNS rebinding) gets 421, before anything else', async () => {
    for (const host of ['evil.example', `evil.example:${port}`, `localhost.evil.example:${port}`]) {
      const answer = await send(port, { headers: { ...json, ...bearer, host }, body: await decodeBody() });
      assert.equal(answer.status, 421, host);
      assert.match(answer.body, /CODEC_SERVER_ALLOWED_HOSTS/);
    }
    // Allowed: the defaults with the port, and a configured name on any port.
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'codec.example.com', 'codec.example.com:443']) {
      const answer = await send(port, { headers: { ...json, ...bearer, host }, body: await decodeBody() });
      assert.equal(answer.status, 200, host);
    }
  });

  test('a body over the limit gets 413 without being read: declared or streamed', async () => {
    // Declared: the server answers on the headers alone; the test sends only a fraction of it.
    const declared = await new Promise<Answer>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/decode',
          headers: { ...json, ...bearer, host: `localhost:${port}`, 'content-length': 10 * 1024 * 1024 },
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) =>
        err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err),
      );
      req.write(Buffer.alloc(1024, 'a')); // and never the rest
    });
    assert.equal(declared.status, 413);
    assert.match(declared.body, /CODEC_SERVER_MAX_BODY_BYTES/);
    // Streamed (chunked, no length): refused once the limit is passed.
    const streamed = await send(port, {
      headers: { ...json, ...bearer },
      chunks: Array.from({ length: 4 }, () => Buffer.alloc(32 * 1024, 'a')),
    });
    assert.equal(streamed.status, 413);
    // Unauthenticated large bodies are refused before any of them is read.
    const anonymous = await send(port, {
      headers: { ...json, 'content-length': 10 * 1024 * 1024 },
      body: Buffer.alloc(1024),
    });
    assert.equal(anonymous.status, 401);
  });

  test('malformed bodies and other paths get 400/404/405', async () => {
    assert.equal((await send(port, { headers: { ...json, ...bearer }, body: 'not json' })).status, 400);
    assert.equal((await send(port, { headers: { ...json, ...bearer }, body: '{"payloads": 3}' })).status, 400);
    assert.equal((await send(port, { path: '/other', headers: bearer, body: '{}' })).status, 404);
    assert.equal((await send(port, { method: 'GET', path: '/decode', headers: bearer })).status, 405);
    const root = await send(port, { method: 'GET', path: '/', headers: bearer });
    assert.equal(root.status, 200);
  });

  test('a payload under an unknown key id gets 400 naming the id and what to set', async () => {
    const other = new EncryptionCodec(randomBytes(32), 'someone-elses-key');
    const [encoded] = await other.encode([
      { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('1') },
    ]);
    const body = JSON.stringify({
      payloads: [
        {
          metadata: Object.fromEntries(
            Object.entries(encoded!.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
          ),
          data: Buffer.from(encoded!.data!).toString('base64'),
        },
      ],
    });
    const answer = await send(port, { headers: { ...json, ...bearer }, body });
    assert.equal(answer.status, 400);
    assert.match(answer.body, /"someone-elses-key"/);
    assert.match(answer.body, /TEMPORAL_PAYLOAD_DECRYPT_KEYS/);
  });
});

describe('open mode and start-up checks', () => {
  test('open on loopback serves without a token, still only for its origins and Hosts', async () => {
    const { server, url } = await startCodecServer(codec, {
      port: 0,
      open: true,
      allowedOrigins: ['http://localhost:8233', 'http://127.0.0.1:8233'],
    });
    const port = Number(new URL(url).port);
    try {
      assert.equal(url, `http://localhost:${port}`);
      const ok = await send(port, { headers: { ...json, origin: 'http://127.0.0.1:8233' }, body: await decodeBody() });
      assert.equal(ok.status, 200, ok.body);
      assert.equal(
        (await send(port, { headers: { ...json, origin: 'https://evil.example' }, body: await decodeBody() })).status,
        403,
      );
      assert.equal(
        (await send(port, { headers: { ...json, host: `rebound.evil.example:${port}` }, body: await decodeBody() }))
          .status,
        421,
      );
    } finally {
      server.close();
    }
  });

  test('open mode on a non-loopback host is refused, saying what to set', async () => {
    for (const host of ['0.0.0.0', '::', '10.1.2.3', 'codec.example.com']) {
      await assert.rejects(
        startCodecServer(codec, { port: 0, host, open: true }),
        /not a loopback address[\s\S]*CODEC_SERVER_TOKEN/,
        host,
      );
    }
  });

  test('without a token or the open flag it does not start', async () => {
    await assert.rejects(
      startCodecServer(codec, { port: 0 }),
      /needs authentication: set CODEC_SERVER_TOKEN[\s\S]*CODEC_SERVER_OPEN/,
    );
    await assert.rejects(startCodecServer(codec, { port: 0, token: 'short' }), /too short/);
    await assert.rejects(startCodecServer(codec, { port: 0, token: TOKEN, open: true }), /drop one/);
    await assert.rejects(
      startCodecServer(codec, { port: 0, token: TOKEN, allowedOrigins: '*' }),
      /not allowed as the codec server's UI origin/,
    );
    await assert.rejects(
      startCodecServer(codec, { port: 0, token: TOKEN, allowedOrigins: 'https://ui.example.com/path' }),
      /not an origin/,
    );
  });

  test('a token server may bind everywhere; the bind host is not a Host name then', async () => {
    const { server, url } = await startCodecServer(codec, {
      port: 0,
      host: '0.0.0.0',
      token: TOKEN,
      allowedHosts: ['codec.internal:8443'],
    });
    const port = Number(new URL(url).port);
    try {
      assert.equal(
        (await send(port, { headers: { ...json, ...bearer, host: `0.0.0.0:${port}` }, body: '{"payloads":[]}' }))
          .status,
        421,
      );
      assert.equal(
        (await send(port, { headers: { ...json, ...bearer, host: 'codec.internal:8443' }, body: '{"payloads":[]}' }))
          .status,
        200,
      );
      assert.equal(
        (await send(port, { headers: { ...json, ...bearer, host: 'codec.internal:9999' }, body: '{"payloads":[]}' }))
          .status,
        421,
      );
    } finally {
      server.close();
    }
  });

  test('the environment names every setting', () => {
    const options = codecServerOptionsFromEnv({
      CODEC_SERVER_TOKEN: TOKEN,
      CODEC_SERVER_ALLOWED_ORIGIN: `${UI}, http://localhost:8080`,
      CODEC_SERVER_ALLOWED_HOSTS: 'codec.example.com',
      CODEC_SERVER_HOST: '0.0.0.0',
      CODEC_SERVER_PORT: '9000',
      CODEC_SERVER_MAX_BODY_BYTES: '1048576',
    });
    assert.deepEqual(options, {
      port: 9000,
      host: '0.0.0.0',
      token: TOKEN,
      open: false,
      allowedOrigins: [UI, 'http://localhost:8080'],
      allowedHosts: ['codec.example.com'],
      maxBodyBytes: 1048576,
    });
    assert.equal(codecServerOptionsFromEnv({ CODEC_SERVER_OPEN: '1' }).open, true);
    assert.equal(codecServerOptionsFromEnv({}).host, '127.0.0.1');
    assert.throws(
      () => codecServerOptionsFromEnv({ CODEC_SERVER_MAX_BODY_BYTES: 'lots' }),
      /CODEC_SERVER_MAX_BODY_BYTES/,
    );
  });

  test('loopback detection', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1'])
      assert.ok(isLoopbackHost(h), h);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'example.com', 'localhost.example.com'])
      assert.ok(!isLoopbackHost(h), h);
  });
});
