// Lint: typescript-eslint's recommended rules, the promise and type-import rules this project
// relies on, the layers of src (no import upwards, no import cycle, type-only imports counted),
// and the workflow sandbox's rules for src/workflows (and the Nexus contract).
// Formatting is Prettier's alone (`npm run lint` runs both).
import js from '@eslint/js';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import house from './scripts/eslint-import-cycle.mjs';

/**
 * The layers of src, bottom up (docs/design/architecture.md): each imports only the ones below it,
 * type-only imports counted (import-x/no-restricted-paths sees `import type` and require()). Every
 * folder of src has its zone (test/layers-lint.test.ts checks that a new one gets one). `src/contract`
 * is what every layer shares; the files at the top of src are the entry points and the worker's
 * wiring, and nothing in a folder imports them.
 */
const layer = (target, mayImport, why) => ({
  target: `./src/${target}`,
  from: './src',
  except: mayImport.map((path) => `./${path}`),
  message: why,
});
/** What sits below the callers' surfaces (starters, nexus, mcp, inbox): none of them is the worker. */
const belowCallers = ['contract', 'browserai', 'telemetry', 'schedules', 'codec'];
export const layers = [
  layer('contract', ['contract'], 'src/contract is the bottom layer: it imports nothing else from src.'),
  layer('browserai', ['contract', 'browserai'], 'The BrowserAI client imports only src/contract.'),
  layer(
    'telemetry',
    ['contract', 'browserai', 'telemetry'],
    'Telemetry serves the layers above: it imports only src/contract and src/browserai.',
  ),
  layer(
    'activities',
    ['contract', 'browserai', 'telemetry', 'activities'],
    'Activities import src/contract, src/browserai and src/telemetry only: what the workflows also need belongs in src/contract.',
  ),
  layer(
    'workflows',
    ['contract', 'browserai', 'activities', 'telemetry/names.ts', 'workflows'],
    'Workflows import src/contract, src/browserai (pure modules), activity types and metric names only.',
  ),
  layer('emulator', ['contract', 'emulator'], 'The emulator stands aside: it imports only src/contract.'),
  layer('codec', ['contract', 'codec'], 'Payload encryption and its codec server import only src/contract.'),
  layer('schedules', ['contract', 'schedules'], 'The cron rules import only src/contract.'),
  layer('replay', ['contract', 'codec', 'replay'], 'Replaying histories imports only src/contract and src/codec.'),
  layer(
    'config',
    ['contract', 'browserai', 'telemetry', 'activities', 'config'],
    'Settings read the environment for the layers above; they import the layers they configure (contract, browserai, telemetry, activities) only.',
  ),
  layer(
    'starters',
    [...belowCallers, 'workflows', 'config/temporal.ts', 'starters'],
    'The client API imports the workflows, the layers below them and the Temporal connection only (never the activities or the worker settings: a service that starts tasks loads no worker code).',
  ),
  layer(
    'nexus',
    [...belowCallers, 'workflows', 'config', 'starters', 'nexus'],
    'The Nexus service stands on the client API: it imports src/starters and below, never the CLI, MCP or the inbox.',
  ),
  layer(
    'mcp',
    [...belowCallers, 'config', 'starters', 'mcp'],
    'The MCP server stands on the client API: it imports src/starters and below, never the CLI, Nexus or the inbox.',
  ),
  layer(
    'inbox',
    [...belowCallers, 'activities', 'config', 'starters', 'inbox'],
    'The inbox stands on the client API: it imports src/starters and below, never the CLI, Nexus or MCP.',
  ),
  layer(
    'cli',
    [...belowCallers, 'activities', 'workflows', 'replay', 'config', 'starters', 'nexus', 'mcp', 'inbox', 'cli'],
    'The CLI is the top layer: nothing in src imports it, and it imports neither the emulator nor the files at the top of src.',
  ),
  {
    target: './src/!(worker|plugin).ts',
    from: ['./src/worker.ts', './src/plugin.ts'],
    message: 'worker.ts and plugin.ts wire the layers together: nothing in src imports them.',
  },
  {
    target: './src/*/**',
    from: './src/*.ts',
    message:
      "The files at the top of src are the entry points and the worker's wiring: nothing in a folder imports them.",
  },
];

/** The SDK's files behind its published entry points: they change without notice between releases. */
const sdkInternals = {
  regex: '^@temporalio/[^/]+/lib/',
  message:
    "Shipped code imports the Temporal SDK's published entry points only (`@temporalio/common`, ...): files under lib/ are internal and change without notice.",
};

/** What Temporal's workflow sandbox forbids: workflow code must be deterministic and do no I/O. */
const notInWorkflows = {
  patterns: [
    sdkInternals,
    {
      regex: '^node:',
      message: 'Workflow code runs in the sandbox: no Node built-ins. Do the work in an activity.',
    },
    {
      group: ['axios', '@temporalio/activity', '@temporalio/client', '@temporalio/worker', '@temporalio/testing'],
      message:
        'Workflow code runs in the sandbox: no HTTP client, activity context, Temporal client or worker. Call an activity through proxyActivities.',
    },
    {
      // The BrowserAI client and its index (which pulls the HTTP client in); the pure modules
      // beside it (status, redact, types, errors) are workflow-safe.
      regex: '(^|/)browserai(/(index|client|proxy|pacer|request-span|answers))?$',
      message:
        'Workflow code must not import the BrowserAI client: call its activities (activity types only, through proxyActivities).',
      allowTypeImports: true,
    },
    {
      // Activities are imported as types only: the implementations run on the worker, not in the sandbox.
      regex: '^(\\.\\./)+activities(/.*)?$',
      message: 'Workflows import activity types only (import type ...), and call them through proxyActivities.',
      allowTypeImports: true,
    },
  ],
  paths: [
    'assert',
    'buffer',
    'child_process',
    'crypto',
    'dns',
    'events',
    'fs',
    'http',
    'https',
    'net',
    'os',
    'path',
    'process',
    'stream',
    'timers',
    'url',
    'util',
    'worker_threads',
    'zlib',
  ].map((name) => ({ name, message: 'Workflow code runs in the sandbox: no Node built-ins.' })),
};

export default tseslint.config(
  { ignores: ['lib/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX, house },
    settings: {
      // no-cycle parses each imported file: TypeScript ones with typescript-eslint's parser.
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.mjs', '.d.ts'] })],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's test() and describe() return promises the runner itself awaits.
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] },
          ],
        },
      ],
      // `typeof import('...')` stays allowed: it types the CLI's and tracing's lazily loaded modules.
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      'import-x/no-cycle': 'error',
      // `declare namespace` only: a client's types by name (`BrowserTasks.StartOptions`, docs/design/public-surface.md).
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      // A leading underscore marks what is unused on purpose (a rest sibling left out, a parameter kept for its position).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: layers }],
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [sdkInternals] }],
    },
  },
  {
    // import-x/no-cycle skips type-only imports: this one counts them (the bench's and dev's too).
    files: ['src/**/*.ts', 'bench/**/*.ts', 'dev/**/*.ts'],
    rules: { 'house/import-cycle': 'error' },
  },
  {
    // Tests poke at untyped answers on purpose (a malformed body, a raw history).
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The Nexus service contract and the agent tool are imported by callers' workflows: the same sandbox rules.
    files: ['src/workflows/**/*.ts', 'src/nexus/service.ts', 'src/nexus/index.ts', 'src/agent-tool.ts'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': ['error', notInWorkflows],
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
