// What is wrong with a `browserTask` input, every problem at once, read against the table of
// input fields (input.ts). Both the starters and the workflow check: a starter rejects bad input
// before anything is sent, and the workflow rejects it again before any activity runs (a caller
// may start the workflow with a raw Temporal client).
import type { GeoLocation } from './browserai-types';
import {
  ACTIVITY_OPTION_FIELDS,
  BOUNDS,
  type BrowserTaskInput,
  FAIRNESS_KEY_CHARS,
  GEO_LOCATION_FIELDS,
  INSTRUCTION_FIELDS,
  MAX_INPUT_BYTES,
  POLLING_FIELDS,
  TASK_INPUT_FIELDS,
  TASK_TYPES,
  type TaskActivityOptions,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_FIELDS,
  rangeOf,
  resolvePolling,
} from './input';
import { codeRecipientProblems } from './code-recipient';
import { ISO_COUNTRY_CODES } from './iso-countries';
import { codePoints, isPlainObject, jsonBytes } from './text';

/** Bad input, found before anything was sent. `problems` lists every problem, not just the first. */
export class InvalidInputError extends Error {
  override readonly name = 'InvalidInputError';
  constructor(readonly problems: string[]) {
    super(`Invalid input: ${problems.join('; ')}`);
  }
}

/** A problem naming the fields `value` has beyond `known` (`ignore`: those with a problem of their own). */
export function unknownFieldProblems(
  value: Record<string, unknown>,
  known: Record<string, unknown>,
  field: string,
  ignore: string[] = [],
): string[] {
  const extra = Object.keys(value).filter((key) => !Object.hasOwn(known, key) && !ignore.includes(key));
  return extra.length === 0
    ? []
    : [
        `${field} has no field ${extra.map((key) => JSON.stringify(key)).join(', ')}: it takes ${Object.keys(known).join(', ')}`,
      ];
}

function optionalOf(type: 'string' | 'boolean', value: unknown, field: string): string[] {
  return value === undefined || typeof value === type
    ? []
    : [`${field} must be a ${type} (got ${JSON.stringify(value)})`];
}

export function instructionProblems(instructions: unknown, field = 'instructions'): string[] {
  if (!Array.isArray(instructions) || instructions.length === 0) {
    return [`${field} must be a non-empty array of {action: string}`];
  }
  const problems: string[] = [];
  instructions.forEach((item: unknown, i) => {
    if (!isPlainObject(item)) return problems.push(`${field}[${i}].action must be a non-empty string`);
    const { action, type } = item;
    if (typeof action !== 'string' || action.trim() === '')
      problems.push(`${field}[${i}].action must be a non-empty string`);
    problems.push(
      ...optionalOf('string', type, `${field}[${i}].type`),
      ...unknownFieldProblems(item, INSTRUCTION_FIELDS, `${field}[${i}]`),
    );
  });
  return problems;
}

export function geoLocationProblems(geo: unknown): string[] {
  const country = (geo as GeoLocation | null | undefined)?.country;
  const problems =
    typeof country !== 'string' || !ISO_COUNTRY_CODES.has(country.toUpperCase())
      ? [
          `geoLocation.country must be an ISO 3166-1 alpha-2 code such as "US" or "GB" (got ${JSON.stringify(country ?? null)})`,
        ]
      : [];
  if (!isPlainObject(geo)) return problems;
  return [
    ...problems,
    ...optionalOf('string', geo.city, 'geoLocation.city'),
    ...optionalOf('string', geo.zipcode, 'geoLocation.zipcode'),
    ...unknownFieldProblems(geo, GEO_LOCATION_FIELDS, 'geoLocation'),
  ];
}

/**
 * The longest project name taken. It goes into the `BrowserAIProject` search attribute, cut to 255
 * characters when longer (keyword-value.ts); the bound keeps the whole name, which the workflow's
 * input, details and input requests carry, within reason.
 */
export const MAX_PROJECT_CHARS = 512;

export function projectProblems(project: unknown): string[] {
  if (!(typeof project === 'string' && project.trim() !== ''))
    return ['project must be a non-empty string (a BrowserAI project name or ID)'];
  const chars = [...project].length;
  return chars <= MAX_PROJECT_CHARS
    ? []
    : [
        `project must be at most ${MAX_PROJECT_CHARS} characters (got ${chars}): use the BrowserAI project's name or ID`,
      ];
}

function within(value: unknown, field: string, [min, max] = BOUNDS[field]!): string[] {
  if (value === undefined) return [];
  return typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max
    ? []
    : [`${field} must be a number of milliseconds from ${min} to ${max} (got ${JSON.stringify(value)})`];
}

