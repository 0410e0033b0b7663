// How webhook events travel: through HTTPS_PROXY as BrowserAI requests do (a CONNECT tunnel, so
// the proxy relays only TLS: never the body or the signature), and what a failed attempt says
// when the receiver does not answer in time (the timeout, named). Real worker, real dev server,
// the emulator over HTTP; the receiver is an HTTPS server named browserai.test, which only the
// proxy can resolve (it sends every tunnel to 127.0.0.1). This file runs in its own process and
// sets the proxy variables for the whole of it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { WebhookReceiver } from '../dev/webhook-receiver';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';
import { CERT, KEY } from './helpers/test-certificate';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const TIMEOUT_MS = 1_000;

/** A CONNECT proxy that tunnels every target to 127.0.0.1 and keeps what it saw. */
async function startConnectProxy() {
  const targets: string[] = [];
  const relayed: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req, client: Socket, head: Buffer) => {
    targets.push(req.url ?? '');
    sockets.add(client);
    const upstream = connect(Number((req.url ?? '').split(':').pop()), '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      client.on('data', (chunk: Buffer) => relayed.push(Buffer.from(chunk)));
      client.pipe(upstream).pipe(client);
    });
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    targets,
    relayed,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let stack: Stack;
let receiver: WebhookReceiver;
let proxy: Awaited<ReturnType<typeof startConnectProxy>>;
const savedEnv = { HTTPS_PROXY: process.env.HTTPS_PROXY, NO_PROXY: process.env.NO_PROXY };

before(async () => {
  setDefaultCACertificates([...getCACertificates('default'), CERT]);
  [receiver, proxy] = await Promise.all([
    WebhookReceiver.start([SECRET], { key: KEY, cert: CERT, host: 'browserai.test' }),
    startConnectProxy(),
  ]);
  // Read when the worker is made. Temporal and the emulator are on loopback: kept off the proxy.
  process.env.HTTPS_PROXY = proxy.url;
  process.env.NO_PROXY = '127.0.0.1,localhost';
  stack = await startStack({ codeLoop: { webhooks: { url: receiver.url, secrets: [SECRET], timeoutMs: TIMEOUT_MS } } });
});
after(async () => {
  await stack?.stop();
  await receiver?.close();
  await proxy?.close();
  for (const [name, value] of Object.entries(savedEnv))
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
});

describe('webhook events through HTTPS_PROXY', () => {
  test('an event goes through the proxy in a tunnel; a receiver that does not answer in time gets a failure naming the timeout', async () => {
    // The first attempt hangs past the timeout; the second (1 s later) is taken.
    let attempts = 0;
    receiver.answer = () => (++attempts === 1 ? 'hang' : 200);
    const handle = await stack.tasks.start(
      taskInput({
        instructions: [{ action: 'Log in as ops@example.com [needs-code]' }],
        webhook: { events: ['input.requested'], reference: 'route-test' },
      }),
    );
    // While the delivery retries, the activity's last failure says why: the timeout, by value and variable.
    const failure = await eventually('a failed attempt is recorded', async () => {
      const { raw } = await handle.describe();
      return raw.pendingActivities?.find((a) => a.lastFailure?.message)?.lastFailure?.message ?? undefined;
    });
    assert.match(
      failure,
      /^The webhook receiver did not answer within the webhook timeout \(1000 ms, BROWSERAI_WEBHOOK_TIMEOUT_MS or the plugin's webhooks\.timeoutMs\); retrying/,
    );
    const delivered = await eventually(
      'input.requested is delivered',
      () => receiver.received.find((d) => d.answered === 200 && d.body.data.workflowId === handle.workflowId),
      30_000,
    );
    assert.deepEqual(delivered.verifiedWith, [0]);
    assert.equal(receiver.received.length, 2);
    // Every attempt was a tunnel to the receiver's name; the proxy relayed only ciphertext.
    assert.ok(proxy.targets.length >= 1);
    for (const target of proxy.targets) assert.equal(target, new URL(receiver.url).host);
    const seen = Buffer.concat(proxy.relayed).toString('latin1');
    for (const secret of [handle.workflowId, 'route-test', delivered.signature, SECRET])
      assert.ok(!seen.includes(secret), 'the proxy saw the event in clear');
    await handle.terminate('test done');
  });
});
