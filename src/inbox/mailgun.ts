// A forwarded email as a Mailgun route posts it (`forward("https://…/mailgun/mime")`): the raw
// MIME in `body-mime`, or the parsed fields for a URL without `mime`; form-encoded, or multipart
// with attachments. Signed as Mailgun documents (Securing Webhooks): hex of an HMAC-SHA256,
// keyed with the HTTP webhook signing key, of `timestamp` followed by `token`; a timestamp more
// than `maxAgeMs` from now is refused, so a captured request cannot be replayed later. The MIME
// is parsed with postal-mime.
import { createHmac, timingSafeEqual } from 'node:crypto';
import PostalMime from 'postal-mime';
import { refused, type ArrivedMessage, type Refused } from './arrived-message';

/** How old (or how far ahead) a signed timestamp may be; default 5 minutes. */
export const MAILGUN_MAX_AGE_MS = 5 * 60_000;

/** The `signature` Mailgun sends with `timestamp` and `token`. */
export function mailgunSignature(signingKey: string, timestamp: string, token: string): string {
  return createHmac('sha256', signingKey)
    .update(timestamp + token)
    .digest('hex');
}

/** The message of a Mailgun route's POST, or why it is refused (401 unsigned, 406 unreadable: Mailgun does not retry a 406). */
export async function readMailgun(
  body: Buffer,
  contentType: string | undefined,
  signingKey: string,
  nowMs: number,
  maxAgeMs = MAILGUN_MAX_AGE_MS,
): Promise<ArrivedMessage | Refused> {
  let form: FormData;
  try {
    form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType ?? '' } }).formData();
  } catch {
    return refused(401, 'a Mailgun route posts a form (urlencoded or multipart) with timestamp, token and signature');
  }
  const field = (name: string) => {
    const value = form.get(name);
    return typeof value === 'string' ? value : undefined;
  };
  const [timestamp, token, signature] = [field('timestamp'), field('token'), field('signature')];
  if (!timestamp || !token || !signature || !signedByMailgun(signingKey, timestamp, token, signature))
    return refused(401, 'the Mailgun signature is missing or does not match (check the HTTP webhook signing key)');
  if (!(Math.abs(nowMs - Number(timestamp) * 1_000) <= maxAgeMs))
    return refused(
      401,
      `the Mailgun timestamp is more than ${maxAgeMs / 1_000} s away from now (a replay, or a clock off)`,
    );
  const to = field('recipient');
  if (!to) return refused(406, 'a Mailgun route posts the recipient');
  const mime = form.get('body-mime');
  if (mime !== null) return fromMime(mime, to);
  const from = field('from') ?? field('sender');
  const messageId = field('Message-Id');
  if (!from || !messageId) return refused(406, 'a Mailgun route posts from and Message-Id (or body-mime)');
  const text = `${field('subject') ?? ''}\n${field('stripped-text') ?? field('body-plain') ?? ''}`;
  return { messageId: `mailgun:${messageId}`, to, from: addressIn(from), text };
}

function signedByMailgun(signingKey: string, timestamp: string, token: string, signature: string): boolean {
  const expected = Buffer.from(mailgunSignature(signingKey, timestamp, token));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

async function fromMime(mime: string | Blob, to: string): Promise<ArrivedMessage | Refused> {
  let email: Awaited<ReturnType<typeof PostalMime.parse>>;
  try {
    email = await PostalMime.parse(typeof mime === 'string' ? mime : await mime.arrayBuffer());
  } catch {
    return refused(406, 'body-mime is not a MIME message');
  }
  if (!email.from?.address || !email.messageId) return refused(406, 'the email has no From address or no Message-ID');
  const body = email.text ?? textOfHtml(email.html ?? '');
  return {
    messageId: `mailgun:${email.messageId}`,
    to,
    from: email.from.address,
    text: `${email.subject ?? ''}\n${body}`,
  };
}

/** `Name <address>` → `address`. */
function addressIn(from: string): string {
  return /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from;
}

/** An HTML-only email's words: styles and scripts dropped, tags made spaces, the common entities read. */
function textOfHtml(html: string): string {
  return html
    .replace(/<(style|script)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/gi, ' ')
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&amp;/gi, '&')
    .replace(/&lt;/gi, '<')
    .replace(/&gt;/gi, '>');
}
