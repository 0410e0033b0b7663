// The emulator's check of a TOTP code, with its own copy of the secret: only the code of the time
// step in which the code arrives (no window), so a test proves the right code came at the right time.
import { Secret, TOTP } from 'otpauth';

/** An emulator TOTP secret: base32 alone (30-s steps), or with its period in seconds. */
export type EmulatorTotpSecret = string | { secret: string; period?: number };

export function totpCodeMatches(given: EmulatorTotpSecret, code: string, atMs: number): boolean {
  const { secret: base32, period = 30 } = typeof given === 'string' ? { secret: given } : given;
  const secret = Secret.fromBase32(base32.replace(/[\s=]/g, '').toUpperCase());
  return TOTP.validate({ token: code, secret, period, timestamp: atMs, window: 0 }) === 0;
}
