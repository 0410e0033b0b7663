// The worker's memory settings are written in four places (dev/worker-child.ts for the bench, chaos
// and tests; the Dockerfile; docker-compose.yml's real-BrowserAI worker; `npm run worker`): what the
// bench measures must be what a deployment runs.
// Unit tests: no Temporal server.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { WORKER_MALLOC_ENV, WORKER_NODE_FLAGS } from '../dev/worker-child';
import { BrowserAIPlugin, browserAIPreloadModules } from '../src/plugin';

const root = resolve(__dirname, '../..');
const read = (file: string) => readFileSync(resolve(root, file), 'utf8');

test('the Dockerfile runs the worker with the node flags and malloc settings the bench measures', () => {
  const dockerfile = read('Dockerfile');
  // The exec form as written in the Dockerfile: ["node", "--flag", ..., "lib/src/worker.js"].
  const cmd = `CMD [${['node', ...WORKER_NODE_FLAGS, 'lib/src/worker.js'].map((arg) => JSON.stringify(arg)).join(', ')}]`;
  assert.ok(dockerfile.includes(cmd), cmd);
  for (const [name, value] of Object.entries(WORKER_MALLOC_ENV))
    assert.ok(dockerfile.includes(`ENV ${name}=${value}`), name);
});

test('docker-compose and `npm run worker` start the worker with the same flags and malloc settings', () => {
  const command = `node ${WORKER_NODE_FLAGS.join(' ')} lib/src/worker.js`;
  assert.ok(read('docker-compose.yml').includes(`exec ${command}`), 'docker-compose.yml');
  const script = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.worker!;
  assert.ok(script.endsWith(command), script);
  for (const [name, value] of Object.entries(WORKER_MALLOC_ENV))
    assert.ok(script.includes(`${name}=\${${name}:-${value}}`), name);
});

test('the plugin preloads our workflow modules when it bundles our workflows, and keeps preloads of its own', () => {
  const plugin = new BrowserAIPlugin({ browserAI: { apiToken: 'test-token' } });
  const ours = plugin.configureWorker({ taskQueue: 'q', bundlerOptions: { preloadModules: ['./theirs'] } });
  assert.equal(ours.workflowsPath, require.resolve('../src/workflows'));
  assert.deepEqual(ours.bundlerOptions?.preloadModules, ['./theirs', require.resolve('../src/workflows')]);
  assert.deepEqual(browserAIPreloadModules(), [require.resolve('../src/workflows')]);
  // A worker with workflows of its own chooses its own bundling (docs/your-own-worker.md shows the preload).
  const theirs = plugin.configureWorker({ taskQueue: 'q', workflowsPath: '/their/workflows.js' });
  assert.equal(theirs.bundlerOptions?.preloadModules, undefined);
});
