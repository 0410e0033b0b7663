// Optional AES-256-GCM encryption of every payload (Temporal's payload codec), so inputs,
// instructions and one-time codes are stored in workflow history as ciphertext. Activities and
// workflows see plaintext; the Temporal UI decodes through the codec server (codec-server.ts).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID_METADATA = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class EncryptionCodec implements PayloadCodec {
  readonly #key: Buffer;

  constructor(
    key: Buffer,
    readonly keyId: string,
  ) {
    if (key.length !== 32) throw new TypeError('The payload encryption key must be 32 bytes (base64 of 32 random bytes).');
    this.#key = key;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: {
          [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING),
          [KEY_ID_METADATA]: Buffer.from(this.keyId),
        },
        data: sealed,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (Buffer.from(payload.metadata?.[METADATA_ENCODING_KEY] ?? []).toString() !== ENCRYPTED_ENCODING) return payload;
      const keyId = Buffer.from(payload.metadata?.[KEY_ID_METADATA] ?? []).toString();
      if (keyId !== this.keyId) {
        throw new Error(`Payload encrypted with key "${keyId}", but this process has key "${this.keyId}": set TEMPORAL_PAYLOAD_KEY(_ID) to that key.`);
      }
      const sealed = Buffer.from(payload.data ?? []);
      const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.subarray(0, IV_BYTES));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
      return temporal.api.common.v1.Payload.decode(plain);
    });
  }
}

/** The codec from TEMPORAL_PAYLOAD_KEY (base64 of 32 bytes) and TEMPORAL_PAYLOAD_KEY_ID, or undefined when unset. */
export function payloadCodecFromEnv(env: NodeJS.ProcessEnv = process.env): EncryptionCodec | undefined {
  const raw = env.TEMPORAL_PAYLOAD_KEY?.trim();
  if (!raw) return undefined;
  const key = Buffer.from(raw, 'base64');
  if (key.length !== 32) {
    throw new TypeError('TEMPORAL_PAYLOAD_KEY must be base64 of 32 bytes: generate one with `openssl rand -base64 32`.');
  }
  return new EncryptionCodec(key, env.TEMPORAL_PAYLOAD_KEY_ID?.trim() || 'default');
}
