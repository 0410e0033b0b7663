/**
 * `browserai-temporal/nexus`: the `browserai` Nexus service contract, for a caller's workflow
 * (`createNexusServiceClient({ service: browserAIService, endpoint })`). Workflow-safe: the
 * handler that implements it is registered by BrowserAIPlugin (`nexusService: true`) and is not
 * exported here, so a caller's workflow bundle never pulls in worker or client code.
 *
 * @module browserai-temporal/nexus
 */
export * from './service';
export type { BrowserTaskInput, BrowserTaskResult } from '../contract/input';
export type { BrowserTaskState } from '../contract/messages';
export { FailureType, type FailureTypeName } from '../contract/errors';
