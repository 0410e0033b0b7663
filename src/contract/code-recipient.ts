// Where a task's one-time codes arrive (`codeRecipient`): a phone number or an email address, in
// the one normal form the task, the worker and the inbox compare, and the senders whose messages
// count. An address is personal data: it is shown masked, and names workflows only as a hash
// (activities/code-recipient.ts). Pure, so the workflow checks it too.

/**
 * Where the task's one-time codes arrive, for the inbox (`browserai-temporal inbox`) to type them:
 * docs/one-time-codes.md, "The inbox".
 */
export interface CodeRecipient {
  /**
   * A phone number in E.164 (`+` and the country code; spaces, dashes, dots and brackets are
   * ignored) or an email address (compared in lower case).
   * @maxLength 254
   */
  address: string;
  /**
   * Only messages from these senders count: phone numbers (E.164), short codes or sender names
   * (`GitHub`), email addresses, or `@domain` for any address at a domain. Default: any sender.
   * @maxItems 20
   */
  senders?: string[];
}

/** The most senders a task may name. */
export const MAX_CODE_SENDERS = 20;

const PHONE = /^\+[1-9]\d{6,14}$/;
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$/;
const LOCAL_PART = /^[^\s@"<>(),;:\\[\]]{1,64}$/;
/** A short code (`32665`) or an alphanumeric sender name (`GitHub`), as SMS providers pass them. */
const SENDER_NAME = /^[a-z0-9][a-z0-9 ._-]{0,31}$/;

/**
 * `value` in its normal form: a phone number as `+` and digits, an email address in lower case;
 * null when it is neither.
 */
export function normalAddress(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 254) return null;
  const trimmed = value.trim();
  if (trimmed.includes('@')) {
    const lower = trimmed.toLowerCase();
    const at = lower.lastIndexOf('@');
    return LOCAL_PART.test(lower.slice(0, at)) && DOMAIN.test(lower.slice(at + 1)) ? lower : null;
  }
  const phone = trimmed.replace(/[\s().-]/g, '');
  return PHONE.test(phone) ? phone : null;
}

/** A sender as `senders` and the inbox compare it: an address's normal form, `@domain`, or a sender name in lower case. */
export function normalSender(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim().toLowerCase();
  if (trimmed.startsWith('@')) return DOMAIN.test(trimmed.slice(1)) ? trimmed : null;
  const address = normalAddress(trimmed);
  if (address) return address;
  return SENDER_NAME.test(trimmed) ? trimmed.replace(/\s+/g, ' ') : null;
}

/** Whether a message from `from` (a normal sender) counts for a task that names `senders`. */
export function senderCounts(senders: readonly string[] | undefined, from: string): boolean {
  if (!senders || senders.length === 0) return true;
  return senders.some((sender) => (sender.startsWith('@') ? from.endsWith(sender) : from === sender));
}

/**
 * An address or sender as the UI, `state` and logs show it: `+44•••••••89`, `j•••@example.com`
 * (enough to tell which of yours it is, not enough to read it off a screen).
 */
export function maskedAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at > 0) return `${address[0]}•••${address.slice(at)}`;
  if (address.startsWith('+') && address.length > 6)
    return `${address.slice(0, 3)}${'•'.repeat(address.length - 5)}${address.slice(-2)}`;
  return address.length > 4 ? `${address.slice(0, 2)}•••` : address;
}

/** The problems of a task's `codeRecipient`, each naming what to send instead. */
export function codeRecipientProblems(value: unknown): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return ['codeRecipient must be an object: { address, senders? }'];
  const { address, senders, ...rest } = value as Record<string, unknown>;
  const problems: string[] = [];
  const extra = Object.keys(rest);
  if (extra.length > 0)
    problems.push(
      `codeRecipient has no field ${extra.map((k) => JSON.stringify(k)).join(', ')}: it takes address, senders`,
    );
  if (normalAddress(address) === null)
    problems.push(
      'codeRecipient.address must be a phone number in E.164 (+ and the country code, e.g. +14155550123) or an email address',
    );
  if (senders === undefined) return problems;
  if (!Array.isArray(senders) || senders.length > MAX_CODE_SENDERS)
    return [...problems, `codeRecipient.senders must be a list of at most ${MAX_CODE_SENDERS} senders`];
  senders.forEach((sender, i) => {
    if (normalSender(sender) === null)
      problems.push(
        `codeRecipient.senders[${i}] must be a phone number (E.164), a short code or sender name (1-32 letters, digits, spaces, dots, dashes), an email address or @domain`,
      );
  });
  return problems;
}
