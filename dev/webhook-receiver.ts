// A webhook receiver as a service would run one: it verifies every delivery's signature with the
// Standard Webhooks library (`standardwebhooks`, the one the worker signs with) and records it.
// What it answers is up to the caller (a status, or no answer at all), so tests can make it fail,
// and the benchmark can time the moment an event arrives. Listens on loopback only; over HTTPS
// when given a certificate (the URL then names the certificate's host, reached through a proxy).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { WebhookBody } from '../src/contract/webhooks';

export interface ReceivedWebhook {
  /** The `webhook-id` header: the same on every retry of one event. */
  id: string;
  timestamp: string;
  signature: string;
  /** Which of the receiver's secrets verified the signature (their index), or null if none did. */
  verifiedWith: number[];
  body: WebhookBody;
  raw: string;
  /** When it arrived (epoch ms), and what the receiver answered ('hang': nothing). */
  at: number;
  answered: number | 'hang';
}

/** What to answer a delivery: an HTTP status, or `hang` (hold the request open until the receiver closes). */
export type ReceiverAnswer = number | 'hang';

export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** Decides the answer of each delivery (default 200). */
  answer: (delivery: Omit<ReceivedWebhook, 'answered'>) => ReceiverAnswer = () => 200;
  readonly #hung = new Set<ServerResponse>();
  readonly #listeners = new Set<(delivery: ReceivedWebhook) => void>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly verifiers: Webhook[],
  ) {}

  /**
   * `secrets`: the `whsec_` secrets signatures are checked against (any one of them verifying counts).
   * `tls`: serve HTTPS with this key and certificate, at `https://<host>:<port>/...`.
   */
  static async start(secrets: string[], tls?: { key: string; cert: string; host: string }): Promise<WebhookReceiver> {
    const handlers: { handle?: (req: IncomingMessage, res: ServerResponse) => Promise<void> } = {};
    const handle = (req: IncomingMessage, res: ServerResponse) => void handlers.handle!(req, res);
    const server = tls ? createHttpsServer({ key: tls.key, cert: tls.cert }, handle) : createServer(handle);
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const receiver = new WebhookReceiver(
      server,
      tls ? `https://${tls.host}:${port}/hooks/browserai` : `http://127.0.0.1:${port}/hooks/browserai`,
      secrets.map((secret) => new Webhook(secret)),
    );
    handlers.handle = (req, res) => receiver.handle(req, res);
    return receiver;
  }

  /** Calls `listener` for each delivery as it arrives (before it is answered). */
  onDelivery(listener: (delivery: ReceivedWebhook) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Deliveries of one event type. */
  ofType(type: WebhookBody['type']): ReceivedWebhook[] {
    return this.received.filter((delivery) => delivery.body.type === type);
  }

  async close(): Promise<void> {
    for (const res of this.#hung) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const header = (name: string) => String(req.headers[name] ?? '');
    const headers = {
      'webhook-id': header('webhook-id'),
      'webhook-timestamp': header('webhook-timestamp'),
      'webhook-signature': header('webhook-signature'),
    };
    const verifiedWith = this.verifiers.flatMap((verifier, i) => {
      try {
        verifier.verify(raw, headers);
        return [i];
      } catch {
        return [];
      }
    });
    let body: WebhookBody;
    try {
      body = JSON.parse(raw) as WebhookBody;
    } catch {
      body = { type: 'task.finished', timestamp: '', data: {} } as unknown as WebhookBody;
    }
    const delivery = {
      id: headers['webhook-id'],
      timestamp: headers['webhook-timestamp'],
      signature: headers['webhook-signature'],
      verifiedWith,
      body,
      raw,
      at: Date.now(),
    };
    const answer = verifiedWith.length === 0 ? 401 : this.answer(delivery);
    const recorded = { ...delivery, answered: answer };
    this.received.push(recorded);
    for (const listener of this.#listeners) listener(recorded);
    if (answer === 'hang') {
      this.#hung.add(res);
      res.once('close', () => this.#hung.delete(res));
      return;
    }
    res.writeHead(answer).end();
  }
}
