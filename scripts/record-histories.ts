// Records the histories that test/replay.test.ts replays: run it after a deliberate change to
// browserTask's behaviour (`npm run build && node lib/scripts/record-histories.js`), review
// the diff, and commit. The replay test then fails on any change that would break workflows
// already running in production (non-determinism).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { stateQuery } from '../src/workflows/messages';
import { eventually, startStack, taskInput } from '../test/helpers/stack';

const OUT = join(__dirname, '..', '..', 'test', 'histories');

async function main() {
  const stack = await startStack();
  const save = async (name: string, workflowId: string) => {
    const history = await stack.env.client.workflow.getHandle(workflowId).fetchHistory();
    // Binary protobuf: the SDK's JSON history reader trips over its own protobufjs here.
    writeFileSync(join(OUT, `${name}.history.bin`), temporal.api.history.v1.History.encode(history).finish());
    console.log(`recorded ${name}: ${history.events?.length} events`);
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
