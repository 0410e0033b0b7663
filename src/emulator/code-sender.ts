// The site's side of a code sent by SMS or email (`[sms-code=…]`, `[email-code=…]`): when an
// emulated task reaches a code form, a new code goes to the inbox as the provider would post it:
// an SMS as Twilio's webhook (form-encoded, `X-Twilio-Signature`), an email as a Mailgun route's
// raw MIME (signed timestamp and token). The signatures are made here, from the providers' own
// documentation, not with the inbox's code: a test then checks one reading against the other.
// Only such tasks own a timer (the form shows at a moment no request marks).
import { createHmac, randomBytes, randomInt } from 'node:crypto';
import type { Task } from './tasks';

/** Where the emulator's sites send codes: the inbox, and the providers' secrets it verifies. */
export interface EmulatorInbox {
  /** The inbox's base URL, e.g. `http://127.0.0.1:8790` (SMS go to `/twilio`, emails to `/mailgun/mime`). */
  url: string;
  /** Signs SMS as Twilio does; without it, `[sms-code=…]` tasks send nothing. */
  twilioAuthToken?: string;
  /** Signs emails as Mailgun does; without it, `[email-code=…]` tasks send nothing. */
  mailgunSigningKey?: string;
}

/** The sender an SMS comes from (Twilio's test number), and an email's. */
const SMS_FROM = '+15005550006';
const EMAIL_FROM = 'noreply@emulator.browserai.test';

export class CodeSender {
  readonly #timers = new Map<Task, NodeJS.Timeout>();
  /** The code forms (by when they began to show) each task sent a code for. */
  readonly #sentFor = new WeakMap<Task, Set<number>>();
  #closed = false;

  constructor(private readonly inbox: EmulatorInbox) {}

  /** Looks at the task again (after a create or new instructions): a code due now, or a timer for its next change. */
  watch(task: Task): void {
    if (this.#closed || task.scenario.codeTo === null) return;
    clearTimeout(this.#timers.get(task));
    this.#timers.delete(task);
    const now = Date.now();
    const since = task.codeFormSince(now);
    const sent = this.#sentFor.get(task) ?? new Set<number>();
    this.#sentFor.set(task, sent);
    if (since !== null && !sent.has(since)) {
      const due = since + task.scenario.codeDelayMs - now;
      this.#later(task, Math.max(0, due), () => {
        // Still at that form (no code typed meanwhile): the site sends its code once.
        if (task.codeFormSince(Date.now()) !== since) return this.watch(task);
        sent.add(since);
        this.#send(task);
      });
      return;
    }
    const next = task.nextChangeAt(now);
    if (next !== null) this.#later(task, Math.max(0, next - now), () => this.watch(task));
  }

  close(): void {
    this.#closed = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }

  #later(task: Task, ms: number, then: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(task);
      then();
    }, ms);
    timer.unref();
    this.#timers.set(task, timer);
  }

  #send(task: Task): void {
    const { channel, address } = task.scenario.codeTo!;
    const code = String(randomInt(100_000, 1_000_000));
    const sent = { code, at: Date.now(), status: 0 };
    task.codesSent.push(sent);
    const text = `Your verification code is ${code}. It expires in 10 minutes.`;
    const request = channel === 'sms' ? this.#sms(address, text) : this.#email(address, text);
    if (!request) sent.status = -1;
    else
      void fetch(request.url, { method: 'POST', ...request.init }).then(
        (answer) => void (sent.status = answer.status),
        () => void (sent.status = -1),
      );
    this.watch(task);
  }

  #sms(to: string, text: string): { url: string; init: RequestInit } | null {
    const token = this.inbox.twilioAuthToken;
    if (!token) return null;
    const url = `${this.inbox.url.replace(/\/+$/, '')}/twilio`;
    const params = new URLSearchParams({
      MessageSid: `SM${randomBytes(16).toString('hex')}`,
      AccountSid: 'ACemulator',
      From: SMS_FROM,
      To: to,
      Body: text,
      NumMedia: '0',
    });
    // Twilio: the URL, then each parameter's name and value in name order, HMAC-SHA1 with the auth token, base64.
    const signed = [...params.keys()].sort().reduce((data, name) => data + name + params.get(name), url);
    const signature = createHmac('sha1', token).update(signed).digest('base64');
    return {
      url,
      init: {
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
        body: params.toString(),
      },
    };
  }

  #email(to: string, text: string): { url: string; init: RequestInit } | null {
    const key = this.inbox.mailgunSigningKey;
    if (!key) return null;
    const mime = [
      `From: Emulated site <${EMAIL_FROM}>`,
      `To: ${to}`,
      'Subject: Your verification code',
      `Message-ID: <${randomBytes(16).toString('hex')}@emulator.browserai.test>`,
      `Date: ${new Date().toUTCString()}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      text,
    ].join('\r\n');
    // Mailgun: HMAC-SHA256 of timestamp and token with the webhook signing key, hex.
    const timestamp = String(Math.floor(Date.now() / 1000));
    const token = randomBytes(25).toString('hex');
    const form = new FormData();
    form.set('recipient', to);
    form.set('sender', EMAIL_FROM);
    form.set('timestamp', timestamp);
    form.set('token', token);
    form.set(
      'signature',
      createHmac('sha256', key)
        .update(timestamp + token)
        .digest('hex'),
    );
    form.set('body-mime', new Blob([mime], { type: 'message/rfc822' }), 'message.mime');
    return { url: `${this.inbox.url.replace(/\/+$/, '')}/mailgun/mime`, init: { body: form } };
  }
}
