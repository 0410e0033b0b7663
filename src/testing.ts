/**
 * `browserai-temporal/testing`: the BrowserAI emulator, for a team's own tests. It answers over
 * HTTP as the real service was seen to (or as its interface text documents), and injects faults
 * (5xx, 429 with Retry-After, hangs, delays, lost answers) in-process or over HTTP. The emulator's
 * options and what its methods return; the knobs of this repository's benchmarks and chaos run
 * stay in src/emulator (docs/design/public-surface.md).
 *
 * @module browserai-temporal/testing
 */
export { BrowserAIEmulator, type EmulatorOptions, type RecordedRequest } from './emulator/server';
export { emulatorOptionsFromEnv, type EmulatorOptionsFromEnv } from './emulator/options-from-env';
export type { EmulatorMode, EndedTaskAnswer } from './emulator/mode';
export type { Fault, FaultAnswer } from './emulator/faults';
export type { RandomFaultKind, RandomFaultOptions } from './emulator/random-faults';
export type { CodeCheck, CodeSent, EmulatedTask, TaskStatus } from './emulator/tasks';
export type { EmulatorInbox } from './emulator/code-sender';
export type { EmulatorTotpSecret } from './emulator/totp-check';
export type { BrowserConnection } from './emulator/browser-connection';
export type { EngineError } from './emulator/engine-errors';
export type { Scenario } from './emulator/scenario';
