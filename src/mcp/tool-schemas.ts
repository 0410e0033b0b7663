// The tools' inputSchema and outputSchema, read from the package's schemas/ (contract group `mcp`,
// generated from src/mcp/contract.ts by `npm run schemas`): the server serves the contract itself.
// MCP wants an object schema at the top, and clients validate with draft-07 validators, so the
// named definition is lifted to the top (its siblings stay in `$defs`) and `$schema` is left out.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** schemas/ of this package, from lib/src/mcp/. */
const SCHEMAS_DIR = join(__dirname, '..', '..', '..', 'schemas');

type JsonObject = Record<string, unknown>;

export interface ToolSchemas {
  inputSchema: JsonObject & { type: 'object' };
  outputSchema: JsonObject & { type: 'object' };
}

/** Each MCP tool's schemas, by tool name, as contract.json's `mcp` group lists them. */
export function loadToolSchemas(dir = SCHEMAS_DIR): Map<string, ToolSchemas> {
  const contract = JSON.parse(readFileSync(join(dir, 'contract.json'), 'utf8')) as {
    mcp: Record<string, { input: string; result: string }>;
  };
  const tools = new Map<string, ToolSchemas>();
  for (const [tool, files] of Object.entries(contract.mcp)) {
    tools.set(tool, {
      inputSchema: asToolSchema(join(dir, files.input)),
      outputSchema: asToolSchema(join(dir, files.result)),
    });
  }
  return tools;
}

function asToolSchema(file: string): JsonObject & { type: 'object' } {
  const {
    $schema: _draft,
    $comment: _generated,
    $ref,
    $defs,
    title,
    ...rest
  } = JSON.parse(readFileSync(file, 'utf8')) as JsonObject & {
    $ref: string;
    $defs: Record<string, JsonObject>;
    title: string;
  };
  const name = $ref.replace('#/$defs/', '');
  const { [name]: top, ...others } = $defs;
  if (!top || top.type !== 'object') throw new Error(`${file}: ${name} is not an object schema`);
  // References to the lifted definition would now dangle: it is the root.
  const text = JSON.stringify({ ...rest, title, ...top, $defs: others }).replaceAll(`"#/$defs/${name}"`, '"#"');
  const schema = JSON.parse(text) as JsonObject & { type: 'object'; $defs: JsonObject };
  if (Object.keys(schema.$defs).length === 0) delete (schema as JsonObject).$defs;
  return schema;
}
