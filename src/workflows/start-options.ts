// What every start of `browserTask` sets, whoever starts it: the client, the Nexus service, a
// batch (as a child). Workflow-safe.
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { fairnessKeyOf, type BrowserTaskInput } from '../contract/input';

/**
 * What every start of `browserTask` sets, here and in the Nexus service: its input, the reuse
 * policy that keeps a task from running twice, and what the Temporal UI shows of it.
 */
export function browserTaskStartOptions(input: BrowserTaskInput) {
  return {
    // Even after the first run closed: a retried start must not run the task a second time.
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    args: [input] as [BrowserTaskInput],
    // The task's place in line is its workflow's Temporal priority too, as it is its activities'.
    priority: {
      ...(input.priority !== undefined ? { priorityKey: input.priority } : {}),
      fairnessKey: fairnessKeyOf({ project: input.project, fairnessKey: input.fairnessKey }),
      ...(input.fairnessWeight !== undefined ? { fairnessWeight: input.fairnessWeight } : {}),
    },
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
