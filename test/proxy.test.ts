// BrowserAIClient behind an HTTP proxy (issue 9): HTTPS goes through a CONNECT tunnel, so the
// proxy relays only TLS and never sees the API token or a request body; NO_PROXY bypasses it;
// a proxy that is unreachable or refuses the tunnel gives a typed, never-sent error that names
// the proxy host and what to check, never the proxy's credentials.
//
// A local CONNECT proxy records every byte it relays; a local HTTPS server with a fixed
// self-signed certificate (browserai.test and 127.0.0.1, valid 2000-2099) stands in for
// BrowserAI. The proxy resolves every host to 127.0.0.1, so `browserai.test` needs no DNS.
// Proxy variables are set per test and restored; this file runs in its own process.
// Unit tests: no Temporal server.

import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { inspect } from 'node:util';
import { BrowserAIClient, BrowserAIError } from '../src/browserai';
import { bypassesProxy, createTransport, proxyFromEnv } from '../src/browserai/proxy';
import { CERT, KEY } from './helpers/test-certificate';

const TOKEN = 'tok-SECRET-5e1d0c7a-proxy-must-not-see';
const CODE = 'OTP-482913-one-time';
const PROXY_USER = 'proxy-user';
const PROXY_PASSWORD = 'pr0xy-PASS-c4f2';

const PROXY_VARS = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];
const savedEnv = new Map(PROXY_VARS.map((name) => [name, process.env[name]]));

function setProxyEnv(vars: Record<string, string>): void {
  for (const name of PROXY_VARS) delete process.env[name];
  Object.assign(process.env, vars);
}

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** The stand-in for BrowserAI: answers every request with an accepted instructions answer. */
let origin: HttpsServer;
let originPort: number;
const originSeen: Seen[] = [];

interface Proxy {
  server: Server;
  url: string;
  /** CONNECT requests and plain (absolute-URL) requests, as the proxy received them. */
  requests: Seen[];
  /** Every byte the proxy relayed, both directions. */
  relayed: Buffer[];
  /** Tunnel sockets: an http.Server does not close them itself. */
  sockets: Set<Socket>;
}

/** A CONNECT proxy; `refuse` makes it answer CONNECT with that status instead of tunnelling. */
async function startProxy(refuse?: number): Promise<Proxy> {
  const requests: Seen[] = [];
  const relayed: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    // Plain proxied HTTP (an http base URL): forward it to the origin's port on 127.0.0.1.
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      relayed.push(Buffer.from(`${req.method} ${req.url}\n${JSON.stringify(req.headers)}\n${body}`));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'running' }));
    });
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: '' });
    sockets.add(client);
    if (refuse !== undefined) {
      client.end(`HTTP/1.1 ${refuse} Refused\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    const port = Number((req.url ?? '').split(':').pop());
    const upstream = connect(port, '127.0.0.1', () => {
      sockets.add(upstream);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) {
        relayed.push(Buffer.from(head));
        upstream.write(head);
      }
      client.on('data', (c: Buffer) => relayed.push(Buffer.from(c)));
      upstream.on('data', (c: Buffer) => relayed.push(Buffer.from(c)));
      client.pipe(upstream).pipe(client);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://${PROXY_USER}:${PROXY_PASSWORD}@127.0.0.1:${port}`, requests, relayed, sockets };
}

async function stopServer(server: Server | HttpsServer, sockets: Set<Socket> = new Set()): Promise<void> {
  for (const socket of sockets) socket.destroy();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}

async function expectNetworkError(promise: Promise<unknown>): Promise<BrowserAIError> {
  const err = await promise.then(
    () => assert.fail('expected the request to fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof BrowserAIError, `expected a BrowserAIError, got ${inspect(err)}`);
  assert.equal(err.kind, 'NetworkError', err.message);
  return err;
}

function assertNoProxySecret(text: string): void {
  assert.ok(!text.includes(PROXY_PASSWORD), `proxy password leaked: ${text}`);
  assert.ok(!text.includes(`${PROXY_USER}:`), `proxy credentials leaked: ${text}`);
}

const instructions = { instructions: [{ action: `Type the one-time code ${CODE} and submit` }] };

before(async () => {
  setDefaultCACertificates([...getCACertificates('default'), CERT]);
  origin = createHttpsServer({ key: KEY, cert: CERT }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      originSeen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ executionId: 'exec_1', status: 'running' }));
    });
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
  originPort = (origin.address() as AddressInfo).port;
});

