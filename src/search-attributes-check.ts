// At worker start: which of our search attributes the namespace lacks, and what each one's absence
// costs, said once in the worker's log. Visibility is asked (a count per attribute, not billed as
// an action), which any client of the namespace may do; the operator API that lists search
// attributes needs rights a worker's client may not have.
import type { Client } from '@temporalio/client';
import { TypedSearchAttributes, type Logger } from '@temporalio/common';
import { ALL_SEARCH_ATTRIBUTES } from './contract/search-attributes';

type OurKey = (typeof ALL_SEARCH_ATTRIBUTES)[number];

/** What a namespace loses without each search attribute: what the warning says. */
const COST_OF_MISSING: Record<string, string> = {
  BrowserAIExecutionId: "finding a task's workflow by BrowserAI's executionId (UI and `temporal workflow list`)",
  BrowserAIStatus: 'filtering tasks by BrowserAI status (UI and `temporal workflow list`)',
  BrowserAIProject: '`waiting --project` and filters by project read visibility: they ask each running task instead',
  BrowserAIAwaitingInput:
    'the waiting list (`waiting`, listAwaitingInput) reads visibility: it asks each running task instead (a query each, answered only while a worker runs)',
  BrowserAIAwaitingInputSince: 'the waiting list reads when each wait began from visibility: it asks each task',
  BrowserAIKind:
    'learning from other workers: each worker learns how long tasks run alone, and forgets it on restart (its polls cost more)',
  BrowserAIEndMs:
    'learning from other workers: each worker learns how long tasks run alone, and forgets it on restart (its polls cost more)',
};

/** Visibility's refusal of a query on a search attribute the namespace lacks ("invalid search attribute: X"). */
function isUnknownAttribute(err: unknown, name: string): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e.message.includes(name) && /(invalid|unknown|not defined|no mapping|not a valid)/i.test(e.message))
      return true;
  }
  return false;
}

/**
 * Our search attributes the namespace lacks, asked of visibility; undefined when visibility could
 * not be asked (unreachable, not allowed): then nothing is known.
 */
export async function missingSearchAttributes(
  workflows: Pick<Client['workflow'], 'count'>,
): Promise<OurKey[] | undefined> {
  const answers = await Promise.all(
    ALL_SEARCH_ATTRIBUTES.map((key) =>
      workflows.count(`${key.name} IS NULL AND WorkflowType = 'browserTask'`).then(
        () => 'present' as const,
        (err: unknown) => (isUnknownAttribute(err, key.name) ? ('missing' as const) : ('unknown' as const)),
      ),
    ),
  );
  if (answers.includes('unknown')) return undefined;
  return ALL_SEARCH_ATTRIBUTES.filter((_, i) => answers[i] === 'missing');
}

/** Checks once and warns when the namespace lacks any of our search attributes, naming each with what it costs. */
export async function warnOfMissingSearchAttributes(
  workflows: Pick<Client['workflow'], 'count'>,
  namespace: string,
  logger: Pick<Logger, 'warn'>,
): Promise<void> {
  const missing = await missingSearchAttributes(workflows).catch(() => undefined);
  if (!missing || missing.length === 0) return;
  const typeOf = (key: OurKey) => TypedSearchAttributes.toMetadataType(key.type);
  const costs = missing.map((key) => `${key.name} (${typeOf(key)}): ${COST_OF_MISSING[key.name]}`);
  logger.warn(
    `Namespace "${namespace}" lacks ${missing.length} of the BrowserAI search attributes. Tasks set and publish the others; without ` +
      `${costs.join('; without ')}. Register them: ${missing
        .map(
          (key) =>
            `temporal operator search-attribute create --namespace ${namespace} --name ${key.name} --type ${typeOf(key)}`,
        )
        .join(' && ')} (docs/temporal-ui.md).`,
    { missingSearchAttributes: missing.map((key) => key.name) },
  );
}
