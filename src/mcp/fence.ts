// What an MCP client may ask for. The model behind an MCP client writes the tool arguments, and
// whoever reaches the server speaks for it: it is a caller outside the team's trust, as a Nexus
// caller is, and meets the same fence (src/contract/callers.ts): by default it cannot name the
// worker's TOTP secrets, write the instruction a code is typed with, ask for webhooks, signal
// another workflow, route BrowserAI activities to a task queue, choose its place in line or keep a
// task past 2 h; the operator opens each explicitly (MCP_ALLOW_FLAGS). Its tasks queue under the
// server's ID prefix as their fairness key. And it reaches only tasks it started: the server
// mints every workflow ID as its prefix and a UUID, and refuses any other ID. Not a bare prefix
// match: the default `mcp-` would reach the per-user `mcp-alice-<uuid>`, and `mcp-alice` would
// reach `mcp-alice2-<uuid>`.
import { randomUUID } from 'node:crypto';
import {
  allowanceArgument,
  CALLER_ALLOWANCE_KINDS,
  callerProblems,
  inCallersLane,
  type CallerAllowances,
  type CallerSurface,
} from '../contract/callers';
import type { BrowserTaskInput, CallerAllowanceName } from '../contract/input';

/** What the operator lets MCP clients set (`CallerAllowances`, everything closed by default), and the server's ID prefix. */
export interface McpFenceOptions extends CallerAllowances {
  /**
   * The prefix of every workflow ID the server mints (the prefix, then a UUID), and of the only IDs its tools accept;
   * default `mcp-`. A prefix ends at a separator: one that does not end in `-`, `_`, `.` or `:` gets a `-`
   * (`mcp-alice` is `mcp-alice-`). Servers that share a prefix share their tasks (which is how a new session resumes
   * a task by ID): give each team or user a prefix of its own. No server reaches another prefix's tasks, even one
   * that begins with its own (`mcp-` does not reach `mcp-alice-...`).
   * @pattern ^[A-Za-z0-9._:-]{1,100}$
   */
  idPrefix?: string;
}

/** The workflow ID prefix of a server given none. */
export const DEFAULT_ID_PREFIX = 'mcp-';
const ID_PREFIX_PATTERN = /^[A-Za-z0-9._:-]{1,100}$/;
/** What follows the prefix in every ID the server mints: `randomUUID()`'s shape, and nothing else. */
const MINTED_PART = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The fence in force: the allowances, and the prefix as the server uses it. */
export type McpFence = CallerAllowances & { idPrefix: string };

export function resolveFence(options: McpFenceOptions = {}): McpFence {
  const idPrefix = options.idPrefix ?? DEFAULT_ID_PREFIX;
  if (!ID_PREFIX_PATTERN.test(idPrefix))
    throw new TypeError(
      `The MCP workflow ID prefix must be 1 to 100 letters, digits or ._:- (got ${JSON.stringify(idPrefix)})`,
    );
  return { ...options, idPrefix: /[-_.:]$/.test(idPrefix) ? idPrefix : `${idPrefix}-` };
}

/** The `mcp` command's flag of each allowance (its argument, if any, is `allowanceArgument`'s). */
export const MCP_ALLOW_FLAGS: Record<CallerAllowanceName, string> = {
  totpSecretNames: 'allow-totp-secret',
  codeInstructionTemplates: 'allow-code-templates',
  webhooks: 'allow-webhooks',
  webhookReferencePrefixes: 'allow-webhook-reference',
  notifyWorkflowIdPrefixes: 'allow-notify',
  activityTaskQueues: 'allow-task-queue',
  codeRecipients: 'allow-code-recipient',
  priority: 'allow-priority',
  maxTimeoutMs: 'max-timeout-ms',
};

/** MCP clients, as the fence's refusals name them and the operator's flags. */
const MCP_CLIENTS: CallerSurface = {
  to: 'to MCP clients',
  allowWith: Object.fromEntries(
    Object.entries(MCP_ALLOW_FLAGS).map(([name, flag]) => {
      const argument = allowanceArgument(name as CallerAllowanceName);
      return [name, `--${flag}${argument ? ` ${argument}` : ''}`];
    }),
  ) as Record<CallerAllowanceName, string>,
};

/** The fence's options for `parseArgs`, one per allowance: a switch is a boolean flag, a list repeats. */
export const MCP_FENCE_FLAG_OPTIONS = Object.fromEntries(
  Object.entries(MCP_ALLOW_FLAGS).map(([name, flag]) => {
    const kind = CALLER_ALLOWANCE_KINDS[name as CallerAllowanceName];
    return [flag, kind === 'switch' ? { type: 'boolean' } : { type: 'string', multiple: kind !== 'bound' }];
  }),
) as Record<string, { type: 'boolean' | 'string'; multiple?: boolean }>;

/** The allowances the `mcp` command's flags set (as `parseArgs` read them); throws TypeError for a bad bound. */
export function allowancesFromFlags(values: Record<string, unknown>): CallerAllowances {
  const allowed: Record<string, unknown> = {};
  for (const [name, flag] of Object.entries(MCP_ALLOW_FLAGS)) {
    const value = values[flag];
    if (value === undefined) continue;
    if (CALLER_ALLOWANCE_KINDS[name as CallerAllowanceName] !== 'bound') allowed[name] = value;
    else if (typeof value === 'string' && /^[1-9]\d*$/.test(value)) allowed[name] = Number(value);
    else throw new TypeError(`--${flag} takes a whole number of milliseconds (got ${String(value)})`);
  }
  return allowed as CallerAllowances;
}

/** What the fence refuses in a task's input or a saved task's overrides (`path`: where they stand), each with the flag that would allow it. */
export function fenceProblems(task: unknown, fence: McpFence, path = ''): string[] {
  return callerProblems(task, fence, MCP_CLIENTS, path);
}

/** The task (or a saved task's overrides) in the server's lane: its fairness key is the server's ID prefix. */
export function inServersLane<T extends Pick<BrowserTaskInput, 'fairnessKey'>>(task: T, fence: McpFence): T {
  return inCallersLane(task, fence, fence.idPrefix);
}

/** A new workflow ID under the server's prefix: unguessable, and recognisably this server's. */
export function mintWorkflowId(fence: McpFence): string {
  return `${fence.idPrefix}${randomUUID()}`;
}

/** Whether this server (or one with its prefix) minted the workflow ID: its prefix, then a UUID, exactly. */
export function mintedHere(workflowId: string, fence: McpFence): boolean {
  return workflowId.startsWith(fence.idPrefix) && MINTED_PART.test(workflowId.slice(fence.idPrefix.length));
}

/** Refuses a workflow ID this server did not mint: the MCP client reaches only its own tasks. */
export function ownershipProblems(workflowId: unknown, fence: McpFence): string[] {
  if (typeof workflowId !== 'string' || workflowId.trim() === '' || workflowId.length > 1000)
    return ['workflowId must be a non-empty string of at most 1000 characters'];
  if (!mintedHere(workflowId, fence))
    return [
      `workflowId "${workflowId}" is not a task this MCP server started (its tasks' IDs are "${fence.idPrefix}" and a UUID)`,
    ];
  return [];
}
