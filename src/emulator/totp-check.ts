// The emulator's check of a TOTP code, with its own copy of the secret: only the code of the time
// step in which the code arrives (no window), so a test proves the right code came at the right time.
import { Secret, TOTP } from 'otpauth';

export function totpCodeMatches(base32Secret: string, code: string, atMs: number): boolean {
  const secret = Secret.fromBase32(base32Secret.replace(/[\s=]/g, '').toUpperCase());
  return TOTP.validate({ token: code, secret, timestamp: atMs, window: 0 }) === 0;
}
