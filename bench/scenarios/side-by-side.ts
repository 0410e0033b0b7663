// Our workflows and the MCP client's twins, started at the same moments against the same
// emulator, until both sides are done; then our side's facts are collected.
import { runMcpTasks, type McpRecord, type McpTask } from '../mcp-client';
import { collectFacts } from '../collect';
import { runTasks, type RunOutcome, type RunTarget } from '../run';
import type { PlannedTask, TaskRecord } from '../task';

export interface SideBySide {
  records: TaskRecord[];
  mcp: McpRecord[];
  outcome: RunOutcome;
}

export async function runSideBySide(
  target: RunTarget,
  planned: { ours: PlannedTask[]; mcp: McpTask[] },
  options: { label: string; deadlineAt: number },
): Promise<SideBySide> {
  const records = planned.ours.map((plan): TaskRecord => ({ plan }));
  const firstStartAt = Date.now();
  const [outcome, mcp] = await Promise.all([
    runTasks(records, target, { batch: 50, deadlineAt: options.deadlineAt, label: options.label, firstStartAt }),
    runMcpTasks(planned.mcp, target.emulator, firstStartAt, options.deadlineAt),
  ]);
  await collectFacts(target.client, records, target.emulator, [...target.emulator.requests]);
  return { records, mcp, outcome };
}
