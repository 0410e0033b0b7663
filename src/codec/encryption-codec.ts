// Optional AES-256-GCM encryption of every payload (Temporal's payload codec), so inputs,
// instructions and one-time codes are stored in workflow history as ciphertext. Activities and
// workflows see plaintext; the Temporal UI decodes through the codec server (codec-server.ts).
//
// Key rotation: one key encrypts (TEMPORAL_PAYLOAD_KEY, named by TEMPORAL_PAYLOAD_KEY_ID), and
// older keys still decrypt (TEMPORAL_PAYLOAD_DECRYPT_KEYS="old-id:base64,..."). Each payload names
// the key that sealed it, so a process picks the right key and says which one it lacks.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { METADATA_ENCODING_KEY, type DataConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

/** The `encoding` metadata of an encrypted payload, as in Temporal's encryption samples. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID_METADATA = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;
// Key ids go into TEMPORAL_PAYLOAD_DECRYPT_KEYS as `id:key,id:key`: no commas, colons or spaces.
const KEY_ID_PATTERN = /^[^\s,:]{1,128}$/;
const GENERATE = 'generate one with `openssl rand -base64 32`';

/** Options of `EncryptionCodec`: earlier keys that still decrypt, by key id (key rotation). */
export interface EncryptionCodecOptions {
  /**
   * Keys that only decrypt, by key id: the keys of earlier rotations, so payloads they sealed
   * (histories of running and closed workflows) stay readable. Never used to encrypt.
   */
  decryptKeys?: Record<string, Buffer> | Map<string, Buffer>;
}

/**
 * AES-256-GCM payload codec: encrypts every payload with one key, named by its id in the payload's metadata, and
 * decrypts with that key or an earlier one. The format of Temporal's encryption samples, so Go and Python codecs read
 * it too.
 */
export class EncryptionCodec implements PayloadCodec {
  readonly #key: Buffer;
  /** Every key that decrypts, by id: the encrypting key and the decrypt-only ones. */
  readonly #keys = new Map<string, Buffer>();

  constructor(
    key: Buffer,
    readonly keyId: string,
    options: EncryptionCodecOptions = {},
  ) {
    if (key.length !== 32)
      throw new TypeError(`The payload encryption key must be 32 bytes (base64 of 32 random bytes): ${GENERATE}.`);
    checkKeyId(keyId, 'The encryption key id');
    this.#key = key;
    this.#keys.set(keyId, key);
    const extra =
      options.decryptKeys instanceof Map ? [...options.decryptKeys] : Object.entries(options.decryptKeys ?? {});
    for (const [id, k] of extra) {
      checkKeyId(id, 'A decryption key id');
      if (k.length !== 32)
        throw new TypeError(`The decryption key "${id}" must be 32 bytes (base64 of 32 random bytes).`);
      const known = this.#keys.get(id);
      if (known && !known.equals(k))
        throw new TypeError(`Key id "${id}" is given two different keys: each key id must name one key.`);
      this.#keys.set(id, k);
    }
  }

  /** The ids of every key this codec decrypts with, the encrypting one first. */
  get decryptKeyIds(): string[] {
    return [...this.#keys.keys()];
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
      if (Buffer.from(payload.metadata?.[METADATA_ENCODING_KEY] ?? []).toString() !== ENCRYPTED_ENCODING)
        return payload;
      const keyId = Buffer.from(payload.metadata?.[KEY_ID_METADATA] ?? []).toString();
      const key = this.#keys.get(keyId);
      if (!key) {
        throw new Error(
          `Payload encrypted with key id "${keyId}", which this process does not have (it decrypts with ${this.decryptKeyIds.map((id) => `"${id}"`).join(', ')}): ` +
            `add that key to TEMPORAL_PAYLOAD_DECRYPT_KEYS ("${keyId}:<base64 key>", comma-separated), ` +
            `or set TEMPORAL_PAYLOAD_KEY to it with TEMPORAL_PAYLOAD_KEY_ID=${keyId}.`,
        );
      }
      const sealed = Buffer.from(payload.data ?? []);
      if (sealed.length < IV_BYTES + TAG_BYTES) throw new Error(`Encrypted payload (key id "${keyId}") is truncated.`);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
        decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
        const plain = Buffer.concat([
          decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
          decipher.final(),
        ]);
        return temporal.api.common.v1.Payload.decode(plain);
      } catch {
        throw new Error(
          `Payload encrypted with key id "${keyId}" does not decrypt with this process's key of that id: ` +
            'the key was changed without changing its id, or the payload was altered. Give every new key a new TEMPORAL_PAYLOAD_KEY_ID.',
        );
      }
    });
  }
}

function checkKeyId(id: string, what: string): void {
  if (!KEY_ID_PATTERN.test(id))
    throw new TypeError(`${what} "${id}" must be 1 to 128 characters without spaces, commas or colons.`);
}

