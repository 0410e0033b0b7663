// WORKER_NEXUS_SERVICE and WORKER_NEXUS_ALLOW: whether the worker serves the `browserai` Nexus
// service, and what its callers may set beyond their own task (src/contract/callers.ts). The words
// are the environment's spelling of the allowances; the fence's refusals name them too.
import { allowanceArgument, CALLER_ALLOWANCE_KINDS, type CallerAllowances } from '../contract/callers';
import type { CallerAllowanceName } from '../contract/input';
import type { Env } from './env';

/** The word of each allowance in WORKER_NEXUS_ALLOW; one that takes a value has it after a colon (`totp:PORTAL`). */
export const NEXUS_ALLOW_WORDS: Record<CallerAllowanceName, string> = {
  totpSecretNames: 'totp',
  codeInstructionTemplates: 'code-template',
  webhooks: 'webhooks',
  webhookReferencePrefixes: 'webhook-reference',
  notifyWorkflowIdPrefixes: 'notify',
  activityTaskQueues: 'task-queue',
  codeRecipients: 'code-recipient',
  priority: 'priority',
  maxTimeoutMs: 'max-timeout-ms',
};

/** WORKER_NEXUS_SERVICE: `true` registers the `browserai` Nexus service; `false` or unset does not. */
export function nexusServiceFrom(env: Env, problems: string[]): boolean {
  const raw = env.WORKER_NEXUS_SERVICE?.trim();
  if (!raw || /^(false|0)$/i.test(raw)) return false;
  if (/^(true|1)$/i.test(raw)) return true;
  problems.push(`WORKER_NEXUS_SERVICE must be true or false (got "${raw}")`);
  return false;
}

/**
 * WORKER_NEXUS_ALLOW: comma-separated allowances for the Nexus service's callers, e.g.
 * `totp:PORTAL,webhooks,webhook-reference:nexus:`. A switch is its word (`code-template`,
 * `webhooks`, `priority`); a list item or bound has its value after the first colon
 * (`totp:NAME`, `webhook-reference:PREFIX`, `notify:PREFIX`, `task-queue:NAME`, each may repeat;
 * `max-timeout-ms:MS`). The words are NEXUS_ALLOW_WORDS. Unset: nothing.
 */
export function nexusAllowFrom(env: Env, problems: string[]): CallerAllowances {
  const raw = env.WORKER_NEXUS_ALLOW?.trim();
  if (!raw) return {};
  const byWord = new Map(Object.entries(NEXUS_ALLOW_WORDS).map(([name, word]) => [word, name as CallerAllowanceName]));
  const allowed: Record<string, boolean | number | string[]> = {};
  for (const item of raw.split(',').map((part) => part.trim())) {
    const colon = item.indexOf(':');
    const [word, value] = colon < 0 ? [item, undefined] : [item.slice(0, colon), item.slice(colon + 1)];
    const name = byWord.get(word);
    const kind = name && CALLER_ALLOWANCE_KINDS[name];
    if (name && kind === 'switch' && value === undefined) allowed[name] = true;
    else if (name && (kind === 'names' || kind === 'prefixes') && value)
      allowed[name] = [...((allowed[name] as string[] | undefined) ?? []), value];
    else if (name && kind === 'bound' && value && /^[1-9]\d*$/.test(value)) allowed[name] = Number(value);
    else
      problems.push(
        `WORKER_NEXUS_ALLOW: "${item}" is not an allowance; write comma-separated ${allowanceWords()} ` +
          '(e.g. totp:PORTAL,webhooks,webhook-reference:nexus:)',
      );
  }
  if (!nexusServiceFrom(env, []))
    problems.push(
      'WORKER_NEXUS_ALLOW is set but WORKER_NEXUS_SERVICE is not true: set it to serve the Nexus service, or unset WORKER_NEXUS_ALLOW',
    );
  return allowed as CallerAllowances;
}

/** Every word WORKER_NEXUS_ALLOW takes, with its value where it takes one: `totp:NAME, code-template, ...`. */
function allowanceWords(): string {
  return Object.entries(NEXUS_ALLOW_WORDS)
    .map(([name, word]) => {
      const argument = allowanceArgument(name as CallerAllowanceName);
      return argument ? `${word}:${argument}` : word;
    })
    .join(', ');
}
