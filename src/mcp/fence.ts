// What an MCP client may ask for. The model behind an MCP client writes the tool arguments, and
// whoever reaches the server speaks for it: it is a caller outside the team's trust, as a Nexus
// caller is, and gets the same defaults. By default it cannot name the worker's TOTP secrets (their
// codes would be typed into its task), write the instruction a code is typed with, set a webhook
// reference (the receiver routes on it), signal another workflow, or route BrowserAI activities to
// a task queue; the operator opens each explicitly. And it reaches only tasks it started: the server
// mints every workflow ID as its prefix and a UUID, and refuses any other ID. Not a bare prefix
// match: the default `mcp-` would reach the per-user `mcp-alice-<uuid>`, and `mcp-alice` would
// reach `mcp-alice2-<uuid>`.
import { randomUUID } from 'node:crypto';
import type { BrowserTaskInput } from '../contract/input';
import type { SavedTaskOverrides } from '../contract/saved-task-input';

/** What the operator lets MCP clients set; everything is closed by default. */
export interface McpFenceOptions {
  /** TOTP secret names a task may name (`totpSecretName`); default none. */
  totpSecretNames?: readonly string[];
  /** May a task set `codeInstructionTemplate`? Default false. */
  codeInstructionTemplates?: boolean;
  /** May a task ask for webhooks (`webhook`, and its `reference`)? Default false. */
  webhooks?: boolean;
  /** May a task signal a workflow of its choice (`notifyWorkflowId`)? Default false (`false`, signal nobody, is always allowed). */
  notifyWorkflowIds?: boolean;
  /** May a task set `activityOptions` (task queue, priority, fairness, retry pacing)? Default false. */
  activityOptions?: boolean;
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

/** The fence in force: the options with their defaults. */
export type McpFence = Required<McpFenceOptions>;

export function resolveFence(options: McpFenceOptions = {}): McpFence {
  const idPrefix = options.idPrefix ?? DEFAULT_ID_PREFIX;
  if (!ID_PREFIX_PATTERN.test(idPrefix))
    throw new TypeError(
      `The MCP workflow ID prefix must be 1 to 100 letters, digits or ._:- (got ${JSON.stringify(idPrefix)})`,
    );
  return {
    idPrefix: /[-_.:]$/.test(idPrefix) ? idPrefix : `${idPrefix}-`,
    totpSecretNames: options.totpSecretNames ?? [],
    codeInstructionTemplates: options.codeInstructionTemplates ?? false,
    webhooks: options.webhooks ?? false,
    notifyWorkflowIds: options.notifyWorkflowIds ?? false,
    activityOptions: options.activityOptions ?? false,
  };
}

/** What the fence refuses in a task's input or a saved task's overrides, each with what to do instead. */
export function fenceProblems(
  task: Partial<BrowserTaskInput> | SavedTaskOverrides | undefined,
  fence: McpFence,
): string[] {
  if (!task || typeof task !== 'object') return [];
  const problems: string[] = [];
  const closed = (field: string, option: string) =>
    problems.push(`${field} is not offered to MCP clients (the server's operator can allow it: ${option})`);
  if (task.totpSecretName !== undefined && !fence.totpSecretNames.includes(task.totpSecretName))
    closed('totpSecretName', '--allow-totp-secret NAME');
  if (task.codeInstructionTemplate !== undefined && !fence.codeInstructionTemplates)
    closed('codeInstructionTemplate', '--allow-code-templates');
  if (task.webhook !== undefined && !fence.webhooks) closed('webhook', '--allow-webhooks');
  if (task.notifyWorkflowId !== undefined && task.notifyWorkflowId !== false && !fence.notifyWorkflowIds)
    closed('notifyWorkflowId', '--allow-notify');
  if (task.activityOptions !== undefined && !fence.activityOptions)
    closed('activityOptions', '--allow-activity-options');
  return problems;
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
