// The one fence of callers outside the operator's trust: a Nexus caller (another team, through an
// endpoint) and an MCP client (a model, and whoever reaches the server). What such a caller may
// set in a task is the `caller` column of TASK_INPUT_FIELDS: a field is open, or opened by one of
// the operator's allowances below. A set field that is not allowed is refused, never dropped (a
// caller whose TOTP secret were silently removed would wait for a code nobody types), and each
// refusal names the field and the operator's setting that would allow it.
// And a caller's tasks queue as the caller: its identity is their fairness key, so callers share
// fleet slots and task queues fairly with each other and with the operator's tenants, whatever
// project they name. Pure: the handlers above and the workflow bundle may both import it.
import { normalAddress } from './code-recipient';
import {
  DEFAULTS,
  FAIRNESS_KEY_BYTES,
  TASK_INPUT_FIELDS,
  type BrowserTaskInput,
  type CallerAllowanceName,
  type CallerRule,
} from './input';
import { isPlainObject, utf8Prefix } from './text';

/**
 * What the operator lets outside callers set in a task, beyond what is theirs anyway (instructions,
 * project, location, polling, ...). Everything is closed by default.
 */
export interface CallerAllowances {
  /**
   * TOTP secrets (by name, as the worker holds them) a caller may name in `totpSecretName`; default
   * none. The caller writes the instructions, and the agent that types a code sees it: allow a
   * secret only to callers you would give its codes.
   */
  totpSecretNames?: readonly string[];
  /** Whether a caller may set `codeInstructionTemplate` (the instruction a code is typed with); default false. */
  codeInstructionTemplates?: boolean;
  /** Whether a caller may ask for webhook events (`webhook`), signed and sent to the operator's receiver; default false. */
  webhooks?: boolean;
  /**
   * Prefixes a caller's `webhook.reference` must start with, ending at a separator (`nexus:team-a`
   * allows `nexus:team-a:1`, not `nexus:team-a2:1`); default none, so a caller sets no reference.
   */
  webhookReferencePrefixes?: readonly string[];
  /**
   * Prefixes of the workflow IDs a caller may name in `notifyWorkflowId` (each is signalled in the
   * service's namespace), ending at a separator as above; default none (`false` is always allowed).
   */
  notifyWorkflowIdPrefixes?: readonly string[];
  /** Task queues a caller may name in `activityOptions.taskQueue`, where the activities (with the token) run; default none. */
  activityTaskQueues?: readonly string[];
  /**
   * Phone numbers and email addresses a caller may name in `codeRecipient.address`; default none.
   * The inbox types the codes sent there into the caller's task, and a second task waiting on
   * one address has each code refused: allow an address only to the caller it belongs to.
   */
  codeRecipients?: readonly string[];
  /**
   * Whether a caller may choose its place in line: `priority`, `fairnessKey`, `fairnessWeight` and
   * `activityOptions.priorityKey`, `fairnessKey`, `fairnessWeight`. Default false: its tasks go at
   * the default priority, under the caller's own fairness key, at weight 1.
   */
  priority?: boolean;
  /**
   * The longest `timeoutMs`, `awaitingInputTimeoutMs` and `stopRetryWindowMs` a caller may set, in
   * ms; default 2 h (the default `timeoutMs`): a caller may shorten a task, not keep it for days.
   */
  maxTimeoutMs?: number;
}

/** The `maxTimeoutMs` of an operator who set none: the default whole-task timeout. */
export const DEFAULT_CALLER_MAX_TIMEOUT_MS = DEFAULTS.timeoutMs;

/** How an allowance opens its fields: a switch, exact names, prefixes of the value, or an upper bound. */
export type AllowanceKind = 'switch' | 'names' | 'prefixes' | 'bound';

/** Each allowance's kind; the compiler insists on one per field of `CallerAllowances` and name of the table. */
export const CALLER_ALLOWANCE_KINDS: Record<CallerAllowanceName, AllowanceKind> &
  Record<keyof CallerAllowances, AllowanceKind> = {
  totpSecretNames: 'names',
  codeInstructionTemplates: 'switch',
  webhooks: 'switch',
  webhookReferencePrefixes: 'prefixes',
  notifyWorkflowIdPrefixes: 'prefixes',
  activityTaskQueues: 'names',
  codeRecipients: 'names',
  priority: 'switch',
  maxTimeoutMs: 'bound',
};

/** What an allowance's setting is written with, after its option or flag: nothing (a switch), `NAME`, `ADDRESS`, `PREFIX` or `MS`. */
export function allowanceArgument(name: CallerAllowanceName): string {
  if (name === 'codeRecipients') return 'ADDRESS';
  return { switch: '', names: 'NAME', prefixes: 'PREFIX', bound: 'MS' }[CALLER_ALLOWANCE_KINDS[name]];
}

