// BrowserAI's identifiers are MongoDB ObjectIds (docs/browserai.md): 24 hex digits, the
// first 4 bytes the creation time in whole seconds. The emulator makes them the way MongoDB
// does: then 5 random bytes chosen once per process and a 3-byte counter that starts at a random
// value, so two IDs made in the same second still differ, without relying on luck.

import { randomBytes } from 'node:crypto';

const PROCESS_PART = randomBytes(5);
let counter = randomBytes(3).readUIntBE(0, 3);

/** A new ObjectId (24 lower-case hex digits) whose embedded time is `atMs`, floored to the second. */
export function objectId(atMs: number): string {
  const bytes = Buffer.alloc(12);
  bytes.writeUInt32BE(Math.floor(atMs / 1000) >>> 0, 0);
  PROCESS_PART.copy(bytes, 4);
  counter = (counter + 1) % 0x1000000;
  bytes.writeUIntBE(counter, 9, 3);
  return bytes.toString('hex');
}

/** The creation time (epoch milliseconds, a whole second) embedded in an ObjectId; undefined for anything else. */
export function objectIdTime(id: string): number | undefined {
  return /^[0-9a-f]{24}$/i.test(id) ? Number.parseInt(id.slice(0, 8), 16) * 1000 : undefined;
}
