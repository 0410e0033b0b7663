// The types, the workflow's validation and the shipped schemas must agree: every case of one
// corpus of good and bad inputs is accepted by both the workflow's own check and a standard JSON
// Schema validator (Ajv, draft 2020-12, reading schemas/), or refused by both. The corpus is the
// hand-written cases below plus mutations derived from the schemas themselves: every bound
// crossed and met, every field removed, nulled, retyped, blanked, lengthened or joined by an
// unknown one. A bound or field changed on one side only fails here.
// Unit tests: no Temporal server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { instructionProblems, taskInputProblems } from '../src/contract/input-problems';
import { nextInputRequestProblems } from '../src/contract/input-waits';
import { codeProblems } from '../src/contract/one-time-codes';
import { runSavedTaskInputProblems } from '../src/contract/saved-task-input';
import { readSchema, schemaErrors, validatorOf } from './helpers/schemas';
import { schemaFile } from '../scripts/schemas';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { [key: string]: Json };
interface Case {
  label: string;
  value: unknown;
}

/** A valid input that sets every field, so that every field gets mutated. */
const FULL_TASK = {
  instructions: [{ action: 'Open https://example.com and read the title', type: 'natural_language' }],
  type: 'crawler_automation',
  project: 'test-project',
  geoLocation: { country: 'US', city: 'Boston', zipcode: '02101' },
  inspect: true,
  awaitable: false,
  // The shortest and the longest interval: any bound of one stays on the right side of the other.
  polling: {
    initialIntervalMs: 250,
    maxIntervalMs: 600_000,
    heartbeatTimeoutMs: 600_000,
    targetDetectionMs: 1_000,
    maxSpanMs: 3_600_000,
    inputSettleMs: 5_000,
    notFoundGraceMs: 30_000,
  },
  timeoutMs: 7_200_000,
  awaitingInputTimeoutMs: 1_800_000,
  codeInstructionTemplate: 'Enter the one-time code {code}',
  delivery: 'at-most-once',
  maxResultBytes: 262_144,
  stopRetryWindowMs: 1_800_000,
  activityOptions: {
    taskQueue: 'browserai-activities',
    priorityKey: 2,
    fairnessKey: 'tenant-a',
    fairnessWeight: 2.5,
    retry: { initialIntervalMs: 1_000, maximumIntervalMs: 30_000, backoffCoefficient: 2 },
  },
  notifyWorkflowId: 'parent-workflow',
  totpSecretName: 'github_ops',
  maxCodeAttempts: 3,
  webhook: { events: ['input.requested', 'task.finished'], reference: 'user:42/login' },
};
const { instructions: _i, type: _t, project: _p, ...FULL_OVERRIDES } = FULL_TASK;

