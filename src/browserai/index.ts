export * from './client';
export * from './errors';
export { MASK, redactSecrets, redactSecretsDeep } from './redact';
export type * from './types';
