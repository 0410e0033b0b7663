// `browserai-temporal/codec`: optional AES-256-GCM payload encryption, and the codec server the
// Temporal UI decodes through.
export { EncryptionCodec, ENCRYPTED_ENCODING, payloadCodecFromEnv } from './encryption-codec';
export { startCodecServer } from './codec-server';