/** Each contract type a caller sends, with the check the workflow runs on it and the corpus. */
const SENT: Record<string, { check: (value: never) => string[]; base: unknown; cases: Case[] }> = {
  BrowserTaskInput: {
    check: taskInputProblems,
    base: FULL_TASK,
    cases: [
      ...[
        ['minimal', {}],
        ['a lower-case country', { geoLocation: { country: 'gb' } }],
        ['UK, which is no ISO code', { geoLocation: { country: 'UK' } }],
        ['a country with spaces', { geoLocation: { country: ' US' } }],
        ['a three-letter country', { geoLocation: { country: 'USA' } }],
        ['script_automation', { type: 'script_automation' }],
        ['natural_language as a task type', { type: 'natural_language' }],
        ['a blank action', { instructions: [{ action: ' \t ' }] }],
        ['a second instruction without action', { instructions: [{ action: 'a' }, {}] }],
        ['a template without {code}', { codeInstructionTemplate: 'Type the code' }],
        ['a template that is only {code}', { codeInstructionTemplate: '{code}' }],
        ['at-least-once', { delivery: 'at-least-once' }],
        ['exactly-once', { delivery: 'exactly-once' }],
        ['notifyWorkflowId false', { notifyWorkflowId: false }],
        ['notifyWorkflowId true', { notifyWorkflowId: true }],
        ['a retry with maximumAttempts', { activityOptions: { retry: { maximumAttempts: 3 } } }],
        ['resume, which only continue-as-new sets', { resume: { executionId: 'x' } }],
        ['a fairness key of 64 bytes', { activityOptions: { fairnessKey: 'k'.repeat(64) } }],
        [
          'the initial poll interval above the longest',
          { polling: { initialIntervalMs: 40_000, maxIntervalMs: 20_000 } },
        ],
        ['a fairness key of 64 characters, 128 bytes', { activityOptions: { fairnessKey: 'é'.repeat(64) } }],
        ['a TOTP secret name with a dash', { totpSecretName: 'git-hub' }],
        ['a TOTP secret name of 64 characters', { totpSecretName: 'T'.repeat(64) }],
        ['a TOTP secret name of 65 characters', { totpSecretName: 'T'.repeat(65) }],
        ['a TOTP secret itself, with its padding', { totpSecretName: 'JBSWY3DPEHPK3PXP====' }],
        ['maxCodeAttempts 2.5', { maxCodeAttempts: 2.5 }],
        ['maxCodeAttempts "3"', { maxCodeAttempts: '3' }],
        ['an empty webhook choice (all events)', { webhook: {} }],
        ['no webhook events', { webhook: { events: [] } }],
        [
          'every webhook event',
          { webhook: { events: ['input.requested', 'task.finished', 'task.stop_not_confirmed'] } },
        ],
        ['an unknown webhook event', { webhook: { events: ['task.started'] } }],
        ['a webhook URL in the input', { webhook: { url: 'https://example.com/hooks' } }],
        ['webhook secrets in the input', { webhook: { secrets: ['whsec_x'] } }],
        ['a webhook reference of 128 characters', { webhook: { reference: 'r'.repeat(128) } }],
        ['a webhook reference of 129 characters', { webhook: { reference: 'r'.repeat(129) } }],
        ['a webhook reference with a space', { webhook: { reference: 'user 42' } }],
        ['a webhook reference with every allowed sign', { webhook: { reference: 'a.b_c:d/e@f+g=h-1' } }],
        ['a webhook reference with a newline at its end', { webhook: { reference: 'user-42\n' } }],
        ['webhook true', { webhook: true }],
      ].map(([label, fields]) => ({
        label: label as string,
        value: { ...minimalTask(), ...(fields as object) },
      })),
      { label: 'not an object', value: 'crawl example.com' },
      { label: 'an array', value: [minimalTask()] },
    ],
  },
  RunSavedTaskInput: {
    check: runSavedTaskInputProblems,
    base: { name: 'weekly report', overrides: FULL_OVERRIDES },
    cases: [
      { label: 'a name only', value: { name: 'weekly report' } },
      { label: 'the name "."', value: { name: '.' } },
      { label: 'the name " .. "', value: { name: ' .. ' } },
      { label: 'the name "..."', value: { name: '...' } },
      { label: 'instructions in the overrides', value: { name: 'n', overrides: { instructions: [{ action: 'x' }] } } },
      { label: 'a project in the overrides', value: { name: 'n', overrides: { project: 'other' } } },
      { label: 'a bad country in the overrides', value: { name: 'n', overrides: { geoLocation: { country: 'XX' } } } },
      { label: 'no name', value: { overrides: {} } },
    ],
  },
  // Signals and the update: their handlers check these fields and ignore any other.
  InstructionsMessage: {
    check: (message: { instructions?: unknown } | null) =>
      message && typeof message === 'object' ? instructionProblems(message.instructions) : ['not an object'],
    base: { instructions: [{ action: 'Open the next page', type: 'natural_language' }] },
    cases: [{ label: 'two instructions', value: { instructions: [{ action: 'a' }, { action: 'b' }] } }],
  },
  NextInputRequestMessage: {
    // As the update's handler reads it: a message that is no object has no fields.
    check: nextInputRequestProblems,
    base: { after: 3, waitMs: 60_000 },
    cases: [
      { label: 'no after', value: {} },
      { label: 'after 0', value: { after: 0 } },
      { label: 'after 1.5', value: { after: 1.5 } },
      { label: 'after 2.0', value: { after: 2.0 } },
      ...[999, 1_000, 300_000, 300_001, 1_500.5].map((waitMs) => ({ label: `waitMs ${waitMs}`, value: { waitMs } })),
    ],
  },
  CodeMessage: {
    check: (message: { code?: unknown } | null) =>
      message && typeof message === 'object' ? codeProblems(message.code) : ['not an object'],
    base: { code: '123456', force: true },
    cases: [
      ...[
        '123456',
        'AB-12-cd',
        'x'.repeat(64),
        'x'.repeat(65),
        '12 34',
        '12_34',
        '１２３４',
        '1234\n',
        '',
        '12',
        '123',
        '1-2-3',
        '12-34',
        '--1234--',
      ].map((code) => ({
        label: `the code ${JSON.stringify(code)}`,
        value: { code },
      })),
      { label: 'force as a string', value: { code: '123456', force: 'yes' } },
    ],
  },
};

