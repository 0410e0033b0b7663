// The contract as data: JSON Schema (draft 2020-12) for every shape a caller of the workflows
// touches, generated from the TypeScript types and their JSDoc (descriptions, and bounds as
// `@minimum`, `@maximum`, `@pattern`... tags), so the types stay the one source of truth.
// `npm run schemas` writes them to schemas/ (shipped as `browserai-temporal/schemas/*`);
// test/schemas.test.ts fails when the committed files differ from freshly generated ones, and
// test/schema-corpus.test.ts when the workflow's validation and the schemas disagree.
import { writeFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createGenerator, type Config } from 'ts-json-schema-generator';
import { FailureType } from '../src/contract/errors';
import { TASK_INPUT_FIELDS } from '../src/contract/input';
import { ISO_COUNTRY_CODES } from '../src/contract/iso-countries';
import {
  addInstructionsUpdate,
  appendInstructionsSignal,
  browserTaskAwaitingInputSignal,
  completeSignal,
  executionIdUpdate,
  nextInputRequestUpdate,
  replaceInstructionsSignal,
  stateQuery,
  submitCodeSignal,
} from '../src/contract/messages';
import { WEBHOOK_EVENT_TYPES } from '../src/contract/input';

export const ROOT = join(__dirname, '..', '..');
export const SCHEMAS_DIR = join(ROOT, 'schemas');

/** What a schema is to its message: what the receiver is sent, what it answers, how it fails; a webhook's body; an object on its own. */
type Role = 'input' | 'result' | 'failure' | 'body' | 'schema';

/**
 * Who talks to whom, and with which shape (a TypeScript type name). Adding a message or a notice
 * is one line here: its schema file follows from the type's name. A workflow's input is closed:
 * the workflow refuses unknown fields. A signal's or update's argument is open at its top only:
 * the handlers ignore fields they do not know, but check what they pass on (instructions) as the
 * workflow input is checked. What a caller receives (results, answers, notices, webhook bodies,
 * failures) is open: a later release may add fields.
 */
export const CONTRACT = {
  workflows: {
    browserTask: { input: 'BrowserTaskInput', result: 'BrowserTaskResult', failure: 'WorkflowFailure' },
    runSavedTask: { input: 'RunSavedTaskInput', result: 'BrowserTaskResult', failure: 'WorkflowFailure' },
  },
  signals: {
    [appendInstructionsSignal.name]: { input: 'InstructionsMessage' },
    [replaceInstructionsSignal.name]: { input: 'InstructionsMessage' },
    [submitCodeSignal.name]: { input: 'CodeMessage' },
    [completeSignal.name]: {},
  },
  updates: {
    [addInstructionsUpdate.name]: { input: 'InstructionsMessage', result: 'TaskExecutionAnswer' },
    [executionIdUpdate.name]: { result: 'ExecutionId' },
    [nextInputRequestUpdate.name]: { input: 'NextInputRequestMessage', result: 'InputRequestWait' },
  },
  queries: {
    [stateQuery.name]: { result: 'BrowserTaskState' },
  },
  /** Signals browserTask sends to the workflow that should act on them (its parent, or `notifyWorkflowId`). */
  notices: {
    [browserTaskAwaitingInputSignal.name]: { input: 'AwaitingInputNotice' },
  },
  /** The `browserai` Nexus service's operations (src/nexus/service.ts), for callers in other namespaces and languages. */
  nexus: {
    runTask: { input: 'RunTaskInput', result: 'BrowserTaskResult' },
    submitCode: { input: 'SubmitCodeInput' },
    state: { input: 'TaskStateInput', result: 'BrowserTaskState' },
  },
  /** The tools of `browserai-temporal mcp` (src/mcp): each tool's arguments and its structured result. */
  mcp: {
    run_task: { input: 'McpRunTaskInput', result: 'McpTaskReport' },
    run_saved_task: { input: 'McpRunSavedTaskInput', result: 'McpTaskReport' },
    get_task: { input: 'McpTaskRef', result: 'McpTaskReport' },
    submit_code: { input: 'McpSubmitCodeInput', result: 'McpTaskReport' },
    add_instructions: { input: 'McpAddInstructionsInput', result: 'McpTaskReport' },
    end_session: { input: 'McpTaskRef', result: 'McpTaskReport' },
    cancel_task: { input: 'McpTaskRef', result: 'McpTaskReport' },
    list_waiting_tasks: { input: 'McpListInput', result: 'McpWaitingTasks' },
    list_my_tasks: { input: 'McpListInput', result: 'McpRecentTasks' },
  },
  /** The `browserTask` tool for agent workflows' models (src/workflows/agent-tool.ts): its arguments and its answer. */
  agentTools: {
    browserTask: { input: 'BrowserTaskToolArgs', result: 'BrowserTaskToolResult' },
  },
  /** What the worker POSTs to its webhook destination, by event type (`WebhookBody` is their union). */
  webhooks: Object.fromEntries(WEBHOOK_EVENT_TYPES.map((type) => [type, { body: 'WebhookBody' }])),
  /** The objects several of the above carry, each in a file of its own for callers' types to be checked against. */
  objects: {
    InputRequest: { schema: 'InputRequest' },
    TaskFinished: { schema: 'TaskFinished' },
  },
} as const satisfies Record<string, Record<string, Partial<Record<Role, string>>>>;

