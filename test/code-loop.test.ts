// The one-time-code loop from a service that holds a Temporal client: being told that a task needs
// input (the nextInputRequest update), a refused code asked for again as a new request, the codes
// refused too often, and the TOTP codes the worker types itself. Real worker, real dev server,
// the emulator over HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { HOTP, Secret } from 'otpauth';
import { FailureType } from '../src/contract/errors';
import { eventually, startStack, storedHistory, taskInput, type Stack } from './helpers/stack';

/** The emulator's copy and the worker's copy of one TOTP secret (base32 of 20 bytes). */
const TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

let stack: Stack;
before(async () => {
  stack = await startStack({
    emulator: { totpSecrets: { github: TOTP_SECRET } },
    codeLoop: { totpSecrets: { GITHUB: TOTP_SECRET } },
  });
});
after(async () => {
  await stack?.stop();
});

async function failureType(promise: Promise<unknown>): Promise<string | undefined> {
  const err = await promise.then(
    () => assert.fail('expected the workflow to fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkflowFailedError, String(err));
  return err.cause instanceof ApplicationFailure ? (err.cause.type ?? undefined) : err.cause?.name;
}

describe('nextInputRequest: told when a task needs input', () => {
  test('a code request: kind, prompt, sequence and times; the state shows it while open; then the end', async () => {
    const handle = await stack.tasks.start(taskInput({ instructions: [{ action: 'Log in [needs-code]' }] }));
    const next = await stack.tasks.nextInputRequest(handle.workflowId);
    assert.equal(next.kind, 'input-requested');
    if (next.kind !== 'input-requested') return;
    const { request } = next;
    assert.equal(next.open, true);
    assert.equal(request.sequence, 1);
    assert.equal(request.kind, 'code');
    assert.equal(request.answeredBy, 'caller');
    assert.equal(request.refusedCodes, 0);
    assert.equal(request.attemptsLeft, 3);
    assert.match(request.prompt, /Waiting for a one-time code$/);
    assert.equal(request.workflowId, handle.workflowId);
    assert.match(request.executionId, /^[0-9a-f]{24}$/);
    assert.ok(Date.parse(request.timesOutAt) - Date.parse(request.since) === 30 * 60_000);
    assert.deepEqual((await stack.tasks.state(handle.workflowId)).inputRequest, request);
    // Asked again for the same request: answered at once, from the workflow's own record.
    assert.deepEqual(await stack.tasks.nextInputRequest(handle.workflowId), next);

    await stack.tasks.submitCode(handle.workflowId, '482913');
    const end = await stack.tasks.nextInputRequest(handle.workflowId, { after: request.sequence });
    assert.deepEqual(end, {
      kind: 'finished',
      finished: {
        outcome: 'completed',
        workflowId: handle.workflowId,
        executionId: request.executionId,
        status: 'finalized',
      },
    });
    assert.equal((await handle.result()).status, 'finalized');
    assert.equal((await stack.tasks.state(handle.workflowId)).inputRequest, null);
    // After the workflow closed: read from the closed workflow, the same answer.
    assert.deepEqual(await stack.tasks.nextInputRequest(handle.workflowId, { after: request.sequence }), end);
  });

  test('an awaitable session that finished its instructions asks for instructions', async () => {
    const handle = await stack.tasks.start(taskInput({ awaitable: true }));
    const next = await stack.tasks.nextInputRequest(handle.workflowId);
    assert.equal(next.kind === 'input-requested' && next.request.kind, 'instructions');
    assert.equal(next.kind === 'input-requested' && next.request.attemptsLeft, undefined);
    await stack.tasks.complete(handle.workflowId);
    const end = await stack.tasks.nextInputRequest(handle.workflowId, { after: 1 });
    assert.equal(end.kind === 'finished' && end.finished.outcome, 'completed');
    assert.equal(end.kind === 'finished' && end.finished.stopConfirmed, true);
  });

  test('a task that fails before asking: the waiting call returns how it ended', async () => {
    const handle = await stack.tasks.start(taskInput({ instructions: [{ action: 'Open the page [fail]' }] }));
    const end = await stack.tasks.nextInputRequest(handle.workflowId);
    assert.equal(end.kind, 'finished');
    if (end.kind !== 'finished') return;
    assert.equal(end.finished.outcome, 'failed');
    assert.equal(end.finished.failureType, FailureType.BrowserAITaskFailed);
    await handle.result().catch(() => undefined);
  });
});

describe('listAwaitingInput: the tasks waiting for input', () => {
  test('from visibility, longest wait first, with how long each has waited; a task that got its code leaves the list', async () => {
    const project = `waiting-${Date.now()}`;
    const first = await stack.tasks.start(taskInput({ instructions: [{ action: 'Log in [needs-code]' }], project }));
    const firstRequest = await stack.tasks.nextInputRequest(first.workflowId);
    const second = await stack.tasks.start(taskInput({ instructions: [{ action: 'Log in [needs-code]' }], project }));
    await stack.tasks.nextInputRequest(second.workflowId);
    const listed = await eventually('visibility lists both', async () => {
      const found = await stack.tasks.listAwaitingInput({ project });
      return found.length === 2 ? found : undefined;
    });
    assert.deepEqual(
      listed.map((task) => task.workflowId),
      [first.workflowId, second.workflowId],
    );
    assert.ok(firstRequest.kind === 'input-requested');
    assert.equal(listed[0]!.since, firstRequest.request.since);
    assert.equal(listed[0]!.executionId, firstRequest.request.executionId);
    assert.ok(listed[0]!.waitedMs! >= listed[1]!.waitedMs!);
    assert.equal(listed[0]!.request, undefined, 'no query without details');
    const detailed = await stack.tasks.listAwaitingInput({ project, details: true });
    assert.deepEqual(detailed[0]!.request, firstRequest.request);

    await stack.tasks.submitCode(first.workflowId, '482913');
    await first.result();
    await eventually('the first task leaves the list', async () => {
      const found = await stack.tasks.listAwaitingInput({ project });
      return found.length === 1 && found[0]!.workflowId === second.workflowId;
    });
    await stack.tasks.cancel(second.workflowId);
  });
});

describe('refused codes', () => {
  test('a refused code is a new request; it is never typed again, even forced; a new code is taken', async () => {
    const handle = await stack.tasks.start(taskInput({ instructions: [{ action: 'Log in [rejects-code]' }] }));
    const first = await stack.tasks.nextInputRequest(handle.workflowId);
    assert.ok(first.kind === 'input-requested' && first.request.sequence === 1);
    await stack.tasks.submitCode(handle.workflowId, '111111');

    const second = await stack.tasks.nextInputRequest(handle.workflowId, { after: 1 });
    assert.ok(second.kind === 'input-requested', JSON.stringify(second));
    assert.equal(second.request.sequence, 2);
    assert.equal(second.request.kind, 'code');
    assert.equal(second.request.refusedCodes, 1);
    assert.equal(second.request.attemptsLeft, 2);
    assert.match(second.request.prompt, /not accepted/);

    // The refused code, again and forced: ignored. Then a new one.
    await stack.tasks.handle(handle.workflowId).signal('submitCode', { code: '111111', force: true });
    await stack.tasks.submitCode(handle.workflowId, '222222');
    const end = await stack.tasks.nextInputRequest(handle.workflowId, { after: 2 });
    assert.equal(end.kind === 'finished' && end.finished.outcome, 'completed');
    const task = stack.emulator.task(second.request.executionId)!;
    assert.deepEqual(
      task.codeChecks.map(({ code, accepted }) => ({ code, accepted })),
      [
        { code: '111111', accepted: false },
        { code: '222222', accepted: true },
      ],
    );
    assert.deepEqual(task.codesReceived, ['111111', '222222'], 'the refused code was typed once');
  });

  test('after maxCodeAttempts refused codes the task is stopped and the workflow fails CodesRefused', async () => {
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Log in [reject-codes=5]' }], maxCodeAttempts: 2 }),
    );
    const first = await stack.tasks.nextInputRequest(handle.workflowId);
    assert.ok(first.kind === 'input-requested');
    await stack.tasks.submitCode(handle.workflowId, '111111');
    const second = await stack.tasks.nextInputRequest(handle.workflowId, { after: 1 });
    assert.ok(second.kind === 'input-requested' && second.request.attemptsLeft === 1);
    await stack.tasks.submitCode(handle.workflowId, '222222');
    const end = await stack.tasks.nextInputRequest(handle.workflowId, { after: 2 });
    assert.ok(end.kind === 'finished', JSON.stringify(end));
    assert.equal(end.finished.outcome, 'failed');
    assert.equal(end.finished.failureType, FailureType.CodesRefused);
    assert.equal(end.finished.stopConfirmed, true);
    assert.equal(await failureType(handle.result()), FailureType.CodesRefused);
    const task = stack.emulator.task(first.request.executionId)!;
    assert.equal(task.status, 'stopped');
    assert.equal(task.stopCommands, 1);
  });
});

describe('TOTP codes the worker types', () => {
  const codeAt = (atMs: number) =>
    HOTP.generate({ secret: Secret.fromBase32(TOTP_SECRET), counter: Math.floor(atMs / 30_000) });

  test('the current code of the named secret, typed once, in a step with time left; never in history', async () => {
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Log in to GitHub [needs-totp=github]' }], totpSecretName: 'github' }),
    );
    const next = await stack.tasks.nextInputRequest(handle.workflowId);
    assert.ok(next.kind === 'input-requested');
    assert.equal(next.request.answeredBy, 'worker');
    const result = await handle.result();
    assert.equal(result.status, 'finalized');
    const task = stack.emulator.task(result.executionId)!;
    assert.equal(task.codeChecks.length, 1);
    const [check] = task.codeChecks;
    assert.equal(check!.accepted, true, 'the emulator took the code for the step it arrived in');
    assert.equal(check!.code, codeAt(check!.at));
    assert.ok(30_000 - (check!.at % 30_000) >= 9_000, 'typed with time left in its step');
    const history = await storedHistory(stack.env.client, handle.workflowId);
    assert.ok(!history.includes(check!.code), 'the TOTP code is not in the workflow history');
    assert.ok(!history.includes(TOTP_SECRET), 'nor the secret');
  });

  test('a refused TOTP code is followed by the code of a later step, never the same one', async () => {
    const handle = await stack.tasks.start(
      taskInput({
        instructions: [{ action: 'Log in to GitHub [needs-totp=github] [rejects-code]' }],
        totpSecretName: 'github',
      }),
    );
    const result = await handle.result();
    assert.equal(result.status, 'finalized');
    const checks = stack.emulator.task(result.executionId)!.codeChecks;
    assert.deepEqual(
      checks.map((c) => c.accepted),
      [false, true],
    );
    assert.ok(Math.floor(checks[1]!.at / 30_000) > Math.floor(checks[0]!.at / 30_000), 'a later step');
    assert.notEqual(checks[0]!.code, checks[1]!.code);
    const second = await stack.tasks.nextInputRequest(handle.workflowId, { after: 1 });
    assert.equal(second.kind, 'finished');
  });

  test('a TOTP secret the worker does not hold fails TotpSecretNotFound and stops the task', async () => {
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Log in [needs-totp=gitlab]' }], totpSecretName: 'gitlab' }),
    );
    assert.equal(await failureType(handle.result()), FailureType.TotpSecretNotFound);
    const { executionId } = await stack.tasks.state(handle.workflowId);
    await eventually('the task is stopped', () => stack.emulator.task(executionId!)?.status === 'stopped');
  });
});
