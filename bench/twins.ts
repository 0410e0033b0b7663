// Our workflows beside the MCP client's loop on twins of the same tasks (same text, duration, start
// moment and code), compared: requests, and how long after each task's end each side noticed it.
import { collectFacts, summarizeRequests } from './collect';
import { fmt, fmtMs, fmtRatio, mb } from './format';
import { MCP_POLL_MS, McpClient } from './mcp-client';
import { PROJECT, taskInput, type TaskShape } from './plan';
import { closeSteps, missReason } from './report/latency-steps';
import { bounded, distributions, row, type TargetRow } from './report/markdown';
import { runTasks, type RunOutcome, type RunTarget } from './run';
import type { BenchStack } from './stack';
import { between, stats, sum, type Stats } from './statistics';
import { at, completedOk, count, type PlannedTask, type TaskRecord } from './task';

/** The MCP client's tasks run in their own project, so the duration book keeps the two sides apart. */
const MCP_PROJECT = 'bench-mcp';

/** A planned task before its input is built: the shape each side's input is built from. */
export type TwinSpec = Pick<PlannedTask, 'workflowId' | 'group' | 'startAtMs' | 'code'> & { shape: TaskShape };

/** Our side of a spec alone (no twin: the book then holds no duration for an MCP task that never comes). */
export function plannedTask(stack: BenchStack, { shape, ...spec }: TwinSpec): PlannedTask {
  return { ...spec, input: taskInput(stack, shape), durationMs: shape.durationMs };
}

export function plannedTwins(stack: BenchStack, count: number, specOf: (i: number) => TwinSpec) {
  const specs = Array.from({ length: count }, (_, i) => specOf(i));
  const twin = (spec: TwinSpec) => plannedTask(stack, { ...spec, shape: { ...spec.shape, project: MCP_PROJECT } });
  return { ours: specs.map((spec) => plannedTask(stack, spec)), mcp: specs.map(twin) };
}

export type SideBySide = Awaited<ReturnType<typeof runSideBySide>>;

/** Both sides started at the same moments by the same loop until both are done; then our side's facts. */
export async function runSideBySide(
  target: RunTarget,
  planned: ReturnType<typeof plannedTwins>,
  options: { label: string; deadlineAt: number },
) {
  const [records, mcp] = [planned.ours, planned.mcp].map((plans) => plans.map((plan): TaskRecord => ({ plan })));
  const [firstStartAt, client] = [Date.now(), new McpClient(target.emulator, options.deadlineAt)];
  const [outcome] = await Promise.all([
    runTasks(records, target, { ...options, firstStartAt }),
    runTasks(mcp, { ...target, mcp: client }, { ...options, label: `${options.label} MCP`, firstStartAt }),
  ]);
  await Promise.all(client.loops);
  await collectFacts(target.client, records, target.emulator);
  return { records, mcp, outcome };
}

/** Requests per task of both sides and how long after each task's end each side noticed it. */
type Comparison = ReturnType<typeof compare>;

export function compare(side: SideBySide) {
  const done = side.records.filter(completedOk);
  // A twin ended when its loop returned an answer, not an error.
  const mcpDone = side.mcp.filter((r) => !r.startError && !r.facts?.failure && r.facts?.status !== undefined);
  const [oursRequests, mcpRequests] = [sum(done.map(count.requests)), sum(mcpDone.map(count.requests))];
  // Ratio per task: a side that lost tasks must not look cheaper for it.
  const ratio = done.length && mcpRequests ? oursRequests / done.length / (mcpRequests / mcpDone.length) : undefined;
  // prettier-ignore
  return {
    tasks: side.records.length, oursCompleted: done.length, mcpEnded: mcpDone.length, oursRequests, mcpRequests, requestRatio: ratio,
    oursRequestsPerTask: stats(done.map(count.requests)), mcpRequestsPerTask: stats(mcpDone.map(count.requests)),
    // Task end (the emulator's) → workflow closed, and → the MCP client had the answer showing it.
    endToClosed: between(done, at.ended, at.closed), endToMcpSeen: between(mcpDone, at.ended, at.closed), side,
  };
}

