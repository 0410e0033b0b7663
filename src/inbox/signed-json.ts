// A message as JSON `{ to, from, text }`, signed as Standard Webhooks (the same signing library,
// secrets and headers as the webhooks the worker sends): for a pipeline of your own, or a
// provider the inbox does not read. Its `webhook-id` names the message: send the same one on a retry.
import type { Webhook } from 'standardwebhooks';
import { isPlainObject } from '../contract/text';
import { refused, type ArrivedMessage, type Refused } from './arrived-message';

/** The longest text read from a JSON message. */
const MAX_TEXT_CHARS = 16_000;

/** The message of a signed JSON request, or why it is refused (401 for a missing, wrong or stale signature). */
export function readSignedJson(
  body: Buffer,
  headers: Record<string, string | string[] | undefined>,
  verifiers: readonly Webhook[],
): ArrivedMessage | Refused {
  const header = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const signed = {
    'webhook-id': header('webhook-id') ?? '',
    'webhook-timestamp': header('webhook-timestamp') ?? '',
    'webhook-signature': header('webhook-signature') ?? '',
  };
  const payload = body.toString('utf8');
  const verified = verifiers.some((verifier) => {
    try {
      verifier.verify(payload, signed, { jsonParse: false });
      return true;
    } catch {
      return false; // the next secret, during a rotation
    }
  });
  if (!verified)
    return refused(
      401,
      'webhook-signature is missing, stale or does not match (Standard Webhooks, with BROWSERAI_INBOX_SECRET)',
    );
  let message: unknown;
  try {
    message = JSON.parse(payload);
  } catch {
    message = undefined;
  }
  if (!isPlainObject(message)) return refused(400, 'the body must be a JSON object { to, from, text }');
  const { to, from, text } = message;
  if (typeof to !== 'string' || typeof from !== 'string' || typeof text !== 'string')
    return refused(400, 'the body must be a JSON object { to, from, text } of strings');
  return { messageId: `webhook:${signed['webhook-id']}`, to, from, text: text.slice(0, MAX_TEXT_CHARS) };
}
