// The browser a task runs in is reached through Bright Data's proxy with a password in the URL.
// BrowserAI's dashboard shows engine log lines with that URL in clear, and an inspector link
// that embeds the same URL (percent-encoded) in a query parameter (docs/browserai.md). The
// emulator writes such lines into `progress.logs`, each task with a password of its own, so a
// client's redaction is tested against the secret it will really meet: whatever a client stores
// or shows of BrowserAI's output must not carry it.
//
// That these lines reach `progress.logs` of `GET /tasks/{id}` is a GUESS: the dashboard shows
// them, the API answers seen never had `progress` at all.

import { randomBytes, randomInt } from 'node:crypto';

/** What a test may ask about a task's browser connection, to check that it never leaks. */
export interface BrowserConnection {
  /** 16 random letters and digits, different for every task. */
  proxyPassword: string;
  /** `wss://brd-customer-hl_<8hex>-zone-browser_ai:<proxyPassword>@brd.superproxy.io:9222`. */
  connectionUrl: string;
}

const PROXY_HOST = 'brd.superproxy.io:9222';
const INSPECTOR_URL = 'https://brightdata.com/cp/browser_ai/inspect';
const PASSWORD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const PASSWORD_LENGTH = 16;

/** A Bright Data customer ID as the proxy user carries it (`hl_` and 8 hex digits): one per emulator, as one account. */
export function newCustomerId(): string {
  return `hl_${randomBytes(4).toString('hex')}`;
}

export function newBrowserConnection(customerId: string): BrowserConnection {
  let proxyPassword = '';
  for (let i = 0; i < PASSWORD_LENGTH; i++) proxyPassword += PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)];
  const user = `brd-customer-${customerId}-zone-browser_ai`;
  return { proxyPassword, connectionUrl: `wss://${user}:${proxyPassword}@${PROXY_HOST}` };
}

/** The engine's log lines when it opens the browser: the URL in clear, then inside the inspector link. */
export function connectionLogLines(connection: BrowserConnection): string[] {
  return [
    `Connecting to browser: ${connection.connectionUrl}`,
    `Inspector: ${INSPECTOR_URL}?wss=${encodeURIComponent(connection.connectionUrl)}`,
  ];
}