export const MCP_COUNTING = `- **The MCP client's loop** (brightdata/browserai-mcp \`poll_task_result\`, a \`GET /tasks/{id}\` every ${MCP_POLL_MS / 1000} s) runs for real against the same emulator, on a twin of every task; requests are counted alike on both sides: [docs/benchmarks-method.md](docs/benchmarks-method.md#the-mcp-clients-loop).`;

/** Requests per task and per task-minute, and task end → noticed, of both sides. */
export function comparisonDistributions(c: Comparison): string[] {
  const done = c.side.records.filter(completedOk);
  return distributions([
    ['API requests per task: ours', c.oursRequestsPerTask],
    ['API requests per task: MCP client', c.mcpRequestsPerTask],
    ['API requests per task-minute: ours', stats(done.map(count.perMinute)), (v) => fmt(v, 2)],
    ['API requests per task-minute: MCP client', stats(c.side.mcp.map(count.perMinute)), (v) => fmt(v, 2)],
    ['Task end → workflow closed (ms)', c.endToClosed, (v) => fmt(v, 0)],
    ['Task end → MCP client has the answer (ms)', c.endToMcpSeen, (v) => fmt(v, 0)],
  ]);
}

/** One line: `0.42× (ours 123 requests for 20 tasks, MCP 290 for 20)`. */
const ratioText = (c: Comparison) =>
  `${fmtRatio(c.requestRatio)} (ours ${c.oursRequests} requests for ${c.oursCompleted} tasks, MCP ${c.mcpRequests} for ${c.mcpEnded})`;

const closeText = ({ endToClosed: ours, endToMcpSeen: mcp }: Comparison) =>
  ours
    ? `p50 ${fmtMs(ours.p50)} · p99 ${fmtMs(ours.p99)} · max ${fmtMs(ours.max)} (MCP: p50 ${fmtMs(mcp?.p50)} · p99 ${fmtMs(mcp?.p99)} · max ${fmtMs(mcp?.max)})`
    : 'n/a';

/** `label: API requests, ours / MCP client` judged against `≤ maxRatio`; a miss says where ours went. */
export function ratioRow(label: string, c: Comparison, maxRatio?: number): TargetRow {
  const met = maxRatio === undefined ? undefined : c.requestRatio !== undefined && c.requestRatio <= maxRatio;
  return row(
    `${label}API requests, ours / MCP client`,
    maxRatio ? `≤ ${fmtRatio(maxRatio)}` : '—',
    ratioText(c),
    met,
    requestsReason(c),
  );
}

/** Where our requests per task went (p50): polls while the task ran, and the rest (create, polls after its end, results). */
function requestsReason(c: Comparison): string | undefined {
  const done = c.side.records.filter(completedOk);
  const [before, total] = [stats(done.map((r) => r.facts?.getsBeforeEnd)), c.oursRequestsPerTask];
  if (!before || !total) return undefined;
  return `ours took p50 ${fmt(total.p50, 0)} requests per task, of which p50 ${fmt(before.p50, 0)} were polls while the task still ran (the rest: the create, the poll that saw the end, the results); the MCP loop took p50 ${fmt(c.mcpRequestsPerTask?.p50, 0)}.`;
}

/** `label: task end → workflow closed` judged against a p50 (and p99) bound. */
export function closeRow(label: string, c: Comparison, maxP50Ms: number, maxP99Ms?: number): TargetRow {
  const s = c.endToClosed;
  const [p99, p99Target] = maxP99Ms ? [' and p99', `, p99 ≤ ${fmtMs(maxP99Ms)}`] : ['', ''];
  const { met, over } = bounded(s, { p50: maxP50Ms, ...(maxP99Ms ? { p99: maxP99Ms } : {}) }, fmtMs);
  const measure = label ? `${label}task end → workflow closed, p50${p99}` : `Task end → workflow closed, p50${p99}`;
  const why = missReason(c.side.records.filter(completedOk), closeSteps(), over);
  return row(measure, `p50 ≤ ${fmtMs(maxP50Ms)}${p99Target}`, closeText(c), met, why);
}