/** How names compare: addresses in their normal form (`+1 555-0100` is `+15550100`), the rest as written. */
const sameName = (name: CallerAllowanceName, value: string, allowed: string): boolean =>
  name === 'codeRecipients'
    ? normalAddress(value) !== null && normalAddress(value) === normalAddress(allowed)
    : value === allowed;

/** How one surface speaks of itself and of the operator's settings in a refusal. */
export interface CallerSurface {
  /** Where the caller stands, after "is not allowed": `through Nexus`, `to MCP clients`. */
  to: string;
  /** How the operator sets each allowance there, after "allow it with": an option, a flag, an environment word. */
  allowWith: Record<CallerAllowanceName, string>;
}

/**
 * What in `task` (a `BrowserTaskInput`, or a saved task's overrides) the operator has not allowed
 * the caller, each naming the field and the setting that would allow it; empty when nothing. Fields
 * the table does not know are left to the task's own validation.
 */
export function callerProblems(
  task: unknown,
  allowed: CallerAllowances,
  surface: CallerSurface,
  path = 'task.',
): string[] {
  if (!isPlainObject(task)) return [];
  const problems: string[] = [];
  for (const [field, value] of Object.entries(task)) {
    const spec = (TASK_INPUT_FIELDS as Record<string, { caller: CallerRule; fields?: Record<string, CallerRule> }>)[
      field
    ];
    if (!spec || value === undefined) continue;
    problems.push(...ruleProblems(`${path}${field}`, value, spec.caller, allowed, surface));
    if (spec.fields && isPlainObject(value))
      for (const [inner, innerValue] of Object.entries(value)) {
        const rule = spec.fields[inner];
        if (rule !== undefined && innerValue !== undefined)
          problems.push(...ruleProblems(`${path}${field}.${inner}`, innerValue, rule, allowed, surface));
      }
  }
  return problems;
}

function ruleProblems(
  path: string,
  value: unknown,
  rule: CallerRule,
  allowed: CallerAllowances,
  surface: CallerSurface,
): string[] {
  // `false` asks for nothing (`notifyWorkflowId: false` signals nobody).
  if (rule === true || value === false) return [];
  const how = `(the operator can allow it with ${surface.allowWith[rule]})`;
  const setting = allowed[rule];
  const kind = CALLER_ALLOWANCE_KINDS[rule];
  if (kind === 'switch') return setting === true ? [] : [`${path} is not allowed ${surface.to} ${how}`];
  if (kind === 'bound') {
    const bound = (setting as number | undefined) ?? DEFAULT_CALLER_MAX_TIMEOUT_MS;
    // Not a number: the task's own validation says so.
    return typeof value !== 'number' || value <= bound
      ? []
      : [`${path} ${value} is over the ${bound} ms allowed ${surface.to} ${how}`];
  }
  const list = (setting ?? []) as readonly string[];
  const ok =
    typeof value === 'string' &&
    (kind === 'names'
      ? list.some((name) => sameName(rule, value, name))
      : list.some((prefix) => underPrefix(value, prefix)));
  return ok ? [] : [`${path} ${JSON.stringify(value)} is not allowed ${surface.to} ${how}`];
}

/**
 * Whether `value` is under `prefix`, the prefix ending at a separator (a character that is not a
 * letter or digit): in the prefix, or next in the value. So `nexus:team-a` covers `nexus:team-a`
 * and `nexus:team-a:1`, not `nexus:team-a2:1`.
 */
export function underPrefix(value: string, prefix: string): boolean {
  if (prefix === '' || !value.startsWith(prefix)) return false;
  const next = value.charAt(prefix.length);
  return next === '' || !/[\p{L}\p{N}]/u.test(prefix.at(-1)!) || !/[\p{L}\p{N}]/u.test(next);
}

/**
 * The task as the caller's: its fairness key is the caller's identity (`callerKey`, cut to
 * Temporal's 64 bytes), unless the operator allows the caller its place in line and it chose a key.
 * That key orders its tasks for fleet slots and on the task queues, whatever project they name.
 */
export function inCallersLane<T extends Pick<BrowserTaskInput, 'fairnessKey'>>(
  task: T,
  allowed: CallerAllowances,
  callerKey: string,
): T {
  if (allowed.priority === true && task.fairnessKey !== undefined) return task;
  return { ...task, fairnessKey: utf8Prefix(callerKey, FAIRNESS_KEY_BYTES) };
}
