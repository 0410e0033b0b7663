export * from './client';
export * from './errors';
export type * from './types';
