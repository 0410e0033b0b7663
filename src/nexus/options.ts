// What the operator of a Nexus endpoint lets its callers do. A Nexus caller is another team, in
// another namespace, with access to the endpoint only: it is not trusted with what a client in the
// service's namespace may do. By default it gets none of the task options below; each one is
// opened by name here, on the service's worker (BrowserAIPlugin `nexusService: { ... }`).
// Types only: the handler (fence.ts) reads them.

/**
 * What callers of the `browserai` Nexus service may set in `runTask`'s task, beyond the task
 * itself. Everything here is off by default: a caller that sets an option not allowed is refused
 * (`NexusOptionNotAllowed`), nothing is started. Callers reach only the tasks they started through
 * the service, whatever these options say.
 */
export interface NexusServiceOptions {
  /**
   * TOTP secrets (by name, as the worker holds them) a caller may name in `task.totpSecretName`.
   * Default: none. Allowing one lets the caller's task type that secret's live codes, and the
   * caller writes the task's instructions: the agent it steers sees each code, so allow a secret
   * only to callers you would trust with the codes themselves.
   */
  totpSecretNames?: readonly string[];
  /**
   * Whether a caller may set `task.codeInstructionTemplate` (the instruction a code is typed with,
   * e.g. one that opens a URL with the code in it). Default: false, so codes are typed with the
   * worker's own wording.
   */
  codeInstructionTemplate?: boolean;
  /**
   * Whether a caller may ask for webhook events (`task.webhook`), which this worker signs and sends
   * to its own destination, the operator's receiver. Default: false.
   */
  webhooks?: boolean;
  /**
   * Prefixes a caller's `task.webhook.reference` must start with (`webhooks` must be on). Default:
   * none, so a caller sets no reference: the operator's receiver routes events on `reference`, and
   * a caller naming one of the operator's users would be routed as that user. A prefix of its own
   * (e.g. `nexus:team-a:`) keeps the callers' references apart from the operator's.
   */
  webhookReferencePrefixes?: readonly string[];
  /**
   * Prefixes of the workflow IDs a caller may name in `task.notifyWorkflowId` (each is signalled
   * `browserTaskAwaitingInput` in the service's namespace). Default: none: a caller may only set
   * it to `false`. A Nexus caller cannot receive that signal anyway (it reads `state`).
   */
  notifyWorkflowIdPrefixes?: readonly string[];
  /**
   * Task queues a caller may name in `task.activityOptions.taskQueue`, where the task's BrowserAI
   * activities (with the token) run. Default: none, so they run on the service's own queue.
   */
  activityTaskQueues?: readonly string[];
  /**
   * Whether a caller may set `task.activityOptions.priorityKey`, `fairnessKey` and `fairnessWeight`,
   * which order its activities against the operator's own on a shared queue. Default: false.
   * Retry pacing (`activityOptions.retry`) is always allowed: it is bounded and routes nothing.
   */
  activityPriority?: boolean;
}
