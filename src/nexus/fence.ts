// The options of a task that a Nexus caller may set only when the endpoint's operator allows them
// (NexusServiceOptions): each one reaches past the caller's own task, into the operator's secrets,
// receiver, workflows or task queues. Checked after the task's own validation, before anything is
// started; every refusal names the option and the handler option that would allow it.
import type { BrowserTaskInput } from '../contract/input';
import type { NexusServiceOptions } from './options';

/** What in `task` the operator has not allowed Nexus callers; empty when nothing. */
export function notAllowedProblems(task: BrowserTaskInput, allowed: NexusServiceOptions): string[] {
  const problems: string[] = [];
  const refuse = (option: string, allowWith: string) =>
    problems.push(
      `task.${option} is not allowed through Nexus (the service's operator can allow it with ${allowWith})`,
    );

  if (task.totpSecretName !== undefined && !(allowed.totpSecretNames ?? []).includes(task.totpSecretName))
    refuse(`totpSecretName "${task.totpSecretName}"`, 'the Nexus service option totpSecretNames');
  if (task.codeInstructionTemplate !== undefined && allowed.codeInstructionTemplate !== true)
    refuse('codeInstructionTemplate', 'the Nexus service option codeInstructionTemplate: true');
  if (task.webhook !== undefined && allowed.webhooks !== true)
    refuse('webhook', 'the Nexus service option webhooks: true');
  const { reference } = task.webhook ?? {};
  if (reference !== undefined && !startsWithOneOf(reference, allowed.webhookReferencePrefixes))
    refuse(`webhook.reference "${reference}"`, 'the Nexus service option webhookReferencePrefixes');
  const notify = task.notifyWorkflowId;
  if (typeof notify === 'string' && !startsWithOneOf(notify, allowed.notifyWorkflowIdPrefixes))
    refuse(`notifyWorkflowId "${notify}"`, 'the Nexus service option notifyWorkflowIdPrefixes');
  const activity = task.activityOptions ?? {};
  if (activity.taskQueue !== undefined && !(allowed.activityTaskQueues ?? []).includes(activity.taskQueue))
    refuse(`activityOptions.taskQueue "${activity.taskQueue}"`, 'the Nexus service option activityTaskQueues');
  for (const key of ['priorityKey', 'fairnessKey', 'fairnessWeight'] as const)
    if (activity[key] !== undefined && allowed.activityPriority !== true)
      refuse(`activityOptions.${key}`, 'the Nexus service option activityPriority: true');
  return problems;
}

function startsWithOneOf(value: string, prefixes: readonly string[] | undefined): boolean {
  return (prefixes ?? []).some((prefix) => value.startsWith(prefix));
}