export function taskInputProblems(input: BrowserTaskInput | null | undefined): string[] {
  if (!isPlainObject(input)) return ['input must be an object with instructions, type, project and geoLocation'];
  const problems = [
    ...instructionProblems(input.instructions),
    ...(TASK_TYPES.includes(input.type)
      ? []
      : [`type must be one of ${TASK_TYPES.join(', ')} (got ${JSON.stringify(input.type ?? null)})`]),
    ...projectProblems(input.project),
    ...geoLocationProblems(input.geoLocation),
    ...optionalOf('boolean', input.inspect, 'inspect'),
    ...optionalOf('boolean', input.awaitable, 'awaitable'),
    ...unknownFieldProblems(input, TASK_INPUT_FIELDS, 'input', ['resume']),
    ...(['timeoutMs', 'awaitingInputTimeoutMs', 'stopRetryWindowMs'] as const).flatMap((key) =>
      within(input[key], key, rangeOf(key)),
    ),
    ...(
      [
        'initialIntervalMs',
        'maxIntervalMs',
        'heartbeatTimeoutMs',
        'targetDetectionMs',
        'maxSpanMs',
        'inputSettleMs',
        'notFoundGraceMs',
      ] as const
    ).flatMap((key) => within(input.polling?.[key], `polling.${key}`)),
  ];
  if (input.polling !== undefined) {
    if (!isPlainObject(input.polling)) problems.push('polling must be an object');
    else problems.push(...unknownFieldProblems(input.polling, POLLING_FIELDS, 'polling'));
  }
  if ('resume' in input) problems.push('resume is not an input: continue-as-new carries its own state');
  const polling = resolvePolling(input.polling);
  if (polling.initialIntervalMs > polling.maxIntervalMs)
    problems.push('polling.initialIntervalMs must not exceed polling.maxIntervalMs');
  if (
    input.codeInstructionTemplate !== undefined &&
    !(typeof input.codeInstructionTemplate === 'string' && input.codeInstructionTemplate.includes('{code}'))
  ) {
    problems.push(
      'codeInstructionTemplate must contain the placeholder {code} (a string such as "Enter the code {code}")',
    );
  }
  if (input.delivery !== undefined && input.delivery !== 'at-most-once' && input.delivery !== 'at-least-once') {
    problems.push("delivery must be 'at-most-once' or 'at-least-once'");
  }
  const [minResultBytes, maxResultBytes] = rangeOf('maxResultBytes');
  if (
    input.maxResultBytes !== undefined &&
    !(
      typeof input.maxResultBytes === 'number' &&
      input.maxResultBytes >= minResultBytes &&
      input.maxResultBytes <= maxResultBytes
    )
  ) {
    problems.push(`maxResultBytes must be between ${minResultBytes} and ${maxResultBytes}`);
  }
  if (
    input.notifyWorkflowId !== undefined &&
    input.notifyWorkflowId !== false &&
    !nonEmpty(input.notifyWorkflowId, 1000)
  ) {
    problems.push('notifyWorkflowId must be a workflow ID (a non-empty string) or false');
  }
  problems.push(...placeProblems(input, ''));
  problems.push(...activityOptionProblems(input.activityOptions));
  problems.push(...codeLoopProblems(input));
  const bytes = jsonBytes(input);
  if (bytes > MAX_INPUT_BYTES)
    problems.push(
      `input must be at most ${MAX_INPUT_BYTES} bytes of JSON (got ${bytes}): shorten the instructions, or send the rest later with appendInstructions`,
    );
  return problems;
}

const TOTP_SECRET_NAME = /^[A-Za-z0-9_]{1,64}$/;
const WEBHOOK_REFERENCE = /^[A-Za-z0-9._:/@+=-]{1,128}$/;