type Openness = 'closed' | 'open at the top' | 'open';

/** Each type named in the contract, and how open its schema is (see CONTRACT). */
export function contractTypes(): Map<string, Openness> {
  const types = new Map<string, Openness>();
  for (const [group, entries] of Object.entries(CONTRACT)) {
    for (const roles of Object.values(entries) as Partial<Record<Role, string>>[]) {
      for (const [role, type] of Object.entries(roles) as [Role, string][]) {
        const kind: Openness =
          role !== 'input' || group === 'notices' ? 'open' : group === 'workflows' ? 'closed' : 'open at the top';
        if ((types.get(type) ?? kind) !== kind)
          throw new Error(`${type} is used both as ${types.get(type)} and ${kind}: give each use its own type`);
        types.set(type, kind);
      }
    }
  }
  return types;
}

/** `BrowserTaskInput` -> `browser-task-input.schema.json`. */
export function schemaFile(type: string): string {
  return `${type.replace(/(?<=[a-z0-9])(?=[A-Z])/g, '-').toLowerCase()}.schema.json`;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Every file of schemas/, by name: one schema per contract type, and contract.json, the index. */
export function generateSchemas(): Map<string, string> {
  const config: Config = {
    path: join(ROOT, 'src', '**', '*.ts'),
    tsconfig: join(ROOT, 'tsconfig.json'),
    expose: 'export',
    topRef: true,
    jsDoc: 'extended',
    // Types are checked by `npm run typecheck`; here they are only read.
    skipTypeCheck: true,
    encodeRefs: false,
    extraTags: ['not'],
  };
  const generator = createGenerator(config);
  const files = new Map<string, string>();
  for (const [type, kind] of contractTypes()) {
    // A deep copy: the generator shares definitions between the schemas it makes.
    const schema = toDraft2020(structuredClone(generator.createSchema(type)) as JsonObject);
    if (kind === 'open') open(schema);
    if (kind === 'open at the top') delete ((schema.$defs as JsonObject)[type] as JsonObject).additionalProperties;
    refine(schema);
    const ordered: JsonObject = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $comment: 'Generated from the TypeScript types of browserai-temporal by `npm run schemas`: do not edit.',
      title: type,
      ...schema,
    };
    files.set(schemaFile(type), `${JSON.stringify(ordered, null, 2)}\n`);
  }
  files.set('contract.json', `${JSON.stringify(contractIndex(), null, 2)}\n`);
  return files;
}

/** The index: each workflow, signal, update, query and notice with its schema files, and the failure types. */
function contractIndex(): JsonObject {
  const index: JsonObject = {
    $comment:
      'browserai-temporal: what each workflow, signal, update, query and notice takes and gives, by schema file. ' +
      'Generated by `npm run schemas`: do not edit.',
  };
  for (const [group, entries] of Object.entries(CONTRACT)) {
    const out: JsonObject = {};
    for (const [name, roles] of Object.entries(entries) as [string, Partial<Record<Role, string>>][]) {
      out[name] = Object.fromEntries(Object.entries(roles).map(([role, type]) => [role, schemaFile(type)]));
    }
    index[group] = out;
  }
  index.failureTypes = Object.values(FailureType);
  return index;
}

