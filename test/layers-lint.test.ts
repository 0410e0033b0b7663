// The lint rules that hold the layers of src (eslint.config.mjs, docs/design/architecture.md) do
// what they promise: every folder of src has a layer, an arrow back up fails (a type-only one too),
// and so does an import cycle made of type-only imports, which import-x/no-cycle would let through.
// ESLint's API on in-memory texts, without the type-aware rules; about a second.
// Unit tests: no Temporal server.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';

const ROOT = join(__dirname, '..', '..');

/** The project's layer zones and cycle rule alone, on what the files would say. */
async function problems(file: string, text: string): Promise<string[]> {
  const config = (await import(join(ROOT, 'eslint.config.mjs'))) as { layers: unknown[] };
  const { default: importX, createNodeResolver } = await import('eslint-plugin-import-x');
  const { default: house } = (await import(join(ROOT, 'scripts', 'eslint-import-cycle.mjs'))) as {
    default: ESLint.Plugin;
  };
  const { default: tseslint } = await import('typescript-eslint');
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: {
      files: ['**/*.ts'],
      languageOptions: { parser: tseslint.parser as never },
      plugins: { 'import-x': importX as never, house },
      settings: {
        'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.d.ts'] })],
      },
      rules: {
        'import-x/no-restricted-paths': ['error', { basePath: ROOT, zones: config.layers }],
        'house/import-cycle': 'error',
      },
    },
  });
  const [result] = await eslint.lintText(text, { filePath: join(ROOT, file) });
  return result!.messages.map((message) => `${message.ruleId}: ${message.message}`);
}

const source = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The problems of `file` with `lines` added at its top. */
const withLines = (file: string, ...lines: string[]) => problems(file, `${lines.join('\n')}\n${source(file)}`);

test('every folder of src has its layer', async () => {
  const config = (await import(join(ROOT, 'eslint.config.mjs'))) as { layers: Array<{ target: string }> };
  const zoned = new Set(config.layers.map((zone) => /^\.\/src\/([^/*!]+)$/.exec(zone.target)?.[1]));
  const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((entry) => entry.isDirectory());
  assert.deepEqual(
    folders.map((folder) => folder.name).filter((name) => !zoned.has(name)),
    [],
    'folders of src without a layer in eslint.config.mjs',
  );
});

test('the layers as they are pass', async () => {
  for (const file of [
    'src/contract/errors.ts',
    'src/activities/trim.ts',
    'src/workflows/details.ts',
    'src/config/worker.ts',
    'src/starters/tasks.ts',
    'src/nexus/fence.ts',
    'src/mcp/tool-calls.ts',
    'src/inbox/deliver.ts',
    'src/cli/batch-command.ts',
  ])
    assert.deepEqual(await problems(file, source(file)), [], file);
});

test('a type-only import from the contract up into the client fails', async () => {
  const found = await withLines(
    'src/contract/errors.ts',
    "import type { BrowserAIClient } from '../browserai/client';",
    'export type Up = BrowserAIClient;',
  );
  assert.ok(
    found.some((problem) => problem.includes('bottom layer')),
    found.join('\n'),
  );
});

test('an activity importing a workflow type fails', async () => {
  const found = await withLines(
    'src/activities/trim.ts',
    "import type { browserTask } from '../workflows/browser-task';",
    'export type Up = typeof browserTask;',
  );
  assert.ok(
    found.some((problem) => problem.startsWith('import-x/no-restricted-paths')),
    found.join('\n'),
  );
});

test('the MCP server importing the CLI fails', async () => {
  const found = await withLines(
    'src/mcp/server.ts',
    "import type { stopSentence } from '../cli/stop-sentence';",
    'export type Up = typeof stopSentence;',
  );
  assert.ok(
    found.some((problem) => problem.includes('The MCP server stands on the client API')),
    found.join('\n'),
  );
});

test('the settings importing the Nexus service fail, and the client API importing the worker settings', async () => {
  const fromConfig = await withLines(
    'src/config/worker.ts',
    "import type { NexusServiceOptions } from '../nexus/options';",
    'export type Up = NexusServiceOptions;',
  );
  assert.ok(
    fromConfig.some((problem) => problem.includes('Settings read the environment')),
    fromConfig.join('\n'),
  );
  const fromStarters = await withLines(
    'src/starters/tasks.ts',
    "import type { WorkerConfig } from '../config/worker';",
    'export type Worker = WorkerConfig;',
  );
  assert.ok(
    fromStarters.some((problem) => problem.includes('loads no worker code')),
    fromStarters.join('\n'),
  );
});

test('a folder importing a file at the top of src fails', async () => {
  const found = await withLines(
    'src/starters/tasks.ts',
    "import type { browserAIPreloadModules } from '../workflow-bundle';",
    'export type Up = typeof browserAIPreloadModules;',
  );
  assert.ok(
    found.some((problem) => problem.includes('nothing in a folder imports them')),
    found.join('\n'),
  );
});

test('a cycle of type-only imports fails', async () => {
  // snapshot.ts imports trim.ts; a type import back closes the circle.
  const found = await withLines(
    'src/activities/trim.ts',
    "import type { snapshotOf } from './snapshot';",
    'export type Back = typeof snapshotOf;',
  );
  assert.deepEqual(
    found.filter((problem) => problem.startsWith('house/import-cycle')),
    [
      'house/import-cycle: Import cycle (type-only imports count): src/activities/trim.ts -> src/activities/snapshot.ts -> src/activities/trim.ts. Move what both sides need down a layer (src/contract holds what every layer shares).',
    ],
  );
});