export function completedRow(measure: string, records: TaskRecord[]): TargetRow {
  const done = records.filter(completedOk).length;
  return row(measure, `all ${records.length}`, `${done} / ${records.length}`, done === records.length);
}

/** One row per phase (a round, a kind of task): completed, requests, close time; then each phase's distributions. */
export function phaseTables(label: string, phases: Array<[string, Comparison]>): string[] {
  const p50 = (s: Stats | undefined) => fmt(s?.p50, 0);
  return [
    `| ${label} | Completed (ours · MCP) | Requests, ours / MCP | Requests per task p50 (ours · MCP) | Task end → closed (ours; MCP has the answer) |`,
    '|---|---|---|---|---|',
    ...phases.map(
      ([name, c]) =>
        `| ${name} | ${c.oursCompleted} · ${c.mcpEnded} of ${c.tasks} | ${ratioText(c)} | ${p50(c.oursRequestsPerTask)} · ${p50(c.mcpRequestsPerTask)} | ${closeText(c)} |`,
    ),
    ...phases.flatMap(([name, c]) => ['', `${name}, distributions:`, '', ...comparisonDistributions(c)]),
  ];
}

/** After a blank line: both sides ran their tasks, once each; the worker's peak and log; deadlines hit. */
export function fairnessChecks(stack: BenchStack, ours: TaskRecord[], sides: SideBySide[]): string[] {
  const summary = summarizeRequests(stack.emulator.requests);
  const mcp = sides.flatMap((s) => s.mcp);
  const codeTasks = ours.filter((r) => r.plan.code);
  const typedOnce = codeTasks.filter((r) => r.facts?.codesReceived?.join() === r.plan.code!.value).length;
  const mcpErrors = mcp.flatMap((r) => r.startError ?? r.facts?.failure ?? []);
  const worker = stack.workers.at(-1);
  return [
    '',
    `- Creates: ${summary.createsByProject[PROJECT] ?? 0} \`POST /tasks\` for ${ours.filter((r) => r.firstRunId).length} workflows, ${summary.createsByProject[MCP_PROJECT] ?? 0} for ${mcp.length} MCP twins; non-2xx answers: ${summary.non2xx}; stop commands: ${summary.stops}; creates without a planned duration: ${stack.durations.misses}.`,
    ...(codeTasks.length ? [`- One-time codes typed exactly once (ours): ${typedOnce} / ${codeTasks.length}.`] : []),
    `- MCP twins that failed: ${mcpErrors.length}${mcpErrors[0] ? ` (first: ${mcpErrors[0]})` : ''}; that returned on a stale \`awaiting\` after their code: ${mcp.filter((r) => r.plan.code && r.facts?.status === 'awaiting').length}.`,
    `- Worker peak RSS ${fmt(mb(worker?.sampler.peakEverKb() ?? NaN), 0)} MB; log lines with WARN ${worker?.warnLines}, with ERROR ${worker?.errorLines}.`,
    ...notCompleted(ours),
    ...sides.flatMap((s) => outcomeLines(s.outcome)),
  ];
}

/** The first five workflows that did not complete, and why. */
export function notCompleted(records: TaskRecord[]): string[] {
  const failed = records.filter((r) => !completedOk(r));
  const why = (r: TaskRecord) => r.startError ?? r.facts?.failure ?? r.facts?.status ?? 'not closed';
  const more = failed.length > 5 ? [`- … and ${failed.length - 5} more not completed.`] : [];
  return [...failed.slice(0, 5).map((r) => `- Not completed: \`${r.plan.workflowId}\`: ${why(r)}`), ...more];
}

/** A run's wall time, and whether its deadline was hit or its worker died. */
export function outcomeLines(o: RunOutcome, label = ''): string[] {
  const hit = o.deadlineHit ? ' (**deadline hit**: unfinished tasks count as not completed)' : '';
  const died = o.workerDied ? ` (**${o.workerDied}**)` : '';
  const wall = fmtMs(o.endedAt - o.firstStartAt);
  return [`- ${label}Wall time: ${wall} from the first start to the last close${hit}${died}.`];
}