function parseKey(raw: string, name: string): Buffer {
  const key = Buffer.from(raw.trim(), 'base64');
  if (key.length !== 32) throw new TypeError(`${name} must be base64 of 32 bytes: ${GENERATE}.`);
  return key;
}

/**
 * The codec from the environment, or undefined when TEMPORAL_PAYLOAD_KEY is unset:
 * - TEMPORAL_PAYLOAD_KEY: base64 of 32 bytes, the key that encrypts (and decrypts);
 * - TEMPORAL_PAYLOAD_KEY_ID: its id, written into every payload (default `default`);
 * - TEMPORAL_PAYLOAD_DECRYPT_KEYS: earlier keys that still decrypt, `id1:base64,id2:base64`.
 */
export function payloadCodecFromEnv(env: NodeJS.ProcessEnv = process.env): EncryptionCodec | undefined {
  const raw = env.TEMPORAL_PAYLOAD_KEY?.trim();
  const decryptRaw = env.TEMPORAL_PAYLOAD_DECRYPT_KEYS?.trim();
  if (!raw) {
    if (decryptRaw) {
      throw new TypeError(
        'TEMPORAL_PAYLOAD_DECRYPT_KEYS is set but TEMPORAL_PAYLOAD_KEY is not: set TEMPORAL_PAYLOAD_KEY (and TEMPORAL_PAYLOAD_KEY_ID) to the key that encrypts, ' +
          'or unset TEMPORAL_PAYLOAD_DECRYPT_KEYS. Without TEMPORAL_PAYLOAD_KEY nothing is encrypted.',
      );
    }
    return undefined;
  }
  const key = parseKey(raw, 'TEMPORAL_PAYLOAD_KEY');
  const keyId = env.TEMPORAL_PAYLOAD_KEY_ID?.trim() || 'default';
  if (!KEY_ID_PATTERN.test(keyId))
    throw new TypeError(
      `TEMPORAL_PAYLOAD_KEY_ID "${keyId}" must be 1 to 128 characters without spaces, commas or colons.`,
    );
  const decryptKeys = new Map<string, Buffer>();
  for (const entry of (decryptRaw ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const colon = entry.indexOf(':');
    const id = colon > 0 ? entry.slice(0, colon).trim() : '';
    if (!id || !KEY_ID_PATTERN.test(id)) {
      throw new TypeError(
        'TEMPORAL_PAYLOAD_DECRYPT_KEYS must be comma-separated `key-id:base64-key` pairs (ids without spaces, commas or colons), e.g. `2024-01:AbC...=,2024-06:XyZ...=`.',
      );
    }
    const decryptKey = parseKey(entry.slice(colon + 1), `The key of "${id}" in TEMPORAL_PAYLOAD_DECRYPT_KEYS`);
    const known = id === keyId ? key : decryptKeys.get(id);
    if (known && !known.equals(decryptKey)) {
      throw new TypeError(
        `Key id "${id}" has two different keys in TEMPORAL_PAYLOAD_KEY(_ID) / TEMPORAL_PAYLOAD_DECRYPT_KEYS: give each key its own id.`,
      );
    }
    decryptKeys.set(id, decryptKey);
  }
  return new EncryptionCodec(key, keyId, { decryptKeys });
}

/**
 * The failure converter module that also encrypts failures: `DefaultFailureConverter` with
 * `encodeCommonAttributes`, so a failure's message and stack trace travel as a payload (which the
 * codec encrypts) and history shows only "Encoded failure". It must be a path, not an instance:
 * the worker bundles it into the workflow sandbox (a prebuilt bundle must be built with it:
 * `bundleWorkflowCode({ workflowsPath, failureConverterPath })`).
 */
export function encryptedFailureConverterPath(): string {
  const path = join(__dirname, 'failure-converter.js');
  if (!existsSync(path)) {
    throw new Error(
      `${path} is missing: it should export \`failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true })\` ` +
        '(src/codec/failure-converter.ts, workflow-safe: no Node imports).',
    );
  }
  return path;
}

/**
 * The data converter for encryption: the codec on every payload, and failure messages and stack
 * traces encoded as payloads too (so encrypted). Give the same to workers and clients.
 */
export function dataConverterWithEncryption(codec: PayloadCodec): DataConverter {
  return { payloadCodecs: [codec], failureConverterPath: encryptedFailureConverterPath() };
}

/** {@link dataConverterWithEncryption} with the codec from {@link payloadCodecFromEnv}; undefined when TEMPORAL_PAYLOAD_KEY is unset. */
export function encryptedDataConverterFromEnv(env: NodeJS.ProcessEnv = process.env): DataConverter | undefined {
  const codec = payloadCodecFromEnv(env);
  return codec ? dataConverterWithEncryption(codec) : undefined;
}