/** The options of the one-time-code loop: the TOTP secret's name, the code attempts, the webhook choice. */
function codeLoopProblems(input: BrowserTaskInput): string[] {
  const problems: string[] = [];
  const { totpSecretName, maxCodeAttempts, webhook, codeRecipient } = input;
  problems.push(...codeRecipientProblems(codeRecipient));
  if (codeRecipient !== undefined && totpSecretName !== undefined)
    problems.push('codeRecipient and totpSecretName exclude each other: the worker types TOTP codes itself');
  if (totpSecretName !== undefined && !(typeof totpSecretName === 'string' && TOTP_SECRET_NAME.test(totpSecretName)))
    problems.push(
      'totpSecretName must be the name of a TOTP secret the worker holds: 1-64 letters, digits or underscores (never the secret itself)',
    );
  const [minAttempts, maxAttempts] = rangeOf('maxCodeAttempts');
  if (
    maxCodeAttempts !== undefined &&
    !(Number.isInteger(maxCodeAttempts) && maxCodeAttempts >= minAttempts && maxCodeAttempts <= maxAttempts)
  )
    problems.push(
      `maxCodeAttempts must be an integer from ${minAttempts} to ${maxAttempts} (got ${JSON.stringify(maxCodeAttempts)})`,
    );
  if (webhook === undefined) return problems;
  if (!isPlainObject(webhook))
    return [
      ...problems,
      'webhook must be an object: { events?, reference? } (the destination is configured on the worker)',
    ];
  problems.push(
    ...unknownFieldProblems(webhook, WEBHOOK_FIELDS, 'webhook').map(
      (problem) => `${problem} (the destination and its secrets are configured on the worker)`,
    ),
  );
  const { events, reference } = webhook;
  if (
    events !== undefined &&
    !(Array.isArray(events) && events.every((event) => (WEBHOOK_EVENT_TYPES as readonly unknown[]).includes(event)))
  )
    problems.push(`webhook.events must be a list of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  if (reference !== undefined && !(typeof reference === 'string' && WEBHOOK_REFERENCE.test(reference)))
    problems.push(
      'webhook.reference must be 1-128 letters, digits or ._:/@+=- (an opaque ID of yours, never a secret)',
    );
  return problems;
}

/** A non-blank string of at most `maxLength` characters (code points, as JSON Schema counts them). */
function nonEmpty(value: unknown, maxLength: number): boolean {
  return typeof value === 'string' && value.trim() !== '' && [...value].length <= maxLength;
}

export function activityOptionProblems(options: TaskActivityOptions | undefined): string[] {
  if (options === undefined) return [];
  if (!isPlainObject(options as unknown)) return ['activityOptions must be an object'];
  const problems = unknownFieldProblems({ ...options }, ACTIVITY_OPTION_FIELDS, 'activityOptions');
  const { taskQueue, priorityKey, fairnessKey, fairnessWeight, retry } = options;
  if (taskQueue !== undefined && !nonEmpty(taskQueue, 1000))
    problems.push('activityOptions.taskQueue must be a task queue name (a non-empty string)');
  problems.push(...placeProblems({ priority: priorityKey, fairnessKey, fairnessWeight }, 'activityOptions.'));
  if (retry !== undefined && !isPlainObject(retry)) problems.push('activityOptions.retry must be an object');
  else if (retry !== undefined) {
    problems.push(
      ...within(retry.initialIntervalMs, 'activityOptions.retry.initialIntervalMs'),
      ...within(retry.maximumIntervalMs, 'activityOptions.retry.maximumIntervalMs'),
    );
    const { backoffCoefficient } = retry;
    if (
      backoffCoefficient !== undefined &&
      !(typeof backoffCoefficient === 'number' && backoffCoefficient >= 1 && backoffCoefficient <= 10)
    ) {
      problems.push(
        `activityOptions.retry.backoffCoefficient must be a number from 1 to 10 (got ${JSON.stringify(backoffCoefficient)})`,
      );
    }
    const extra = Object.keys(retry).filter(
      (key) => !['initialIntervalMs', 'maximumIntervalMs', 'backoffCoefficient'].includes(key),
    );
    if (extra.length > 0)
      problems.push(
        `activityOptions.retry takes initialIntervalMs, maximumIntervalMs and backoffCoefficient only (got ${extra.join(', ')}): attempt limits are part of what the workflow guarantees`,
      );
  }
  return problems;
}

/** A priority (1-5), fairness key (at most 64 characters) and weight (0.001-1000), where given. */
function placeProblems(
  { priority, fairnessKey, fairnessWeight }: Pick<BrowserTaskInput, 'priority' | 'fairnessKey' | 'fairnessWeight'>,
  prefix: '' | 'activityOptions.',
): string[] {
  const problems: string[] = [];
  const priorityName = prefix ? `${prefix}priorityKey` : 'priority';
  const [first, last] = rangeOf('priority');
  if (priority !== undefined && !(Number.isInteger(priority) && priority >= first && priority <= last)) {
    problems.push(`${priorityName} must be an integer from ${first} to ${last} (got ${JSON.stringify(priority)})`);
  }
  if (
    fairnessKey !== undefined &&
    !(typeof fairnessKey === 'string' && codePoints(fairnessKey) <= FAIRNESS_KEY_CHARS)
  ) {
    problems.push(`${prefix}fairnessKey must be a string of at most ${FAIRNESS_KEY_CHARS} characters`);
  }
  const [lightest, heaviest] = rangeOf('fairnessWeight');
  if (
    fairnessWeight !== undefined &&
    !(typeof fairnessWeight === 'number' && fairnessWeight >= lightest && fairnessWeight <= heaviest)
  ) {
    problems.push(
      `${prefix}fairnessWeight must be a number from ${lightest} to ${heaviest} (got ${JSON.stringify(fairnessWeight)})`,
    );
  }
  return problems;
}
