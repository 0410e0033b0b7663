// Determinism across releases. Every release's recorded histories (test/histories/<version>/, made by
// `npm run record-histories` and frozen once the release is dated in CHANGELOG.md) replay against
// the current workflow code: a change that would make workflows of any release still running
// diverge from their history fails here, not in production. And the `replay` command does the same
// for histories a team exports from its own cluster with the real `temporal` CLI.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { HISTORIES_DIR, listedVersions, packageVersion, releasedVersions } from '../dev/releases';
import { findTemporalCli } from '../dev/temporal-cli';
import { replayHistoryFiles, type ReplayReport } from '../src/replay/replay';
import { startStack, taskInput, workflowBundle, type Stack } from './helpers/stack';

const CLI = resolve(__dirname, '../src/cli/main.js');
const run = promisify(execFile);

const historyFiles = (version: string): string[] =>
  readdirSync(join(HISTORIES_DIR, version))
    .filter((f) => f.endsWith('.history.json'))
    .map((f) => join(HISTORIES_DIR, version, f));

async function replayAll(files: string[]): Promise<ReplayReport[]> {
  const reports: ReplayReport[] = [];
  for await (const report of replayHistoryFiles(files, { workflowBundle: await workflowBundle() }))
    reports.push(report);
  return reports;
}

describe('recorded histories of every release', () => {
  const versions = readdirSync(HISTORIES_DIR).filter((name) => /^\d+\.\d+\.\d+/.test(name));

  test('every released version, and the version in the making, has its recorded histories', () => {
    for (const version of new Set([...releasedVersions(), packageVersion()])) {
      assert.ok(versions.includes(version), `test/histories/${version}/ is missing: run npm run record-histories`);
      assert.ok(historyFiles(version).length >= 6, `test/histories/${version}/ holds too few histories`);
    }
    for (const version of versions)
      assert.ok(listedVersions().includes(version), `test/histories/${version}/ belongs to no CHANGELOG.md entry`);
  });

  test('a version is released once CHANGELOG.md dates it (record-histories then refuses to record it again)', () => {
    const changelog = '# Changelog\n\n## [0.2.0] - Unreleased\n\n- next\n\n## [0.1.0] - 2026-01-05\n\n- first\n';
    assert.deepEqual(releasedVersions(changelog), ['0.1.0']);
    assert.deepEqual(listedVersions(changelog), ['0.2.0', '0.1.0']);
  });

  for (const version of versions) {
    test(`${version}: every history replays against the current code without non-determinism`, async () => {
      const files = historyFiles(version);
      const reports = await replayAll(files);
      assert.equal(reports.length, files.length);
      for (const report of reports) assert.equal(report.outcome, 'replayed', `${report.file}: ${report.detail}`);
    });
  }
});

describe('the replay command, on a history the temporal CLI exported', () => {
  let stack: Stack;
  let exported: string;
  const dir = mkdtempSync(join(tmpdir(), 'browserai-replay-'));

  before(async () => {
    stack = await startStack();
    const handle = await stack.tasks.start(taskInput(), { workflowId: `exported-${Date.now()}` });
    await handle.result();
    exported = join(dir, 'exported.json');
    // As a team would export one of its workflows: `temporal workflow show --output json -w ID > h.json`.
    const json = execFileSync(
      findTemporalCli()!,
      [
        'workflow',
        'show',
        '--output',
        'json',
        '-w',
        handle.workflowId,
        '--address',
        stack.env.address,
        '--namespace',
        stack.env.namespace ?? 'default',
      ],
      { encoding: 'utf8' },
    );
    writeFileSync(exported, json);
  });
  after(() => stack?.stop());

  const replay = async (...args: string[]) => {
    try {
      // A replay that hangs (as the SDK's does on a history it cannot read) fails the test instead of holding it.
      const { stdout } = await run(process.execPath, [CLI, 'replay', ...args], {
        env: { ...process.env },
        timeout: 120_000,
      });
      return { code: 0, stdout };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  test("the SDK's own JSON reader fails on it in this install (why src/replay/history-json.ts exists)", () => {
    // If this starts passing after an SDK upgrade, the workaround can go (docs/design/history-json.md, "The workaround").
    assert.throws(() => historyFromJSON(JSON.parse(readFileSync(exported, 'utf8'))), /type must be a Type/);
  });

  test('it replays against this version: exit 0, one line per history', async () => {
    const { code, stdout } = await replay(exported);
    assert.equal(code, 0, stdout);
    assert.match(stdout, /^ok +\S+exported\.json +exported-\d+ \(browserTask, \d+ events\)$/m);
    assert.match(stdout, /1 replayed, 0 nondeterministic, 0 failed, 0 unreadable/);
  });

  test('against a release that changed the command sequence: NONDETERMINISTIC, the event where it diverges, exit 1', async () => {
    const changed = resolve(__dirname, 'workflows/changed-workflows.js');
    const { code, stdout } = await replay(exported, '--workflows', changed);
    assert.equal(code, 1, stdout);
    assert.match(stdout, /^NONDETERMINISTIC +\S+exported\.json/m);
    assert.match(stdout, /at event \d+ \(EVENT_TYPE_\w+\): \[TMPRL1100\] Nondeterminism error/);
    assert.match(stdout, /put the change behind patched\(\)/);
  });

  test('the same change behind patched() replays; several files at once, an unreadable one reported (exit 2)', async () => {
    const patched = resolve(__dirname, 'workflows/patched-workflows.js');
    const notAHistory = join(dir, 'not-a-history.json');
    writeFileSync(notAHistory, '{"workflowId": "x"}');
    const { code, stdout } = await replay(exported, notAHistory, '--workflows', patched);
    assert.equal(code, 2, stdout);
    assert.match(stdout, /^ok +\S+exported\.json/m);
    assert.match(stdout, /^UNREADABLE +\S+not-a-history\.json\n +.*temporal workflow show --output json/m);
    assert.match(stdout, /1 replayed, 0 nondeterministic, 0 failed, 1 unreadable/);
    assert.ok(existsSync(exported));
  });

  test('a history cut at its start is unreadable, one the replayer stops on is named at the deadline; no hang', async () => {
    const whole = JSON.parse(readFileSync(exported, 'utf8')) as { events: Array<{ eventType: string }> };
    const write = (name: string, events: unknown[]) => {
      writeFileSync(join(dir, name), JSON.stringify({ ...whole, events }));
      return join(dir, name);
    };
    // Its first event is not WorkflowExecutionStarted: the SDK's replayer panics, and never ends, on it.
    const cut = write('cut.json', whole.events.slice(1));
    // A workflow task started and never completed: the replayer panics on this one too.
    const completed = whole.events.findIndex((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED');
    const broken = write('broken.json', whole.events.toSpliced(completed, 1));
    const { code, stdout } = await replay(exported, cut, broken, exported, '--timeout-ms', '3000');
    assert.equal(code, 1, stdout);
    assert.match(
      stdout,
      /^UNREADABLE +\S+cut\.json\n +not a whole workflow history: its first event \(EVENT_TYPE_WORKFLOW_TASK_SCHEDULED\)/m,
    );
    assert.match(stdout, /^ok +\S+exported\.json/m);
    assert.match(stdout, /^FAILED +\S+broken\.json .*\n +the replay did not finish within 3000 ms/m);
    assert.match(stdout, /^FAILED +\S+exported\.json\n +not replayed: the replay stopped at \S+broken\.json/m);
    assert.match(stdout, /1 replayed, 0 nondeterministic, 2 failed, 1 unreadable/);
  });
});
