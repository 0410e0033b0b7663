// `npm run check-commits` (run by .ci/run): every commit after BASE follows CONTRIBUTING.md,
// "Commits": a subject of at most 72 characters on one line, a blank line, then a body that says
// why. The first line is what `git log --oneline`, GitHub and release notes show; the why is what
// a reader of `git blame` needs years later.
//
// BASE is the last commit made before the rule (main at the time): the history before it has long
// subjects that cannot change without rewriting it. Merge commits are skipped: git writes their
// subject, and the commits they merge carry the reasons.
//
// A shallow clone may lack BASE. Then the commits it has that were committed after BASE's time are
// checked, and the script says so: a clone of depth 1 checks its one commit.
// Plain JavaScript, so it runs before (and without) a build.
import { spawnSync } from 'node:child_process';

const BASE = '672299989feb73fc0d46b9ecd24c56123158e8d1';
/** BASE's committer time (Unix seconds), for a shallow clone that lacks BASE itself. */
const BASE_TIME = 1795742362;
const MAX_SUBJECT = 72;

/** `--base HASH --base-time SECONDS` replace BASE and BASE_TIME (test/check-commits.test.ts). */
function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1];
}
const base = option('--base', BASE);
const baseTime = Number(option('--base-time', String(BASE_TIME)));

function git(...args) {
  const result = spawnSync('git', args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (result.error) throw result.error;
  return result;
}

/** What is wrong with one commit message, one sentence per rule broken. */
function problems(message) {
  const lines = message.replace(/\s+$/, '').split('\n');
  const subject = lines[0] ?? '';
  const found = [];
  if (subject.trim() === '') found.push('the subject (first line) is empty');
  const length = [...subject].length;
  if (length > MAX_SUBJECT)
    found.push(`the subject is ${length} characters; at most ${MAX_SUBJECT}: move the detail into the body`);
  if (lines.length > 1 && lines[1].trim() !== '')
    found.push('the second line is not blank: the subject is one line, then a blank line, then the body');
  if (!lines.slice(1).some((line) => line.trim() !== ''))
    found.push('there is no body: after a blank line, say why the change was made');
  return found;
}

function commitsToCheck() {
  if (git('cat-file', '-e', `${base}^{commit}`).status === 0) {
    return { range: `${base}..HEAD`, note: `commits after ${base.slice(0, 7)}` };
  }
  const shallow = git('rev-parse', '--is-shallow-repository').stdout.trim() === 'true';
  if (!shallow) {
    console.error(
      `check-commits: the base commit ${base} is not in this repository, which is not shallow. ` +
        'Was the history rewritten? Set BASE in scripts/check-commits.mjs to the last commit before the rule.',
    );
    process.exit(2);
  }
  return {
    range: 'HEAD',
    after: baseTime,
    note: `a shallow clone without ${base.slice(0, 7)}: the commits it holds made after that one`,
  };
}

const { range, after, note } = commitsToCheck();
const log = git('log', '-z', '--no-merges', '--format=%H %ct%n%B', range);
if (log.status !== 0) {
  console.error(`check-commits: git log ${range} failed: ${log.stderr.trim()}`);
  process.exit(2);
}
let checked = 0;
const failures = [];
for (const entry of log.stdout.split('\0')) {
  if (entry.trim() === '') continue;
  const newline = entry.indexOf('\n');
  const [hash, time] = entry.slice(0, newline).split(' ');
  if (after !== undefined && Number(time) <= after) continue;
  checked++;
  const message = entry.slice(newline + 1);
  for (const problem of problems(message))
    failures.push(`${hash.slice(0, 10)} "${message.split('\n')[0].slice(0, 60)}": ${problem}`);
}
if (failures.length > 0) {
  console.error(`check-commits: ${failures.length} problem(s) in ${checked} commit(s) (${note}):`);
  for (const failure of failures) console.error(`  ${failure}`);
  console.error('Reword them (git rebase -i, "reword") before merging. CONTRIBUTING.md, "Commits", has the rules.');
  process.exit(1);
}
console.log(`check-commits: ${checked} commit(s) checked (${note}), all follow CONTRIBUTING.md, "Commits".`);
