// Our workflows against the MCP client's loop on the same task set: requests (in total and per
// task) and how long after the task's end each side noticed it. Both sides' tasks got the same
// durations from the emulator's duration book and ran at the same time.
import type { McpRecord } from './mcp-client';
import { between, stats, sum, type Stats } from './statistics';
import { completedOk, type TaskRecord } from './task';

export interface Comparison {
  tasks: number;
  oursCompleted: number;
  mcpEnded: number;
  oursRequests: number;
  mcpRequests: number;
  /** ours / MCP, over the tasks both sides finished. */
  requestRatio?: number;
  oursRequestsPerTask?: Stats;
  mcpRequestsPerTask?: Stats;
  /** Emulator's end of the task → workflow closeTime. */
  endToClosed?: Stats;
  /** Emulator's end of the task → MCP client got the answer showing it. */
  endToMcpSeen?: Stats;
  mcpStaleAwaitingReturns: number;
}

export function compare(ours: TaskRecord[], mcp: McpRecord[]): Comparison {
  const done = ours.filter(completedOk);
  const mcpDone = mcp.filter((r) => !r.error && r.endSeenAt !== undefined && r.finalStatus !== undefined);
  const oursRequests = sum(done.map((r) => r.facts!.requests));
  const mcpRequests = sum(mcpDone.map((r) => r.requests));
  // Ratio over equal task counts: a side that lost tasks must not look cheaper for it.
  const perTaskOurs = done.length ? oursRequests / done.length : undefined;
  const perTaskMcp = mcpDone.length ? mcpRequests / mcpDone.length : undefined;
  return {
    tasks: ours.length,
    oursCompleted: done.length,
    mcpEnded: mcpDone.length,
    oursRequests,
    mcpRequests,
    requestRatio: perTaskOurs !== undefined && perTaskMcp ? perTaskOurs / perTaskMcp : undefined,
    oursRequestsPerTask: stats(done.map((r) => r.facts!.requests)),
    mcpRequestsPerTask: stats(mcpDone.map((r) => r.requests)),
    endToClosed: between(
      done,
      (r) => r.facts!.endedAt,
      (r) => r.facts!.closeTime,
    ),
    endToMcpSeen: between(
      mcpDone,
      (r) => r.endedAt,
      (r) => r.endSeenAt,
    ),
    mcpStaleAwaitingReturns: mcp.filter((r) => r.returnedOnStaleAwaiting).length,
  };
}
