// The inbox's configuration from the environment (the `inbox` command): which providers it reads,
// with their secrets, and how. Problems name the variable, never a secret's value.
import { Webhook } from 'standardwebhooks';
import { ConfigError } from '../contract/errors';
import { codePattern } from './code-in-text';
import type { InboxOptions } from './server';

/**
 * - `BROWSERAI_INBOX_TWILIO_AUTH_TOKEN`: reads Twilio's SMS webhooks (`/twilio`).
 * - `BROWSERAI_INBOX_MAILGUN_SIGNING_KEY`: reads emails a Mailgun route forwards (`/mailgun/mime`).
 * - `BROWSERAI_INBOX_SECRET` (`whsec_...`; during a rotation also `BROWSERAI_INBOX_SECRET_PREVIOUS`):
 *   reads JSON `{to, from, text}` signed as Standard Webhooks (`/messages`).
 * - `BROWSERAI_INBOX_PUBLIC_URL`: the scheme and host providers call (Twilio signs the full URL).
 * - `BROWSERAI_INBOX_CODE_PATTERNS`: JSON `{"project": "regular expression"}` (`*`: every other project).
 * - `BROWSERAI_INBOX_MAX_EMAIL_BYTES`: largest email body taken; default 5 MiB.
 *
 * Throws a ConfigError listing every problem.
 */
export function inboxOptionsFromEnv(
  env: Record<string, string | undefined>,
): Omit<InboxOptions, 'client' | 'taskQueue'> {
  const problems: string[] = [];
  const value = (name: string) => env[name]?.trim() || undefined;
  const authToken = value('BROWSERAI_INBOX_TWILIO_AUTH_TOKEN');
  const signingKey = value('BROWSERAI_INBOX_MAILGUN_SIGNING_KEY');
  const secrets = ['BROWSERAI_INBOX_SECRET', 'BROWSERAI_INBOX_SECRET_PREVIOUS'].flatMap((name) => {
    const secret = value(name);
    if (secret === undefined) return [];
    try {
      new Webhook(secret);
      if (secret.startsWith('whsec_')) return [secret];
    } catch {
      // reported below
    }
    problems.push(`${name} must be whsec_ followed by standard base64 (\`echo whsec_$(openssl rand -base64 32)\`)`);
    return [];
  });
  if (!authToken && !signingKey && secrets.length === 0)
    problems.push(
      'the inbox reads no provider: set BROWSERAI_INBOX_TWILIO_AUTH_TOKEN, BROWSERAI_INBOX_MAILGUN_SIGNING_KEY or BROWSERAI_INBOX_SECRET',
    );
  const publicUrl = value('BROWSERAI_INBOX_PUBLIC_URL');
  if (publicUrl !== undefined && !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(publicUrl))
    problems.push(
      'BROWSERAI_INBOX_PUBLIC_URL must be the scheme and host providers call, e.g. https://inbox.example.com',
    );
  const codePatterns: Record<string, RegExp> = {};
  const patterns = value('BROWSERAI_INBOX_CODE_PATTERNS');
  if (patterns !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(patterns);
    } catch {
      parsed = null;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      problems.push('BROWSERAI_INBOX_CODE_PATTERNS must be a JSON object {"project": "regular expression"}');
    else
      for (const [project, source] of Object.entries(parsed)) {
        try {
          codePatterns[project] = codePattern(project, String(source));
        } catch (err) {
          problems.push(`BROWSERAI_INBOX_CODE_PATTERNS: ${(err as Error).message}`);
        }
      }
  }
  const maxEmail = value('BROWSERAI_INBOX_MAX_EMAIL_BYTES');
  const maxEmailBytes = maxEmail === undefined ? undefined : Number(maxEmail);
  if (maxEmailBytes !== undefined && !(Number.isSafeInteger(maxEmailBytes) && maxEmailBytes >= 1024))
    problems.push('BROWSERAI_INBOX_MAX_EMAIL_BYTES must be a number of bytes, at least 1024');
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    ...(authToken ? { twilio: { authToken } } : {}),
    ...(signingKey ? { mailgun: { signingKey } } : {}),
    ...(secrets.length > 0 ? { secrets } : {}),
    ...(publicUrl ? { publicUrl } : {}),
    ...(Object.keys(codePatterns).length > 0 ? { codePatterns } : {}),
    ...(maxEmailBytes !== undefined ? { maxEmailBytes } : {}),
  };
}