after(async () => {
  await stopServer(origin);
  for (const [name, value] of savedEnv) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

beforeEach(() => {
  originSeen.length = 0;
  setProxyEnv({});
});

describe('HTTPS through an HTTPS_PROXY', () => {
  let proxy: Proxy;
  beforeEach(async () => {
    proxy = await startProxy();
  });
  afterEach(async () => {
    await stopServer(proxy.server, proxy.sockets);
  });

  test('is tunnelled: the proxy sees a CONNECT, with its credentials, and only ciphertext', async () => {
    setProxyEnv({ HTTPS_PROXY: proxy.url });
    const client = new BrowserAIClient({ apiToken: TOKEN, baseUrl: `https://browserai.test:${originPort}/api/v1` });
    const answer = await client.appendInstructions('exec_1', instructions);
    assert.equal(answer.status, 'running');

    assert.equal(proxy.requests.length, 1);
    const [connectRequest] = proxy.requests;
    assert.equal(connectRequest!.method, 'CONNECT');
    assert.equal(connectRequest!.url, `browserai.test:${originPort}`);
    assert.equal(
      connectRequest!.headers['proxy-authorization'],
      `Basic ${Buffer.from(`${PROXY_USER}:${PROXY_PASSWORD}`).toString('base64')}`,
    );
    assert.equal(connectRequest!.headers.authorization, undefined, 'the API token is not on the CONNECT');

    // BrowserAI got the request in full, and nothing meant for the proxy.
    assert.equal(originSeen.length, 1);
    assert.equal(originSeen[0]!.url, '/api/v1/tasks/exec_1/instructions');
    assert.equal(originSeen[0]!.headers.authorization, `apikey ${TOKEN}`);
    assert.ok(originSeen[0]!.body.includes(CODE));
    assert.equal(originSeen[0]!.headers['proxy-authorization'], undefined);

    const relayed = Buffer.concat(proxy.relayed);
    assert.ok(relayed.length > 200, 'the proxy relayed the TLS exchange');
    for (const secret of [TOKEN, CODE, 'apikey', '/api/v1/tasks', 'exec_1']) {
      assert.equal(relayed.indexOf(secret), -1, `the proxy saw "${secret}" in clear`);
    }
    assertNoProxySecret(inspect(client, { showHidden: true, depth: 5 }));
  });

  test('lower-case https_proxy wins over HTTPS_PROXY, as for curl and Node', async () => {
    setProxyEnv({ https_proxy: proxy.url, HTTPS_PROXY: 'http://127.0.0.1:1' });
    const client = new BrowserAIClient({ apiToken: TOKEN, baseUrl: `https://browserai.test:${originPort}/api/v1` });
    await client.appendInstructions('exec_1', instructions);
    assert.equal(proxy.requests[0]?.method, 'CONNECT');
  });

  test('NO_PROXY bypasses the proxy', async () => {
    setProxyEnv({ HTTPS_PROXY: proxy.url, NO_PROXY: 'localhost, 127.0.0.1' });
    const client = new BrowserAIClient({ apiToken: TOKEN, baseUrl: `https://127.0.0.1:${originPort}/api/v1` });
    await client.appendInstructions('exec_1', instructions);
    assert.equal(originSeen.length, 1);
    assert.equal(proxy.requests.length, 0, 'the proxy saw nothing');
  });

  test('the proxy option overrides the environment; false turns the proxy off', async () => {
    setProxyEnv({ HTTPS_PROXY: 'http://127.0.0.1:1' });
    const viaOption = new BrowserAIClient({
      apiToken: TOKEN,
      baseUrl: `https://browserai.test:${originPort}/api/v1`,
      proxy: proxy.url,
    });
    await viaOption.appendInstructions('exec_1', instructions);
    assert.equal(proxy.requests[0]?.method, 'CONNECT');

    const direct = new BrowserAIClient({
      apiToken: TOKEN,
      baseUrl: `https://127.0.0.1:${originPort}/api/v1`,
      proxy: false,
    });
    await direct.appendInstructions('exec_1', instructions);
    assert.equal(proxy.requests.length, 1);
    assert.equal(originSeen.length, 2);
  });

  test('an http base URL (the emulator) goes through HTTP_PROXY as a proxied request, not through HTTPS_PROXY', async () => {
    setProxyEnv({ HTTP_PROXY: proxy.url, HTTPS_PROXY: 'http://127.0.0.1:1' });
    const client = new BrowserAIClient({ apiToken: TOKEN, baseUrl: 'http://emulator.test:8787/api/v1' });
    const answer = await client.appendInstructions('exec_1', instructions);
    assert.equal(answer.status, 'running');
    assert.equal(proxy.requests[0]?.method, 'POST');
    assert.equal(proxy.requests[0]?.url, 'http://emulator.test:8787/api/v1/tasks/exec_1/instructions');
  });
});

describe('a proxy that fails gives a typed error that was never sent', () => {
  for (const [status, hint] of [
    [407, /check the user and password in HTTPS_PROXY/],
    [403, /does not allow tunnels to browserai\.test:\d+/],
    [502, /could not reach browserai\.test:\d+/],
  ] as const) {
    test(`a CONNECT refused with ${status}`, async () => {
      const proxy = await startProxy(status);
      try {
        setProxyEnv({ HTTPS_PROXY: proxy.url });
        const client = new BrowserAIClient({ apiToken: TOKEN, baseUrl: `https://browserai.test:${originPort}/api/v1` });
        const err = await expectNetworkError(client.appendInstructions('exec_1', instructions));
        assert.equal(err.mayHaveReachedServer, false, 'a refused tunnel means BrowserAI never got the request');
        assert.equal(err.retryable, true);
        const port = new URL(proxy.url).port;
        assert.match(
          err.message,
          new RegExp(
            `was not sent: the proxy 127\\.0\\.0\\.1:${port} refused the tunnel to browserai\\.test:${originPort} with ${status}`,
          ),
        );
        assert.match(err.message, hint);
        assertNoProxySecret(err.message);
        assertNoProxySecret(inspect(err, { showHidden: true, depth: 10 }));
        assert.equal(proxy.requests.length, 1);
        assert.equal(originSeen.length, 0);
      } finally {
        await stopServer(proxy.server, proxy.sockets);
      }
    });
  }

  test('a proxy that cannot be reached', async () => {
    const proxy = await startProxy();
    const { port } = proxy.server.address() as AddressInfo;
    await stopServer(proxy.server);
    setProxyEnv({ HTTPS_PROXY: proxy.url });
    const client = new BrowserAIClient({ apiToken: TOKEN, baseUrl: `https://browserai.test:${originPort}/api/v1` });
    const err = await expectNetworkError(client.appendInstructions('exec_1', instructions));
    assert.equal(err.mayHaveReachedServer, false);
    assert.match(
      err.message,
      new RegExp(
        `could not reach the proxy 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)\\. Check the proxy in HTTPS_PROXY`,
      ),
    );
    assertNoProxySecret(err.message);
  });

  test('a proxy that accepts the connection but never answers the CONNECT', async () => {
    // Node's tunnel gives up with the agent's socket timeout (5 s), which axios reports as its
    // own timeout: a Timeout that may have reached BrowserAI, the cautious reading.
    const silent = createServer();
    const sockets = new Set<Socket>();
    silent.on('connect', (_req, socket: Socket) => {
      sockets.add(socket); // and never answers
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const { port } = silent.address() as AddressInfo;
      const client = new BrowserAIClient({
        apiToken: TOKEN,
        baseUrl: `https://browserai.test:${originPort}/api/v1`,
        proxy: `http://127.0.0.1:${port}`,
      });
      const started = Date.now();
      const err = await client.appendInstructions('exec_1', instructions).then(
        () => assert.fail('expected the request to fail'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof BrowserAIError && err.kind === 'Timeout', inspect(err));
      assert.equal(err.mayHaveReachedServer, true);
      assert.ok(Date.now() - started < 8000);
      assert.equal(originSeen.length, 0);
    } finally {
      await stopServer(silent, sockets);
    }
  });

  test('an unusable proxy URL is refused when the client is created, without showing it', () => {
    setProxyEnv({ HTTPS_PROXY: `socks5://${PROXY_USER}:${PROXY_PASSWORD}@proxy.corp:1080` });
    assert.throws(
      () => new BrowserAIClient({ apiToken: TOKEN }),
      (err: Error) =>
        err instanceof TypeError &&
        /HTTPS_PROXY names a socks5 proxy/.test(err.message) &&
        !err.message.includes(PROXY_PASSWORD),
    );
  });
});

describe('choosing the proxy', () => {
  const url = (u: string) => new URL(u);

  test('NO_PROXY entries', () => {
    const api = url('https://api.browser.ai/api/v1');
    for (const entry of [
      '*',
      'api.browser.ai',
      'browser.ai',
      '.browser.ai',
      '*.browser.ai',
      'API.Browser.AI',
      'browser.ai:443',
      'other.com, browser.ai',
      'browser.ai.',
    ]) {
      assert.equal(bypassesProxy(api, entry), true, entry);
    }
    for (const entry of [
      '',
      ' , ',
      'rowser.ai',
      'ai.browser.ai',
      'browser.ai:8443',
      'notbrowser.ai',
      'x.api.browser.ai',
    ]) {
      assert.equal(bypassesProxy(api, entry), false, entry);
    }
    assert.equal(
      bypassesProxy(url('https://notbrowser.ai/'), '.browser.ai'),
      false,
      'a suffix matches at a label boundary',
    );
    assert.equal(bypassesProxy(url('http://127.0.0.1:8787/api/v1'), 'localhost,127.0.0.1'), true);
    assert.equal(bypassesProxy(url('http://127.0.0.1:8787/api/v1'), '127.0.0.1:8787'), true);
    assert.equal(bypassesProxy(url('http://127.0.0.1:8787/api/v1'), '0.0.1'), false, 'IP addresses have no subdomains');
    assert.equal(bypassesProxy(url('http://10.1.2.3/'), '10.0.0.0/8'), true);
    assert.equal(bypassesProxy(url('http://11.1.2.3/'), '10.0.0.0/8'), false);
    assert.equal(bypassesProxy(url('http://[::1]:8787/'), '::1'), true);
    assert.equal(bypassesProxy(url('http://[::1]:8787/'), '[::1]:8787'), true);
  });

  test('which variable applies', () => {
    const https = url('https://browser.ai/api/v1');
    const http = url('http://localhost:8787/api/v1');
    assert.deepEqual(proxyFromEnv(https, { HTTPS_PROXY: 'http://p:1', HTTP_PROXY: 'http://q:2' }), {
      value: 'http://p:1',
      source: 'HTTPS_PROXY',
    });
    assert.equal(proxyFromEnv(https, { HTTP_PROXY: 'http://q:2' }), undefined, 'HTTP_PROXY is not for https');
    assert.deepEqual(proxyFromEnv(http, { HTTPS_PROXY: 'http://p:1', http_proxy: 'http://q:2' }), {
      value: 'http://q:2',
      source: 'http_proxy',
    });
    assert.equal(
      proxyFromEnv(http, { HTTP_PROXY: 'http://q:2', no_proxy: 'localhost', NO_PROXY: 'other' }),
      undefined,
      'no_proxy wins over NO_PROXY',
    );
    assert.equal(proxyFromEnv(https, { HTTPS_PROXY: '  ' }), undefined);
  });

  test('a proxy URL without a scheme is an http proxy; an https:// proxy is kept', () => {
    assert.equal(createTransport('https://browser.ai/api/v1', 'proxy.corp:3128', {}).proxy?.label, 'proxy.corp:3128');
    assert.equal(createTransport('https://browser.ai/api/v1', 'https://proxy.corp', {}).proxy?.label, 'proxy.corp:443');
    assert.equal(createTransport('https://browser.ai/api/v1', undefined, {}).proxy, undefined);
    assert.equal(
      createTransport('not a url', undefined, { HTTPS_PROXY: 'http://p:1' }).proxy,
      undefined,
      'a bad base URL still fails per request',
    );
  });
});
