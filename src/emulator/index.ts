// The emulator's public API, for tests, the dev starter and the benchmark.

export { BrowserAIEmulator, type EmulatorOptions, type RecordedRequest } from './server';
export type { Fault, FaultAnswer } from './faults';
export type { EmulatedTask, TaskStatus } from './tasks';
export type { Scenario } from './scenario';
export { parseScenario, FAIL_ERROR, SLOW_DURATION_MS, CODE_WAIT_MS, DEFAULT_AWAITING_LAG_MS, MAX_LARGE_BYTES } from './scenario';
export { RANDOM_FAULT_KINDS, DEFAULT_RANDOM_FAULT_SEED, type RandomFaultKind, type RandomFaultOptions } from './random-faults';
