// TOTP secrets held by the worker, and the RFC 6238 codes made from them (otpauth). A task names a
// secret; the secret itself stays here: never in workflow input, history, logs, spans or errors.
// The codes are computed, typed and masked in activities only, so the workflow never learns one.
import { HOTP, Secret } from 'otpauth';

/** A TOTP secret as an authenticator app takes it: base32, with the usual defaults (6 digits, 30 s, SHA-1). */
export interface TotpSecret {
  /** The shared secret, base32 (as in an `otpauth://` URI's `secret=`). */
  secret: string;
  /** 6 to 10; default 6. */
  digits?: number;
  /** Seconds per time step, 10 to 300; default 30. */
  period?: number;
  /** Default SHA1 (what nearly every site uses). */
  algorithm?: 'SHA1' | 'SHA256' | 'SHA512';
}

/** Secrets by name: the base32 secret alone, or with its parameters. Names are compared case-insensitively. */
export type TotpSecrets = Record<string, string | TotpSecret>;

/**
 * A code is typed only with at least this long left in its time step (the site must still take it
 * when BrowserAI types it), or half the step for periods under 20 s: a 10-s step never has 10 s left.
 */
export const TOTP_MIN_REMAINING_MS = 10_000;

/** The time a code of a step of `periodMs` must have left to be typed (see TOTP_MIN_REMAINING_MS). */
export function totpMinRemainingMs(periodMs: number): number {
  return Math.min(TOTP_MIN_REMAINING_MS, periodMs / 2);
}

const NAME = /^[A-Za-z0-9_]{1,64}$/;
const ALGORITHMS = ['SHA1', 'SHA256', 'SHA512'];

interface Key {
  secret: Secret;
  digits: number;
  periodMs: number;
  algorithm: string;
}

/** The problems of a set of secrets, each naming the secret but never showing it. */
export function totpSecretProblems(secrets: TotpSecrets, origin: (name: string) => string): string[] {
  const problems: string[] = [];
  for (const [name, given] of Object.entries(secrets)) {
    const where = origin(name);
    if (!NAME.test(name)) problems.push(`${where}: the name must be 1-64 letters, digits or underscores`);
    const spec = typeof given === 'string' ? { secret: given } : given;
    if (!spec || typeof spec.secret !== 'string' || !isBase32Secret(spec.secret))
      problems.push(
        `${where}: the secret must be base32 (A-Z, 2-7), at least 16 characters, as an otpauth:// URI's secret=`,
      );
    if (spec?.digits !== undefined && !(Number.isInteger(spec.digits) && spec.digits >= 6 && spec.digits <= 10))
      problems.push(`${where}: digits must be an integer from 6 to 10`);
    if (spec?.period !== undefined && !(Number.isInteger(spec.period) && spec.period >= 10 && spec.period <= 300))
      problems.push(`${where}: period must be a whole number of seconds from 10 to 300`);
    if (spec?.algorithm !== undefined && !ALGORITHMS.includes(spec.algorithm))
      problems.push(`${where}: algorithm must be one of ${ALGORITHMS.join(', ')}`);
  }
  return problems;
}

function isBase32Secret(text: string): boolean {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  if (!/^[A-Z2-7]{16,}$/.test(clean)) return false;
  try {
    Secret.fromBase32(clean);
    return true;
  } catch {
    return false;
  }
}

/**
 * The TOTP secrets a worker holds, by case-insensitive name, and the RFC 6238 codes made from them. Secrets stay in
 * private fields: never shown, logged or serialized.
 */
export class TotpKeys {
  // Private fields: util.inspect, JSON.stringify and error reports never show them.
  readonly #keys = new Map<string, Key>();

  /** Throws a TypeError naming the problems (never a secret) when a secret is unusable. */
  constructor(secrets: TotpSecrets = {}) {
    const problems = totpSecretProblems(secrets, (name) => `TOTP secret "${name}"`);
    if (problems.length > 0) throw new TypeError(problems.join('; '));
    for (const [name, given] of Object.entries(secrets)) {
      const spec = typeof given === 'string' ? { secret: given } : given;
      this.#keys.set(name.toLowerCase(), {
        secret: Secret.fromBase32(spec.secret.replace(/[\s=]/g, '').toUpperCase()),
        digits: spec.digits ?? 6,
        periodMs: (spec.period ?? 30) * 1_000,
        algorithm: spec.algorithm ?? 'SHA1',
      });
    }
  }

  /** Whether this worker holds a secret of that name (case-insensitive). */
  has(name: string): boolean {
    return this.#keys.has(name.toLowerCase());
  }

  get names(): string[] {
    return [...this.#keys.keys()];
  }

  /** The time step at `nowMs`, and how long it has left. */
  stepAt(name: string, nowMs: number): { step: number; remainingMs: number; periodMs: number } {
    const { periodMs } = this.#key(name);
    const step = Math.floor(nowMs / periodMs);
    return { step, remainingMs: (step + 1) * periodMs - nowMs, periodMs };
  }

  /**
   * The step whose code may be typed at `nowMs`: one later than `afterStep` (never a code twice)
   * with at least totpMinRemainingMs left. Otherwise how long until the next step begins.
   */
  dueStep(name: string, afterStep: number, nowMs: number): { step: number } | { waitMs: number } {
    const { step, remainingMs, periodMs } = this.stepAt(name, nowMs);
    if (step > afterStep && remainingMs >= totpMinRemainingMs(periodMs)) return { step };
    return { waitMs: remainingMs + 5 };
  }

  /** The code of a time step (RFC 6238: HOTP of the step counter). */
  code(name: string, step: number): string {
    const { secret, digits, algorithm } = this.#key(name);
    return HOTP.generate({ secret, digits, algorithm, counter: step });
  }

  /**
   * The codes to mask in what BrowserAI shows for a task: those of the steps the worker typed, and
   * those around now (the one being typed, one before, one after). Empty for an unknown name.
   */
  codesToMask(name: string, typedSteps: readonly number[], nowMs: number): string[] {
    if (!this.has(name)) return [];
    const { step } = this.stepAt(name, nowMs);
    const steps = new Set([...typedSteps, step - 1, step, step + 1]);
    return [...steps].map((s) => this.code(name, s));
  }

  #key(name: string): Key {
    const key = this.#keys.get(name.toLowerCase());
    if (!key) throw new RangeError(`No TOTP secret named ${name}`);
    return key;
  }
}
