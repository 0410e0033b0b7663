/**
 * `browserai-temporal/codec`: optional AES-256-GCM payload encryption (with key rotation), the data
 * converter that also encrypts failure messages, and the codec server the Temporal UI decodes through.
 *
 * @module browserai-temporal/codec
 */
export {
  EncryptionCodec,
  ENCRYPTED_ENCODING,
  payloadCodecFromEnv,
  dataConverterWithEncryption,
  encryptedDataConverterFromEnv,
  encryptedFailureConverterPath,
  type EncryptionCodecOptions,
} from './encryption-codec';
export {
  startCodecServer,
  codecServerOptionsFromEnv,
  isLoopbackHost,
  DEFAULT_MAX_BODY_BYTES,
  type CodecServerOptions,
} from './codec-server';
