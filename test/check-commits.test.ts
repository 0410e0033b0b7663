// scripts/check-commits.mjs (CONTRIBUTING.md, "Commits") on throwaway repositories: what it checks,
// what it skips, and a shallow clone that lacks the base commit. Git only, no server; about a second.
// Unit tests: no Temporal server.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';

const SCRIPT = resolve(__dirname, '..', '..', 'scripts', 'check-commits.mjs');
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function git(cwd: string, args: string[], time = 1_000_000_000): string {
  const date = `@${time} +0000`;
  const result = spawnSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
  });
  assert.equal(result.status, 0, `git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
}

/** A repository whose first commit (long subject, no body) is the base; returns its path and the base. */
function repository(): { dir: string; base: string } {
  const dir = mkdtempSync(join(tmpdir(), 'check-commits-'));
  dirs.push(dir);
  git(dir, ['init', '-q', '-b', 'main']);
  git(dir, ['commit', '-q', '--allow-empty', '-m', `Old history with a subject far too long ${'x'.repeat(80)}`]);
  return { dir, base: git(dir, ['rev-parse', 'HEAD']) };
}

function commit(dir: string, message: string, time = 1_000_000_100): string {
  git(dir, ['commit', '-q', '--allow-empty', '-m', message], time);
  return git(dir, ['rev-parse', 'HEAD']);
}

function check(dir: string, base: string, baseTime = 1_000_000_000) {
  const result = spawnSync(process.execPath, [SCRIPT, '--base', base, '--base-time', String(baseTime)], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { status: result.status, output: result.stdout + result.stderr };
}

describe('check-commits', () => {
  test('passes commits with a short subject and a body, and ignores the history before the base', () => {
    const { dir, base } = repository();
    commit(dir, 'Add a thing\n\nBecause it was missing.');
    const result = check(dir, base);
    assert.equal(result.status, 0, result.output);
    assert.match(result.output, /1 commit\(s\) checked/);
  });

  test('names the commit and the rule: a long subject, a missing body, a two-line subject', () => {
    const { dir, base } = repository();
    const long = commit(dir, `${'A'.repeat(73)}\n\nWhy.`);
    const bare = commit(dir, 'No body here');
    const wrapped = commit(dir, 'Subject\ncontinued\n\nWhy.');
    commit(dir, `${'é'.repeat(72)}\n\nSeventy-two characters, more bytes: fine.`);
    const result = check(dir, base);
    assert.equal(result.status, 1, result.output);
    assert.match(result.output, new RegExp(`${long.slice(0, 10)} .*the subject is 73 characters; at most 72`));
    assert.match(result.output, new RegExp(`${bare.slice(0, 10)} .*there is no body`));
    assert.match(result.output, new RegExp(`${wrapped.slice(0, 10)} .*the second line is not blank`));
    assert.match(result.output, /3 problem\(s\) in 4 commit\(s\)/);
  });

  test('skips merge commits: git writes their subject', () => {
    const { dir, base } = repository();
    git(dir, ['checkout', '-q', '-b', 'topic']);
    commit(dir, 'Topic work\n\nWhy it is needed.');
    git(dir, ['checkout', '-q', 'main']);
    commit(dir, 'Main work\n\nWhy it is needed.');
    git(dir, ['merge', '-q', '--no-ff', '--no-edit', 'topic'], 1_000_000_200);
    const result = check(dir, base);
    assert.equal(result.status, 0, result.output);
    assert.match(result.output, /2 commit\(s\) checked/);
  });

  test('a full clone without the base fails and says what to do', () => {
    const { dir } = repository();
    commit(dir, 'Fine\n\nWhy.');
    const result = check(dir, 'f'.repeat(40));
    assert.equal(result.status, 2, result.output);
    assert.match(result.output, /is not in this repository, which is not shallow.*Set BASE/);
  });

  test('a shallow clone without the base checks the commits it holds made after the base', () => {
    const { dir, base } = repository();
    // Committed at the base's time (as the base's own parents are): history, not checked.
    commit(dir, `Old again, also far too long ${'x'.repeat(80)}`, 1_000_000_000);
    commit(dir, 'Fine\n\nWhy.', 1_000_000_100);
    commit(dir, 'Also fine\n\nWhy.', 1_000_000_200);
    const clone = mkdtempSync(join(tmpdir(), 'check-commits-clone-'));
    dirs.push(clone);
    git(clone, ['clone', '-q', '--depth', '3', `file://${dir}`, '.']);
    const result = check(clone, base);
    assert.equal(result.status, 0, result.output);
    assert.match(result.output, /2 commit\(s\) checked \(a shallow clone without/);
    commit(clone, `Too long in the clone ${'y'.repeat(60)}\n\nWhy.`, 1_000_000_300);
    const failed = check(clone, base);
    assert.equal(failed.status, 1, failed.output);
    assert.match(failed.output, /1 problem\(s\) in 3 commit\(s\)/);
  });
});
