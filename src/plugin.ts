/**
 * `browserai-temporal/plugin`: what a team's own worker needs to run BrowserAI tasks.
 * BrowserAIPlugin is one `plugins: [...]` entry for any Worker (and for a Client, with a payload
 * codec); createWorker is that plugin on `Worker.create` with a task fleet's defaults.
 *
 * @module browserai-temporal/plugin
 */
export { BrowserAIPlugin, type BrowserAIPluginOptions } from './browserai-plugin';
export { createWorker, type BrowserAIWorkerOptions } from './create-worker';
// For a worker that bundles workflows of its own that call ours: preload ours as the plugin does.
export { browserAIPreloadModules } from './workflow-bundle';
export type { FleetLimitOptions } from './activities/fleet';
export type { NexusServiceOptions } from './nexus/options';
export type { CallerAllowances } from './contract/callers';
