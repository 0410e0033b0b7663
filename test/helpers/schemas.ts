// The shipped schemas (schemas/, as committed), read by a standard JSON Schema validator: Ajv in
// its draft 2020-12 mode, strict, so a schema it would misread fails instead of passing anything.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import { SCHEMAS_DIR, schemaFile } from '../../scripts/schemas';

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
const compiled = new Map<string, ValidateFunction>();

export function readSchema(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(SCHEMAS_DIR, file), 'utf8')) as Record<string, unknown>;
}

/** The validator of a contract type's schema, e.g. `validatorOf('BrowserTaskInput')`. */
export function validatorOf(type: string): ValidateFunction {
  let validate = compiled.get(type);
  if (!validate) {
    validate = ajv.compile(readSchema(schemaFile(type)));
    compiled.set(type, validate);
  }
  return validate;
}

/** Ajv's errors, one line: for assertion messages. */
export function schemaErrors(validate: ValidateFunction): string {
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; ');
}

/** Throws with Ajv's errors unless `value` is valid against the contract type's schema. */
export function assertMatchesSchema(type: string, value: unknown, what = type): void {
  const validate = validatorOf(type);
  if (!validate(value)) throw new Error(`${what} does not match ${schemaFile(type)}: ${schemaErrors(validate)}`);
}
