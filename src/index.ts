// The package's public API, for services that start and steer BrowserAI tasks and for
// deployments that build their own worker.
export { BrowserTasks, InvalidInputError, fetchFullResults, type LiveState, type StartOptions } from './client/tasks';
export { SavedTasks, ScheduleAfterCreateError, CATCHUP_WINDOW, type ScheduleSpecInput, type ScheduleSummary, type OverlapPolicy } from './client/saved-tasks';
export type { SavedTaskDefinition, SavedTaskOverrides, RunSavedTaskInput } from './workflows/saved-task-input';
export { cronProblems, timezoneProblems, scheduleIdFor } from './schedules/cron';
export * from './workflows/messages';
export * from './workflows/search-attributes';
export { DEFAULTS, type BrowserTaskInput, type BrowserTaskResult, type PollingOptions } from './workflows/input';
export { FailureType, type FailureTypeName } from './errors';
export { BrowserAIClient, BrowserAIError, type BrowserAIClientOptions } from './browserai';
export type * from './browserai/types';
export { createActivities, type BrowserAIActivities } from './activities';
export { createWorker, dataConverterFromEnv, type BrowserAIWorkerOptions } from './worker';
export { EncryptionCodec, payloadCodecFromEnv } from './codec/encryption-codec';
export { startCodecServer } from './codec/codec-server';
