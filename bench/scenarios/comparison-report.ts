// Report pieces shared by the two scenarios that run beside the MCP client: what is counted on
// each side, the per-task distributions of both, and the checks that the comparison is fair.
import type { Comparison } from '../comparison';
import type { RequestSummary } from '../collect';
import { fmt, fmtMs, fmtRatio } from '../format';
import { MCP_POLL_MS, type McpRecord } from '../mcp-client';
import { PROJECT } from '../plan';
import { distributionRow } from '../report/markdown';
import { stats } from '../statistics';
import { completedOk, type TaskRecord } from '../task';
import { MCP_PROJECT } from './twins';

export const MCP_COUNTING =
  `**The MCP client's loop** (brightdata/browserai-mcp \`poll_task_result\`) runs for real against the same emulator, on a twin of every task ` +
  `(same text, same duration, same start moment, its own project): \`POST /tasks\`, then \`GET /tasks/{id}\` at once and ${MCP_POLL_MS / 1000} s after every answer ` +
  "until the task ends; a code task's code is appended when the loop returns `awaiting`, then 1 s of waiting and the same loop. " +
  'It reads its result from the last `GET /tasks` answer, so it never calls `GET /results`. **Counted on both sides:** every request of the task, ' +
  "create included: ours are the create plus every request naming the execution ID (polls, `GET /results`, appends, stops); the MCP side's are its " +
  'create, polls and append. The ratio is ours / MCP per task, over the tasks each side finished.';

export function comparisonDistributions(c: Comparison, ours: TaskRecord[], mcp: McpRecord[]): string[] {
  const done = ours.filter(completedOk);
  const perMinute = (requests: number | undefined, minutes: number | undefined) =>
    requests !== undefined && minutes ? requests / minutes : undefined;
  const mcpMinutes = (r: McpRecord) =>
    r.createdAt !== undefined && r.endedAt !== undefined ? (r.endedAt - r.createdAt) / 60_000 : undefined;
  return [
    distributionRow('API requests per task: ours', c.oursRequestsPerTask),
    distributionRow('API requests per task: MCP client', c.mcpRequestsPerTask),
    distributionRow(
      'API requests per task-minute: ours',
      stats(done.map((r) => perMinute(r.facts!.requests, r.facts!.taskMinutes))),
      (v) => fmt(v, 2),
    ),
    distributionRow(
      'API requests per task-minute: MCP client',
      stats(mcp.map((r) => perMinute(r.requests, mcpMinutes(r)))),
      (v) => fmt(v, 2),
    ),
    distributionRow('Task end → workflow closed (ms)', c.endToClosed, (v) => fmt(v, 0)),
    distributionRow('Task end → MCP client has the answer (ms)', c.endToMcpSeen, (v) => fmt(v, 0)),
  ];
}

/** One line: `0.42× (ours 123 requests for 20 tasks, MCP 290 for 20)`. */
export function ratioText(c: Comparison): string {
  return `${fmtRatio(c.requestRatio)} (ours ${c.oursRequests} requests for ${c.oursCompleted} tasks, MCP ${c.mcpRequests} for ${c.mcpEnded})`;
}

export function closeText(c: Comparison): string {
  return c.endToClosed
    ? `p50 ${fmtMs(c.endToClosed.p50)} · p99 ${fmtMs(c.endToClosed.p99)} (MCP: p50 ${fmtMs(c.endToMcpSeen?.p50)} · p99 ${fmtMs(c.endToMcpSeen?.p99)})`
    : 'n/a';
}

/** That both sides ran the tasks they should have, once each. */
export function fairnessChecks(
  summary: RequestSummary,
  ours: TaskRecord[],
  mcp: McpRecord[],
  bookMisses: number,
): string[] {
  const started = ours.filter((r) => r.firstRunId).length;
  const codeTasks = ours.filter((r) => r.plan.code);
  const typedOnce = codeTasks.filter(
    (r) => r.facts?.codesReceived?.length === 1 && r.facts.codesReceived[0] === r.plan.code!.value,
  ).length;
  const mcpErrors = mcp.filter((r) => r.error);
  return [
    `- Creates: ${summary.createsByProject[PROJECT] ?? 0} \`POST /tasks\` for ${started} workflows, ${summary.createsByProject[MCP_PROJECT] ?? 0} for ${mcp.length} MCP twins; ` +
      `non-2xx answers: ${summary.non2xx}; stop commands: ${summary.stops}; creates without a planned duration: ${bookMisses}.`,
    ...(codeTasks.length ? [`- One-time codes typed exactly once (ours): ${typedOnce} / ${codeTasks.length}.`] : []),
    `- MCP twins that failed: ${mcpErrors.length}${mcpErrors[0] ? ` (first: ${mcpErrors[0].error})` : ''}; that returned on a stale \`awaiting\` after their code: ${mcp.filter((r) => r.returnedOnStaleAwaiting).length}.`,
    ...ours
      .filter((r) => !completedOk(r))
      .slice(0, 5)
      .map(
        (r) =>
          `- Not completed: \`${r.plan.workflowId}\`: ${r.startError ?? r.facts?.failure ?? r.facts?.status ?? 'not closed'}`,
      ),
  ];
}
