// What every start of `browserTask` sets, whoever starts it: the client, the Nexus service, a
// batch (as a child). Workflow-safe.
import { WorkflowIdReusePolicy, type Priority } from '@temporalio/common';
import { FAIRNESS_KEY_BYTES, type BrowserTaskInput } from '../contract/input';
import { utf8Prefix } from '../contract/text';

/**
 * What every start of `browserTask` sets, here and in the Nexus service: its input, the reuse
 * policy that keeps a task from running twice, and what the Temporal UI shows of it.
 */
export function browserTaskStartOptions(input: BrowserTaskInput) {
  return {
    // Even after the first run closed: a retried start must not run the task a second time.
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    args: [input] as [BrowserTaskInput],
    priority: temporalPriorityOf(input),
    // Shown in the Temporal UI: what and where, never the instructions themselves.
    staticSummary: `BrowserAI ${input.type} task · project ${input.project} · ${input.geoLocation.country.toUpperCase()}`,
    staticDetails: [
      `**Type:** ${input.type}`,
      `**Project:** ${input.project}`,
      `**Location:** ${[input.geoLocation.country.toUpperCase(), input.geoLocation.city, input.geoLocation.zipcode].filter(Boolean).join(', ')}`,
      `**Instructions:** ${input.instructions.length}`,
      `**Awaitable session:** ${input.awaitable ? 'yes' : 'no'}`,
    ].join('\n'),
  };
}

/**
 * The task's place in line as its workflow's Temporal priority, which its activities inherit: the
 * fairness key defaults to the project, and a saved task's run (whose project is read later) has
 * only what its overrides give.
 */
export function temporalPriorityOf(
  input: Pick<BrowserTaskInput, 'priority' | 'fairnessKey' | 'fairnessWeight'> & { project?: string },
): Priority {
  const { priority, fairnessWeight } = input;
  const fairnessKey = input.fairnessKey ?? input.project;
  return {
    ...(priority !== undefined ? { priorityKey: priority } : {}),
    ...(fairnessKey !== undefined ? { fairnessKey: utf8Prefix(fairnessKey, FAIRNESS_KEY_BYTES) } : {}),
    ...(fairnessWeight !== undefined ? { fairnessWeight } : {}),
  };
}
