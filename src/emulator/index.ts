// The emulator's public API, for tests, the dev starter and the benchmark.

export { BrowserAIEmulator, type EmulatorOptions, type RecordedRequest } from './server';
export type { Fault, FaultAnswer } from './faults';
export type { CodeCheck, CodeSent, EmulatedTask, TaskStatus } from './tasks';
export type { EmulatorInbox } from './code-sender';
export type { EmulatorTotpSecret } from './totp-check';
export type { Scenario, ScenarioSource } from './scenario';
export type { BrowserConnection } from './browser-connection';
export type { EngineError } from './engine-errors';
export {
  parseScenario,
  FAIL_ERROR,
  SLOW_DURATION_MS,
  CODE_WAIT_MS,
  DEFAULT_AWAITING_LAG_MS,
  DEFAULT_AWAITING_IDLE_CLOSE_MS,
  MAX_LARGE_BYTES,
  NEXT_CODE_FORM_LINE,
} from './scenario';
export {
  DEFAULT_EMULATOR_MODE,
  EMULATOR_MODES,
  ENDED_TASK_ANSWERS,
  defaultEndedTaskAnswer,
  type EmulatorMode,
  type EndedTaskAnswer,
} from './mode';
export { emulatorOptionsFromEnv, MODE_ENV, ENDED_ANSWER_ENV, type EmulatorOptionsFromEnv } from './options-from-env';
export { objectIdTime } from './object-id';
export {
  RANDOM_FAULT_KINDS,
  DEFAULT_RANDOM_FAULT_SEED,
  type RandomFaultKind,
  type RandomFaultOptions,
} from './random-faults';