/** ts-json-schema-generator writes draft-07: `definitions`, and tuples as an `items` array. */
function toDraft2020(schema: JsonObject): JsonObject {
  const { $schema: _draft07, definitions, ...rest } = schema;
  const converted = walk({ ...rest, ...(definitions ? { $defs: definitions } : {}) }, (node) => {
    if (typeof node.$ref === 'string') node.$ref = node.$ref.replace('#/definitions/', '#/$defs/');
    if (Array.isArray(node.items)) {
      node.prefixItems = node.items;
      delete node.items;
      if ('additionalItems' in node) {
        node.items = node.additionalItems!;
        delete node.additionalItems;
      } else if (node.maxItems === undefined) node.items = false;
    }
    // The generator renders `{@link X}` as " X ": the spaces go.
    if (typeof node.description === 'string')
      node.description = node.description
        .replace(/\{@link\s+(\S+?)\s*\}/g, '$1')
        .replace(/ {2,}/g, ' ')
        .replace(/ (?=[.,;:)])/g, '');
  });
  const text = JSON.stringify(converted);
  for (const draft07 of ['"definitions"', '"additionalItems"', '"dependencies"', 'draft-07'])
    if (text.includes(draft07)) throw new Error(`The draft 2020-12 conversion left ${draft07} in a schema`);
  return converted;
}

/** No `additionalProperties: false`: see CONTRACT. */
function open(schema: JsonObject): void {
  walk(schema, (node) => {
    if (node.additionalProperties === false) delete node.additionalProperties;
  });
}

/**
 * What a type cannot say and a JSDoc tag should not repeat: the bounds of `browserTask`'s fields,
 * from the table the workflow checks them by, and the country must be one of the workflow's own
 * ISO 3166-1 list (in either case: the workflow upper-cases it).
 */
function refine(schema: JsonObject): void {
  bound(schema);
  const country = (
    ((schema.$defs as JsonObject | undefined)?.GeoLocation as JsonObject | undefined)?.properties as
      JsonObject | undefined
  )?.country as JsonObject | undefined;
  if (!country) return;
  const anyCase = [...ISO_COUNTRY_CODES]
    .sort()
    .map((code) => [...code].map((c) => `[${c}${c.toLowerCase()}]`).join(''))
    .join('|');
  country.pattern = `^(?:${anyCase})$`;
}

/** Each ranged field of `TASK_INPUT_FIELDS` gets its `minimum` and `maximum`, wherever the input or its overrides stand. */
function bound(schema: JsonObject): void {
  const defs = (schema.$defs ?? {}) as JsonObject;
  for (const name of ['BrowserTaskInput', 'SavedTaskOverrides']) {
    const properties = (defs[name] as JsonObject | undefined)?.properties as JsonObject | undefined;
    if (!properties) continue;
    for (const [field, spec] of Object.entries(TASK_INPUT_FIELDS)) {
      const property = properties[field] as JsonObject | undefined;
      if (!property || !('range' in spec)) continue;
      if ('minimum' in property || 'maximum' in property)
        throw new Error(`${name}.${field}: its bounds are in TASK_INPUT_FIELDS; remove its @minimum and @maximum tags`);
      [property.minimum, property.maximum] = spec.range;
    }
  }
}

function walk(node: Json, visit: (node: JsonObject) => void): JsonObject {
  if (Array.isArray(node)) node.forEach((item) => walk(item, visit));
  else if (node && typeof node === 'object') {
    visit(node);
    Object.values(node).forEach((value) => walk(value, visit));
  }
  return node as JsonObject;
}

/** `npm run schemas`: writes schemas/ afresh (files of types no longer in the contract are removed). */
function main(): void {
  const files = generateSchemas();
  mkdirSync(SCHEMAS_DIR, { recursive: true });
  for (const name of readdirSync(SCHEMAS_DIR)) if (!files.has(name)) rmSync(join(SCHEMAS_DIR, name));
  for (const [name, text] of files) writeFileSync(join(SCHEMAS_DIR, name), text);
  console.log(`Wrote ${files.size} files to schemas/`);
}

if (require.main === module) main();
