// The emulator's public API, for tests, the dev starter and the benchmark.

export { BrowserAIEmulator, type EmulatorOptions, type RecordedRequest } from './server';
export type { Fault } from './faults';
export type { EmulatedTask, TaskStatus } from './tasks';
export type { Scenario } from './scenario';
export { parseScenario, FAIL_ERROR, SLOW_DURATION_MS, CODE_WAIT_MS } from './scenario';
