// `npm run record-histories`: records the histories test/replay.test.ts replays, into
// test/histories/<package.json's version>/, as JSON (what `temporal workflow show --output json`
// writes). A released version's folder is frozen: this refuses to touch it (a version is released
// once CHANGELOG.md dates it; dev/releases.ts). Before the release, record again after a deliberate
// change to the command sequence, review the diff, and commit. The replay test then fails on any
// later change that would break workflows of any release still running (non-determinism).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJson } from '../src/replay/history-json';
import { stateQuery } from '../src/contract/messages';
import { HISTORIES_DIR, packageVersion, releasedVersions } from '../dev/releases';
import { eventually, startStack, taskInput } from '../test/helpers/stack';

async function main() {
  const version = packageVersion();
  if (releasedVersions().includes(version)) {
    console.error(
      `${version} is released (CHANGELOG.md dates it): its histories in test/histories/${version}/ are frozen and never recorded again. ` +
        'To record the next release\'s, set its version in package.json and add its "## [x.y.z] - Unreleased" entry to CHANGELOG.md.',
    );
    process.exit(1);
  }
  const out = join(HISTORIES_DIR, version);
  mkdirSync(out, { recursive: true });
  // Recorded afresh: a scenario dropped from this script leaves no stale history behind.
  for (const file of readdirSync(out)) if (file.endsWith('.json')) rmSync(join(out, file));
  const stack = await startStack();
  const save = async (name: string, workflowId: string) => {
    const history = await stack.env.client.workflow.getHandle(workflowId).fetchHistory();
    writeFileSync(join(out, `${name}.history.json`), `${JSON.stringify(historyToJson(history), null, 2)}\n`);
    console.log(`recorded ${version}/${name}: ${history.events?.length} events`);
  };
  try {
    const plain = await stack.tasks.start(taskInput(), { workflowId: 'replay-plain' });
    await plain.result();
    await save('plain', plain.workflowId);

    const otp = await stack.tasks.start(taskInput({ instructions: [{ action: 'Log in [needs-code]' }] }), {
      workflowId: 'replay-otp',
    });
    await eventually('awaiting', async () => (await otp.query(stateQuery)).awaitingInput);
    await stack.tasks.submitCode(otp.workflowId, '123456');
    await otp.result();
    await save('otp', otp.workflowId);

    const session = await stack.tasks.start(taskInput({ awaitable: true }), { workflowId: 'replay-session' });
    await eventually('awaiting', async () => (await session.query(stateQuery)).awaitingInput);
    await stack.tasks.addInstructions(session.workflowId, [{ action: 'Click next' }]);
    await eventually('awaiting again', async () => (await session.query(stateQuery)).awaitingInput);
    await stack.tasks.complete(session.workflowId);
    await session.result();
    await save('session-update-complete', session.workflowId);

    const cancelled = await stack.tasks.start(taskInput({ instructions: [{ action: 'Crawl [duration=30s]' }] }), {
      workflowId: 'replay-cancel',
    });
    await eventually('created', async () => (await cancelled.query(stateQuery)).executionId);
    await cancelled.cancel();
    await cancelled.result().catch(() => undefined);
    await save('cancelled', cancelled.workflowId);

    const failed = await stack.tasks.start(taskInput({ instructions: [{ action: 'Fail [fail]' }] }), {
      workflowId: 'replay-failed',
    });
    await failed.result().catch(() => undefined);
    await save('failed', failed.workflowId);

    const timedOut = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Crawl [duration=30s]' }], timeoutMs: 2_000 }),
      { workflowId: 'replay-timeout' },
    );
    await timedOut.result().catch(() => undefined);
    await save('timeout', timedOut.workflowId);
  } finally {
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
