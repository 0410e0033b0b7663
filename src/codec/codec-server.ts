// A codec server for the Temporal UI and CLI: with payload encryption on, the UI shows
// ciphertext until it is pointed here (Settings -> Codec Server, or `npm start` does it).
// It decodes for whoever can reach it, so bind it to localhost or put it behind your auth.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { payloadCodecFromEnv } from './encryption-codec';

interface JSONPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

const fromJSON = ({ metadata, data }: JSONPayload): Payload => ({
  metadata: metadata ? Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])) : undefined,
  data: data ? Buffer.from(data, 'base64') : undefined,
});

const toJSON = ({ metadata, data }: Payload): JSONPayload => ({
  metadata: metadata ? Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) : undefined,
  data: data ? Buffer.from(data).toString('base64') : undefined,
});

export async function startCodecServer(codec: PayloadCodec, options: { port?: number; host?: string; allowOrigin?: string } = {}): Promise<{ url: string; server: Server }> {
  const allowOrigin = options.allowOrigin ?? '*';
  const server = createServer(async (req, res) => {
    res.setHeader('access-control-allow-origin', allowOrigin);
    res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
    res.setHeader('access-control-allow-headers', 'content-type, x-namespace, authorization');
    if (req.method === 'OPTIONS') return void res.writeHead(204).end();
    const action = req.method === 'POST' && (req.url === '/encode' || req.url === '/decode') ? req.url.slice(1) : undefined;
    if (!action) return void res.writeHead(404).end();
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const { payloads } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payloads: JSONPayload[] };
      const input = payloads.map(fromJSON);
      const output = action === 'encode' ? await codec.encode(input) : await codec.decode(input);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ payloads: output.map(toJSON) }));
    } catch (err) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(err instanceof Error ? err.message : 'bad request');
    }
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 8234, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://localhost:${port}`, server };
}

if (require.main === module) {
  const codec = payloadCodecFromEnv();
  if (!codec) {
    console.error('Set TEMPORAL_PAYLOAD_KEY (base64 of 32 bytes) to run the codec server.');
    process.exit(1);
  }
  startCodecServer(codec, { port: Number(process.env.CODEC_SERVER_PORT ?? 8234), allowOrigin: process.env.CODEC_SERVER_ALLOW_ORIGIN }).then(({ url }) =>
    console.log(`Codec server on ${url}: in the Temporal UI, set it under Settings -> Codec Server.`),
  );
}
