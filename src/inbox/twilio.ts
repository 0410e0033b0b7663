// An inbound SMS as Twilio posts it (form-encoded `MessageSid`, `From`, `To`, `Body`), signed as
// Twilio documents (https://www.twilio.com/docs/usage/security#validating-requests): base64 of
// an HMAC-SHA1, keyed with the account's auth token, of the full URL Twilio called followed by
// every POST parameter's name and value, sorted by name. Twilio signs the URL with or without the
// standard port, so both are checked, as its own libraries do. The Twilio SDK is not used for
// this: it brings an HTTP client, a JWT library and 12 MB for one HMAC.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { refused, type ArrivedMessage, type Refused } from './arrived-message';

/** The `X-Twilio-Signature` of a request to `url` with these form parameters. */
export function twilioSignature(authToken: string, url: string, params: URLSearchParams): string {
  const names = [...new Set(params.keys())].sort();
  let data = new URL(url).toString();
  // A name given several times counts each distinct value once, in order (as Twilio's libraries do).
  for (const name of names) for (const value of [...new Set(params.getAll(name))].sort()) data += name + value;
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** The message of a Twilio request to `url`, or why it is refused (401 for a missing or wrong signature). */
export function readTwilio(
  body: Buffer,
  signature: string | undefined,
  url: string,
  authToken: string,
): ArrivedMessage | Refused {
  const params = new URLSearchParams(body.toString('utf8'));
  if (!signature || !signedAsTwilio(authToken, signature, url, params))
    return refused(
      401,
      'X-Twilio-Signature is missing or does not match (check the auth token and BROWSERAI_INBOX_PUBLIC_URL)',
    );
  const messageId = params.get('MessageSid') ?? params.get('SmsSid');
  const [to, from] = [params.get('To'), params.get('From')];
  if (!messageId || !to || !from) return refused(400, 'a Twilio SMS webhook carries MessageSid, From and To');
  return { messageId: `twilio:${messageId}`, to, from, text: params.get('Body') ?? '' };
}

function signedAsTwilio(authToken: string, signature: string, url: string, params: URLSearchParams): boolean {
  const given = Buffer.from(signature);
  return [withoutPort(url), withStandardPort(url)].some((variant) => {
    const expected = Buffer.from(twilioSignature(authToken, variant, params));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}

function withoutPort(url: string): string {
  const parsed = new URL(url);
  parsed.port = '';
  return parsed.toString();
}

/** The URL with its scheme's port written out (`https://host:443/...`), which `URL` itself always drops. */
function withStandardPort(url: string): string {
  const parsed = new URL(url);
  if (parsed.port) return parsed.toString();
  const port = parsed.protocol === 'https:' ? 443 : 80;
  return `${parsed.protocol}//${parsed.host}:${port}${parsed.pathname}${parsed.search}`;
}