const FORCE =
  'The submitCode handler takes anything but `true` as "not forced" (the code is typed once) rather than dropping the signal.';
/**
 * Where the two disagree on purpose, each with the reason (a label ending in `*` covers every case
 * it starts). The test fails when one of these no longer disagrees (the note is then stale) as
 * surely as when a new disagreement appears.
 */
const KNOWN_DIFFERENCES: Record<string, string> = {
  'BrowserTaskInput: the initial poll interval above the longest':
    'JSON Schema cannot compare two fields: the workflow refuses polling.initialIntervalMs > polling.maxIntervalMs.',
  'NextInputRequestMessage: input = *':
    'The update takes a null or bare-value argument (a nil pointer from Go, None from Python) as no fields, so it waits for any request instead of failing; the schema asks for an object.',
  'CodeMessage: force as a string': FORCE,
  'CodeMessage: force = *': FORCE,
};

function isKnown(label: string, known: string): boolean {
  return known.endsWith('*') ? label.startsWith(known.slice(0, -1)) : label === known;
}

function minimalTask() {
  return {
    instructions: [{ action: 'Open https://example.com' }],
    type: 'crawler_automation',
    project: 'p',
    geoLocation: { country: 'US' },
  };
}

/** Follows `$ref`s into the schema's `$defs`. */
function resolve(schema: Schema, root: Schema): Schema {
  let node = schema;
  while (typeof node.$ref === 'string')
    node = (root.$defs as Record<string, Schema>)[node.$ref.replace('#/$defs/', '')]!;
  return node;
}

/** Values to put in place of one that `schema` describes: at and across its bounds, of other types, blank, long. */
function replacements(schema: Schema, root: Schema): Case[] {
  const s = resolve(schema, root);
  const members = Array.isArray(s.anyOf) ? (s.anyOf as Schema[]).map((m) => resolve(m, root)) : [s];
  const out: Case[] = [{ label: 'null', value: null }];
  const types = new Set(members.flatMap((m) => (Array.isArray(m.type) ? m.type : [m.type])));
  if (!types.has('string')) out.push({ label: '"1000"', value: '1000' }, { label: '"true"', value: 'true' });
  if (!types.has('number') && !types.has('integer')) out.push({ label: '1', value: 1 });
  if (!types.has('boolean')) out.push({ label: 'true', value: true });
  if (!types.has('object')) out.push({ label: '{}', value: {} });
  if (!types.has('array')) out.push({ label: '[]', value: [] });
  for (const m of members) {
    if (m.type === 'boolean') out.push({ label: 'true', value: true }, { label: 'false', value: false });
    if (m.type === 'string') {
      for (const text of ['', ' ', ' \t\n ']) out.push({ label: JSON.stringify(text), value: text });
      if (Array.isArray(m.enum))
        for (const option of m.enum as string[])
          out.push(
            { label: JSON.stringify(option), value: option },
            { label: JSON.stringify(option.toUpperCase()), value: option.toUpperCase() },
          );
      const max = typeof m.maxLength === 'number' ? m.maxLength : 5_000;
      for (const [label, unit] of [
        ['"x"', 'x'],
        ['"😀"', '😀'],
      ] as const) {
        out.push({ label: `${label}×${max}`, value: unit.repeat(max) });
        if (typeof m.maxLength === 'number') out.push({ label: `${label}×${max + 1}`, value: unit.repeat(max + 1) });
      }
    }
    if (m.type === 'number' || m.type === 'integer') {
      const min = typeof m.minimum === 'number' ? m.minimum : -1;
      const max = typeof m.maximum === 'number' ? m.maximum : 1e12;
      const values = [min, max, min - 1, max + 1, min - Math.abs(min) * 0.001, max + Math.abs(max) * 0.001, -1e-6, 0];
      values.push(min + (max - min) / 2 + 0.5);
      for (const value of values) out.push({ label: String(value), value });
    }
  }
  const seen = new Set<string>();
  return out.filter((c) => !seen.has(c.label) && seen.add(c.label));
}

