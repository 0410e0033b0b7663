export * from './client';
export * from './errors';
export { MASK, redactCodes, redactCodesDeep, redactSecrets, redactSecretsDeep } from './redact';
export type * from '../contract/browserai-types';
