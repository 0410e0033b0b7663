// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned; it runs offline)
// against the HTTP server, for both protocol generations: every scenario that applies to a server
// without the suite's own fixture tools, prompts and resources. docs/mcp.md lists what runs and
// what is skipped, with the reason; this file is where the lists live, and it checks the page
// names each scenario. A check the suite makes with its fixture tools inside a scenario that runs
// is excluded by its ID, with the reason.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { startMcpHttpServer, type McpHttpServer } from '../src/mcp';
import { startStack, type Stack } from './helpers/stack';

const SUITE = require.resolve('@modelcontextprotocol/conformance/dist/index.js');

/** What runs, per protocol version, and the checks of theirs that need the suite's fixtures. */
export const RUN: Record<string, Record<string, Record<string, string>>> = {
  '2025-11-25': {
    'server-initialize': {},
    'server-session-lifecycle': {},
    ping: {},
    'tools-list': {},
    'dns-rebinding-protection': {},
    'server-sse-multiple-streams': {},
  },
  '2026-07-28': {
    'server-stateless': {
      'sep-2575-server-rejects-undeclared-capability': 'calls the fixture tool test_missing_capability',
      'sep-2575-missing-capability-http-400': 'calls the fixture tool test_missing_capability',
    },
    'tools-list': {},
    caching: {
      'sep-2549-prompts-list-caching-hints': 'the server offers no prompts',
      'sep-2549-resources-list-caching-hints': 'the server offers no resources',
      'sep-2549-resources-templates-list-caching-hints': 'the server offers no resources',
    },
    'http-header-validation': {},
    'dns-rebinding-protection': {},
    'server-sse-multiple-streams': {},
    'input-required-result-unsupported-methods': {},
  },
};

let stack: Stack;
let http: McpHttpServer;
let results: string;

before(async () => {
  stack = await startStack();
  http = await startMcpHttpServer({ tasks: stack.tasks, port: 0 });
  results = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
});

after(async () => {
  await http?.close();
  await stack?.stop();
  rmSync(results, { recursive: true, force: true });
});

for (const [version, scenarios] of Object.entries(RUN)) {
  describe(`MCP conformance, ${version}`, () => {
    for (const [scenario, excluded] of Object.entries(scenarios)) {
      test(scenario, async () => {
        const out = join(results, `${version}-${scenario}`);
        const run = await promisify(execFile)(
          process.execPath,
          [SUITE, 'server', '--url', http.url, '--scenario', scenario, '--spec-version', version, '-o', out],
          { timeout: 60_000 },
        ).catch((err: { stdout?: string; stderr?: string }) => err);
        const [dir] = existsSync(out) ? readdirSync(out) : [];
        assert.ok(dir, `the suite wrote no results: ${run.stdout ?? ''}${run.stderr ?? ''}`);
        const checks = JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as Array<{
          id: string;
          status: string;
          errorMessage?: string;
        }>;
        assert.ok(checks.length > 0);
        const failed = checks.filter((c) => c.status === 'FAILURE' && !(c.id in excluded));
        assert.deepEqual(
          failed.map((c) => `${c.id}: ${c.errorMessage}`),
          [],
        );
        for (const id of Object.keys(excluded))
          assert.ok(
            checks.some((c) => c.id === id),
            `excluded check ${id} is still the suite's`,
          );
      });
    }
  });
}

test('docs/mcp.md lists every scenario that runs', () => {
  const page = readFileSync(join(__dirname, '..', '..', 'docs', 'mcp.md'), 'utf8');
  for (const scenarios of Object.values(RUN))
    for (const scenario of Object.keys(scenarios)) assert.ok(page.includes(`\`${scenario}\``), scenario);
});