/** Every mutation of `value` (described by `schema`), each with the path it changed. */
function mutations(value: unknown, schema: Schema, root: Schema, path: string): Case[] {
  const s = resolve(schema, root);
  const here = path || 'input';
  const out = replacements(schema, root).map((c) => ({ label: `${here} = ${c.label}`, value: c.value }));
  if (value && typeof value === 'object' && !Array.isArray(value) && s.properties) {
    const object = value as Record<string, unknown>;
    const properties = s.properties as Record<string, Schema>;
    out.push({ label: `${here} + an unknown field`, value: { ...object, unexpectedField: 1 } });
    for (const key of Object.keys(object)) {
      const { [key]: _removed, ...without } = object;
      out.push({ label: `${here} without ${key}`, value: without });
      const child = properties[key];
      if (!child) continue;
      for (const c of mutations(object[key], child, root, path ? `${path}.${key}` : key))
        out.push({ label: c.label, value: { ...object, [key]: c.value } });
    }
  }
  if (Array.isArray(value) && value.length > 0 && s.items) {
    out.push({ label: `${here} = []`, value: [] });
    out.push({ label: `${here} + null`, value: [...value, null] });
    for (const c of mutations(value[0], s.items as Schema, root, `${here}[0]`))
      out.push({ label: c.label, value: [c.value, ...value.slice(1)] });
  }
  return out;
}

for (const [type, { check, base, cases }] of Object.entries(SENT)) {
  test(`${type}: the workflow's check and ${schemaFile(type)} accept and refuse the same inputs`, () => {
    const root = readSchema(schemaFile(type)) as Schema;
    const validate = validatorOf(type);
    const corpus = [{ label: 'the full input', value: base }, ...cases, ...mutations(base, root, root, '')];
    const disagreements: string[] = [];
    let accepted = 0;
    for (const { label, value } of corpus) {
      const problems = check(structuredClone(value) as never);
      const schemaSays = validate(value);
      if (schemaSays) accepted++;
      if (schemaSays !== (problems.length === 0)) {
        disagreements.push(
          `${type}: ${label}` +
            (schemaSays
              ? `\n    schema accepts; the workflow refuses: ${problems.join('; ')}`
              : `\n    the workflow accepts; schema refuses: ${schemaErrors(validate)}`),
        );
      }
    }
    const known = Object.keys(KNOWN_DIFFERENCES).filter((label) => label.startsWith(`${type}: `));
    const labelOf = (disagreement: string) => disagreement.split('\n')[0]!;
    const unexpected = disagreements.filter((d) => !known.some((k) => isKnown(labelOf(d), k)));
    const gone = known.filter((k) => !disagreements.some((d) => isKnown(labelOf(d), k)));
    assert.deepEqual(unexpected, [], `${unexpected.length} of ${corpus.length} cases disagree`);
    assert.deepEqual(gone, [], 'known differences that no longer differ: remove them from KNOWN_DIFFERENCES');
    // The corpus exercises both answers, not just one.
    assert.ok(accepted > 5 && accepted < corpus.length - 5, `${accepted} of ${corpus.length} accepted`);
  });
}
