// browserTask end to end: a real worker on a real Temporal dev server, BrowserAI emulated over HTTP.
// Runs against both emulator modes. A whole task meets every answer shape that differs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowUpdateFailedError,
  type WorkflowHandle,
} from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { InvalidInputError } from '../src/starters/tasks';
import { appendInstructionsSignal, stateQuery } from '../src/contract/messages';
import { BrowserAIExecutionId, BrowserAIProject, BrowserAIStatus } from '../src/contract/search-attributes';
import type { BrowserTaskInput } from '../src/contract/input';
import { eventually, startStack, storedHistory, storedRuns, taskInput, type Stack } from './helpers/stack';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

const creates = () => stack.emulator.count('POST', /^\/tasks$/);
const stops = (id: string) => stack.emulator.count('POST', new RegExp(`^/tasks/${id}/command$`));

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure | CancelledFailure> {
  const err = await promise.then(
    () => assert.fail('expected the workflow to fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WorkflowFailedError, `expected WorkflowFailedError, got ${err}`);
  assert.ok(
    err.cause instanceof ApplicationFailure || err.cause instanceof CancelledFailure,
    `unexpected cause ${err.cause}`,
  );
  return err.cause;
}

/** Bytes (raw payloads, metadata) as text, so a search for a code finds it whatever the encoding around it. */
function textOf(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Uint8Array) return Buffer.from(v).toString('latin1');
    if (
      v &&
      typeof v === 'object' &&
      (v as { type?: unknown }).type === 'Buffer' &&
      Array.isArray((v as { data?: unknown }).data)
    ) {
      return Buffer.from((v as { data: number[] }).data).toString('latin1');
    }
    return v;
  });
}

function payloadsText(payloads: temporal.api.common.v1.IPayloads | null | undefined): string {
  return (payloads?.payloads ?? []).map((p) => Buffer.from(p.data ?? []).toString('latin1')).join('\n');
}

/** Everything a person or a search sees of a workflow outside its history: each place as text. */
async function placesWithoutCodes(handle: WorkflowHandle): Promise<Record<string, string>> {
  const [description, metadata, state] = await Promise.all([
    handle.describe(),
    handle.query<unknown>('__temporal_workflow_metadata'),
    handle.query(stateQuery),
  ]);
  return {
    'current details (__temporal_workflow_metadata)': textOf(metadata),
    'user metadata (static summary and details)': textOf([
      await description.staticSummary(),
      await description.staticDetails(),
      description.raw.executionConfig?.userMetadata,
    ]),
    'search attributes': textOf([
      description.typedSearchAttributes.getAll(),
      description.raw.workflowExecutionInfo?.searchAttributes,
    ]),
    memo: textOf([description.memo, description.raw.workflowExecutionInfo?.memo]),
    'the state query': textOf(state),
    'pending activities': textOf(description.raw.pendingActivities),
  };
}

describe('browserTask', () => {
  for (const type of ['crawler_automation', 'script_automation'] as const) {
    test(`runs a ${type} task end to end and returns its results`, async () => {
      const before = creates();
      const handle = await stack.tasks.start(
        taskInput({
          type,
          instructions: [
            { action: type === 'script_automation' ? 'await page.goto("https://example.com")' : 'Open example.com' },
          ],
        }),
      );
      const result = await handle.result();
      assert.equal(result.status, 'finalized');
      assert.match(result.executionId, /\S+/);
      assert.ok(result.started && result.completed);
      assert.equal(result.results.length, 1);
      for (const field of [
        'model_output',
        'result',
        'state',
        'metadata',
        'history_index',
        'screenshot_url',
        'html_url',
        'console_url',
        'insert_ts',
      ]) {
        assert.ok(field in result.results[0]!, `result entry lacks ${field}`);
      }
      assert.equal(creates() - before, 1, 'exactly one task created');
      assert.equal(stack.emulator.task(result.executionId)?.scriptType, type);

      // Inspectable: typed search attributes follow the task.
      const description = await handle.describe();
      assert.equal(description.typedSearchAttributes.get(BrowserAIExecutionId), result.executionId);
      assert.equal(description.typedSearchAttributes.get(BrowserAIStatus), 'finalized');
      assert.equal(description.typedSearchAttributes.get(BrowserAIProject), 'test-project');
      // And the history never holds the API token (while it does hold the input: the search works).
      const history = await storedHistory(stack.env.client, handle.workflowId);
      assert.ok(history.includes('test-project'));
      assert.ok(!history.includes(stack.emulator.apiToken), 'API token found in workflow history');
    });
  }

  test('OTP: waits in awaiting, types the submitted code exactly once, then completes; the code shows nowhere but where it must be', async () => {
    const code = '482913';
    // The run after the code lasts 3 s, so the workflow is still open once the code has been typed.
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Log in to the portal [needs-code] [duration=3s]' }] }),
    );
    const { executionId } = await eventually('awaiting input', async () => {
      const s = await handle.query(stateQuery);
      return s.awaitingInput ? s : undefined;
    });
    assert.equal((await handle.describe()).typedSearchAttributes.get(BrowserAIStatus), 'awaiting');
    await stack.tasks.submitCode(handle.workflowId, code);

    // Typed: BrowserAI has it and answered, and the workflow has taken the answer (no send pending).
    const appendPath = new RegExp(`^/tasks/${executionId}/instructions$`);
    await eventually('the code typed', () => stack.emulator.task(executionId!)?.codesReceived.includes(code));
    await eventually('the append answered', () =>
      stack.emulator.requests.some((r) => r.method === 'POST' && appendPath.test(r.path) && r.status === 200),
    );
    await eventually('the workflow took the answer', async () => {
      const [s, d] = await Promise.all([handle.query(stateQuery), handle.describe()]);
      const sending = (d.raw.pendingActivities ?? []).some((a) =>
        /append|instruction|code/i.test(a.activityType?.name ?? ''),
      );
      return s.pendingInstructions === 0 && !sending;
    });
    const describeWhileRunning = await handle.describe();
    assert.equal(describeWhileRunning.status.name, 'RUNNING', 'checked while the workflow still holds the code');
    const places = await placesWithoutCodes(handle);
    // The places are read as text (a search there would find the execution ID, so it would find a code).
    for (const place of ['current details (__temporal_workflow_metadata)', 'search attributes', 'the state query']) {
      assert.ok(places[place]!.includes(executionId!), `${place} read as text: ${places[place]}`);
    }
    for (const [place, text] of Object.entries(places)) {
      assert.ok(!text.includes(code), `the code shows in ${place} once it was typed: ${text}`);
    }

    const result = await handle.result();
    assert.equal(result.status, 'finalized');
    const task = stack.emulator.task(result.executionId)!;
    assert.deepEqual(task.codesReceived, [code]);
    assert.equal(stack.emulator.count('POST', new RegExp(`^/tasks/${result.executionId}/instructions$`)), 1);
    for (const [place, text] of Object.entries(await placesWithoutCodes(handle))) {
      assert.ok(!text.includes(code), `the code shows in ${place} after the workflow ended: ${text}`);
    }

    // History holds the code where it must (the submitCode signal, the input of the activity
    // that types it, and the `codes` of the polls and the results read after it, which mask it in
    // whatever BrowserAI echoes) and nowhere else: not in search-attribute upserts, activity
    // summaries, answers, timers, the result. All of these are payloads, which the payload codec
    // encrypts.
    const runs = await storedRuns(stack.env.client, handle.workflowId);
    const carriers = { signal: 0, activity: 0, masking: 0 };
    const elsewhere = runs.flatMap((run) =>
      (run.history.events ?? []).map((event) => {
        const { HistoryEvent } = temporal.api.history.v1;
        const copy = HistoryEvent.decode(HistoryEvent.encode(event).finish());
        const signaled = copy.workflowExecutionSignaledEventAttributes;
        if (signaled?.signalName === 'submitCode' && payloadsText(signaled.input).includes(code)) {
          carriers.signal++;
          signaled.input = null;
        }
        const scheduled = copy.activityTaskScheduledEventAttributes;
        if (scheduled && /^browserAI(PollTask|GetResults)$/.test(scheduled.activityType?.name ?? '')) {
          const { codes, ...rest } = JSON.parse(Buffer.from(scheduled.input!.payloads![0]!.data!).toString('utf8')) as {
            codes?: string[];
          };
          if (codes?.includes(code) && !JSON.stringify(rest).includes(code)) {
            carriers.masking++;
            scheduled.input = null;
          }
        }
        if (scheduled && scheduled.input !== null && payloadsText(scheduled.input).includes(code)) {
          carriers.activity++;
          scheduled.input = null;
        }
        return {
          eventId: String(event.eventId),
          text: Buffer.from(HistoryEvent.encode(copy).finish()).toString('latin1'),
        };
      }),
    );
    assert.equal(carriers.signal, 1, 'the submitCode signal carries the code');
    assert.equal(carriers.activity, 1, 'one activity input carries the code: the append that types it');
    assert.ok(carriers.masking >= 2, 'the polls and the results read after it carry it to mask it');
    const leaks = elsewhere.filter((e) => e.text.includes(code)).map((e) => e.eventId);
    assert.deepEqual(leaks, [], `the code is in history events ${leaks.join(', ')} beyond the signal and the append`);
  });

  test('a code shorter than 4 letters or digits: refused by the client, ignored when signalled straight to the workflow', async () => {
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Log in to the portal [needs-code]' }] }),
    );
    const asked = await stack.tasks.nextInputRequest(handle.workflowId);
    assert.ok(asked.kind === 'input-requested', JSON.stringify(asked));
    await assert.rejects(stack.tasks.submitCode(handle.workflowId, '12'), (err: unknown) => {
      assert.ok(err instanceof InvalidInputError);
      assert.match(err.message, /code must have at least 4 letters or digits \(got 2\)/);
      return true;
    });
    // A caller without the client (another SDK): the workflow ignores it, then types a real one.
    await stack.tasks.handle(handle.workflowId).signal('submitCode', { code: '12' });
    await stack.tasks.submitCode(handle.workflowId, '4829');
    assert.equal((await handle.result()).status, 'finalized');
    const { executionId } = asked.request;
    assert.deepEqual(stack.emulator.task(executionId)!.codesReceived, ['4829']);
    assert.equal(stack.emulator.count('POST', new RegExp(`^/tasks/${executionId}/instructions$`)), 1, 'one code typed');
  });

  test('a send refused with an error that quotes the code: the code is masked in the failure, history, the state and the details', async () => {
    const code = '620418';
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Log in to the portal [needs-code]' }] }),
    );
    const { executionId } = await eventually('awaiting input', async () => {
      const s = await handle.query(stateQuery);
      return s.awaitingInput ? s : undefined;
    });
    // BrowserAI's validation error may quote what it was sent (nothing documents that it does not).
    stack.emulator.inject({
      method: 'POST',
      path: new RegExp(`^/tasks/${executionId}/instructions$`),
      status: 400,
      error: `Invalid input: cannot type "${code}" here`,
    });
    await stack.tasks.submitCode(handle.workflowId, code);
    const state = await eventually('the refusal seen', async () => {
      const s = await handle.query(stateQuery);
      return s.error?.includes('Invalid input') ? s : undefined;
    });
    assert.ok(!state.error!.includes(code) && state.error!.includes('•••'), `masked in the state: ${state.error}`);
    for (const [place, text] of Object.entries(await placesWithoutCodes(handle))) {
      assert.ok(!text.includes(code), `the code shows in ${place}: ${text}`);
    }
    const { HistoryEvent } = temporal.api.history.v1;
    const failures = (await handle.fetchHistory())
      .events!.filter((e) => e.activityTaskFailedEventAttributes)
      .map((e) => Buffer.from(HistoryEvent.encode(e).finish()).toString('latin1'));
    assert.ok(
      failures.some((f) => f.includes('Invalid input')),
      'the send failed in history',
    );
    assert.ok(!failures.some((f) => f.includes(code)), 'the failure in history quotes the code');

    // A poll's failure quoting it (a 5xx retried: its text lives in the pending activity's last failure).
    stack.emulator.inject({
      method: 'GET',
      path: new RegExp(`^/tasks/${executionId}$`),
      status: 500,
      error: `Engine log: typed "${code}"`,
      times: 3,
    });
    const lastFailure = await eventually('the poll failure seen', async () => {
      const pending = (await handle.describe()).raw.pendingActivities ?? [];
      const failure = pending.map((a) => a.lastFailure?.message ?? '').find((m) => m.includes('Engine log'));
      return failure;
    });
    assert.ok(
      !lastFailure.includes(code) && lastFailure.includes('•••'),
      `masked in the poll's failure: ${lastFailure}`,
    );
    await handle.cancel();
  });

  test('inspectable in the Temporal UI: static summary, current details, activity summaries, and no code or instruction in them', async () => {
    const instruction = 'Log in as ops@example.com [needs-code]';
    const handle = await stack.tasks.start(taskInput({ instructions: [{ action: instruction }] }));
    await eventually('awaiting input', async () => (await handle.query(stateQuery)).awaitingInput);
    const waiting = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    assert.match(waiting.currentDetails ?? '', /awaiting/);
    assert.match(waiting.currentDetails ?? '', /submitCode/);
    await stack.tasks.submitCode(handle.workflowId, '550123');
    const result = await handle.result();

    const description = await handle.describe();
    assert.equal(await description.staticSummary(), 'BrowserAI crawler_automation task · project test-project · US');
    const done = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    assert.match(done.currentDetails ?? '', new RegExp(`${result.executionId}.*finalized`));
    assert.match(done.currentDetails ?? '', /\[screenshot\]\(http/);

    const history = await handle.fetchHistory();
    const summaries = (history.events ?? [])
      .filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => JSON.parse(Buffer.from(e.userMetadata?.summary?.data ?? []).toString() || '""') as string);
    assert.ok(
      summaries.some((s) => s.startsWith('Create crawler_automation task in project test-project')),
      summaries.join(' | '),
    );
    assert.ok(
      summaries.some((s) => s.startsWith(`Send one-time code to ${result.executionId}`)),
      summaries.join(' | '),
    );
    assert.ok(
      summaries.some((s) => s.startsWith(`Poll ${result.executionId}`)),
      summaries.join(' | '),
    );
    const shown = JSON.stringify([
      summaries,
      done.currentDetails,
      waiting.currentDetails,
      await description.staticDetails(),
    ]);
    for (const secret of ['550123', 'ops@example.com'])
      assert.ok(!shown.includes(secret), `"${secret}" shown in the UI`);
  });

  test('signals that arrive before the task exists are sent in order right after it is created', async () => {
    const workflowId = `early-signals-${Date.now()}`;
    const handle = await stack.env.client.workflow.signalWithStart('browserTask', {
      taskQueue: stack.taskQueue,
      workflowId,
      args: [taskInput({ awaitable: true, awaitingInputTimeoutMs: 20_000 })],
      signal: appendInstructionsSignal,
      signalArgs: [{ instructions: [{ action: 'first early instruction' }] }],
    });
    await handle.signal(appendInstructionsSignal, { instructions: [{ action: 'second early instruction' }] });
    const executionId = await eventually('two appends', () => {
      const appends = stack.emulator.requests.filter((r) => r.method === 'POST' && /\/instructions$/.test(r.path));
      const mine = appends.filter((r) => JSON.stringify(r.body).includes('early instruction'));
      return mine.length === 2 ? mine[0]!.path.split('/')[2] : undefined;
    });
    const order = stack.emulator.requests
      .filter((r) => r.path === '/tasks' || r.path.startsWith(`/tasks/${executionId}/instructions`))
      .filter((r) => r.path !== '/tasks' || r.status === 200)
      .map((r) => (r.path === '/tasks' ? 'create' : JSON.stringify(r.body).includes('first') ? 'first' : 'second'));
    assert.deepEqual(order.slice(-3), ['create', 'first', 'second']);
    await stack.tasks.complete(workflowId);
    const result = await handle.result();
    assert.equal(result.status, 'stopped');
    assert.equal(stops(executionId!), 1, 'complete sends exactly one stop');
  });

  test('addInstructions update returns BrowserAI’s answer; invalid instructions are rejected before anything is sent', async () => {
    const handle = await stack.tasks.start(taskInput({ awaitable: true }));
    await eventually('awaiting', async () => (await handle.query(stateQuery)).awaitingInput);
    const answer = await stack.tasks.addInstructions(handle.workflowId, [{ action: 'Click the second link' }]);
    assert.ok(
      answer.status === 'running' || answer.status === 'awaiting',
      `BrowserAI's own answer (awaiting during its lag after an append), got ${answer.status}`,
    );
    assert.match(answer.executionId, /\S+/);
    const appendsBefore = stack.emulator.count('POST', /\/instructions$/);
    await assert.rejects(
      handle.executeUpdate('addInstructions', { args: [{ instructions: [{ action: '' }] }] }),
      (err: unknown) =>
        err instanceof WorkflowUpdateFailedError && (err.cause as ApplicationFailure).type === 'InvalidInput',
    );
    await assert.rejects(stack.tasks.addInstructions(handle.workflowId, []), InvalidInputError);
    assert.equal(stack.emulator.count('POST', /\/instructions$/), appendsBefore);
    await stack.tasks.complete(handle.workflowId);
    await handle.result();
  });

  test('replaceInstructions overwrites the task’s instructions with one PUT', async () => {
    const handle = await stack.tasks.start(taskInput({ awaitable: true, instructions: [{ action: 'Original step' }] }));
    await eventually('awaiting', async () => (await handle.query(stateQuery)).awaitingInput);
    await stack.tasks.replace(handle.workflowId, [
      { action: 'Replacement step one' },
      { action: 'Replacement step two' },
    ]);
    const { executionId } = await handle.query(stateQuery);
    await eventually(
      'replaced',
      () => stack.emulator.count('PUT', new RegExp(`^/tasks/${executionId}/instructions$`)) === 1,
    );
    await eventually('awaiting again', async () => (await handle.query(stateQuery)).awaitingInput);
    assert.deepEqual(
      stack.emulator.task(executionId!)!.instructions.map((i) => i.action),
      ['Replacement step one', 'Replacement step two'],
    );
    await stack.tasks.complete(handle.workflowId);
    assert.equal((await handle.result()).status, 'stopped');
  });

  test('addInstructions is rejected by its validator once the task has ended', async () => {
    // The poll's results read fails, and the workflow's own is slowed, so the workflow is still
    // open after it saw the task end.
    stack.emulator.inject({ method: 'GET', path: /^\/results\//, status: 500 });
    stack.emulator.inject({ method: 'GET', path: /^\/results\//, delayMs: 3_000 });
    const handle = await stack.tasks.start(taskInput({ instructions: [{ action: 'Short task [duration=300ms]' }] }));
    const { executionId } = await eventually('task ended', async () => {
      const s = await handle.query(stateQuery);
      return s.status === 'finalized' ? s : undefined;
    });
    const appendsBefore = stack.emulator.count('POST', /\/instructions$/);
    await assert.rejects(
      stack.tasks.addInstructions(handle.workflowId, [{ action: 'Too late' }]),
      (err: unknown) =>
        err instanceof WorkflowUpdateFailedError && (err.cause as ApplicationFailure).type === 'TaskEnded',
    );
    assert.equal(stack.emulator.count('POST', /\/instructions$/), appendsBefore, `nothing was sent to ${executionId}`);
    assert.equal((await handle.result()).status, 'finalized');
  });

  test('once a poll has seen the task end, no instruction or code is sent: the update is refused while the results are read', async () => {
    // The poll's results read fails, so the workflow reads them itself, slowly: it knows of the end
    // from the moment that read starts (docs/design/polling.md, "When it returns").
    stack.emulator.inject({ method: 'GET', path: /^\/results\//, status: 500 });
    stack.emulator.inject({ method: 'GET', path: /^\/results\//, delayMs: 3_000 });
    const handle = await stack.tasks.start(taskInput({ instructions: [{ action: 'Short task [duration=500ms]' }] }));
    const executionId = await eventually('task created', async () => (await handle.query(stateQuery)).executionId);
    await eventually(
      "the workflow's own results read",
      () => stack.emulator.count('GET', new RegExp(`^/results/${executionId}$`)) > 1,
    );
    const appendsBefore = stack.emulator.count('POST', new RegExp(`^/tasks/${executionId}/instructions$`));
    await assert.rejects(
      stack.tasks.addInstructions(handle.workflowId, [{ action: 'Too late' }]),
      (err: unknown) =>
        err instanceof WorkflowUpdateFailedError && (err.cause as ApplicationFailure).type === 'TaskEnded',
    );
    await stack.tasks.submitCode(handle.workflowId, '123456');
    assert.equal((await handle.result()).status, 'finalized');
    assert.equal(
      stack.emulator.count('POST', new RegExp(`^/tasks/${executionId}/instructions$`)),
      appendsBefore,
      'nothing was sent to the ended task',
    );
  });

  test('an addInstructions that reaches a task BrowserAI has ended fails TaskEnded, though the workflow did not know yet', async () => {
    // The poll that sees the end reads the results before it returns (slowly here): until then the
    // validator takes the update and the append goes out. BrowserAI refuses it (with no documented
    // answer: the emulator's 400, 404 or 409), and the activity settles that by the task's status.
    stack.emulator.inject({ method: 'GET', path: /^\/results\//, delayMs: 5_000 });
    const handle = await stack.tasks.start(taskInput({ instructions: [{ action: 'Short task [duration=300ms]' }] }));
    const executionId = await eventually('task created', async () => (await handle.query(stateQuery)).executionId);
    const appends = () => stack.emulator.count('POST', new RegExp(`^/tasks/${executionId}/instructions$`));
    await eventually(
      "the poll's results read",
      () => stack.emulator.count('GET', new RegExp(`^/results/${executionId}$`)) > 0,
    );
    assert.notEqual((await handle.query(stateQuery)).status, 'finalized', 'the workflow has not seen the end');
    await assert.rejects(stack.tasks.addInstructions(handle.workflowId, [{ action: 'Too late' }]), (err: unknown) => {
      assert.ok(err instanceof WorkflowUpdateFailedError);
      const cause = err.cause as ApplicationFailure;
      assert.equal(cause.type, 'TaskEnded', cause.message);
      assert.match(cause.message, new RegExp(`BrowserAI task ${executionId} has ended \\(finalized\\)`));
      return true;
    });
    assert.equal(appends(), 1, 'the append was sent: the workflow did not know of the end');
    assert.equal((await handle.result()).status, 'finalized');
  });

  test('a session ended by complete returns the last result BrowserAI showed, though the results hold nothing after the stop', async () => {
    const handle = await stack.tasks.start(taskInput({ awaitable: true }));
    const { executionId } = await eventually('awaiting', async () => {
      const s = await handle.query(stateQuery);
      return s.awaitingInput ? s : undefined;
    });
    const shown = (await stack.browserai.getTask(executionId!)).result;
    assert.ok(shown, 'BrowserAI shows a result while the session waits');
    stack.emulator.inject({
      method: 'GET',
      path: /^\/results\//,
      answer: { transform: (body: Record<string, unknown>) => ({ ...body, results: [] }) },
    });
    await stack.tasks.complete(handle.workflowId);
    const result = await handle.result();
    assert.equal(result.status, 'stopped');
    assert.deepEqual(result.results, []);
    assert.deepEqual(result.result, shown);
  });

  test('cancelling the workflow sends exactly one stop, keeps the results so far and ends cancelled', async () => {
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Crawl everything [duration=60s]' }] }),
    );
    const { executionId } = await eventually('running', async () => {
      const s = await handle.query(stateQuery);
      return s.executionId && stack.emulator.task(s.executionId)?.status === 'running' ? s : undefined;
    });
    await handle.cancel();
    const failure = await failureOf(handle.result());
    assert.ok(failure instanceof CancelledFailure);
    assert.equal(stops(executionId!), 1);
    assert.equal(stack.emulator.task(executionId!)?.status, 'stopped');
    const state = await handle.query(stateQuery);
    assert.equal(state.outcome?.status, 'stopped');
  });

  test('a failed BrowserAI task fails the workflow non-retryably with BrowserAITaskFailed', async () => {
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Open a page that does not exist [fail]' }] }),
    );
    const failure = (await failureOf(handle.result())) as ApplicationFailure;
    assert.equal(failure.type, 'BrowserAITaskFailed');
    assert.equal(failure.nonRetryable, true);
    const state = await handle.query(stateQuery);
    assert.ok(failure.message.includes(state.executionId!), 'message names the execution');
    assert.match(failure.message, /ERR_NAME_NOT_RESOLVED/);
    const details = failure.details?.[0] as { results: unknown[] };
    assert.ok(Array.isArray(details.results), 'results in the failure details');
  });

  const invalidInputs: Array<[string, Partial<BrowserTaskInput> | Record<string, unknown>]> = [
    ['empty instructions', { instructions: [] }],
    ['non-string action', { instructions: [{ action: 42 }] }],
    ['unknown type', { type: 'quantum_automation' }],
    ['empty project', { project: '  ' }],
    ['unknown country', { geoLocation: { country: 'UK' } }],
  ];
  for (const [name, bad] of invalidInputs) {
    test(`invalid input (${name}) fails InvalidInput with zero HTTP calls`, async () => {
      const input = { ...taskInput(), ...bad } as BrowserTaskInput;
      await assert.rejects(stack.tasks.start(input), InvalidInputError, 'the starter rejects it before Temporal');
      const requestsBefore = stack.emulator.requests.length;
      // A raw Temporal client skips the starter's check: the workflow checks again.
      const handle = await stack.env.client.workflow.start('browserTask', {
        taskQueue: stack.taskQueue,
        workflowId: `invalid-${name.replace(/\W/g, '-')}-${Date.now()}`,
        args: [input],
      });
      const failure = (await failureOf(handle.result())) as ApplicationFailure;
      assert.equal(failure.type, 'InvalidInput');
      assert.equal(stack.emulator.requests.length, requestsBefore, 'no HTTP call was made');
    });
  }

  test('BrowserAI 500s on polls and results are retried and the workflow completes', async () => {
    stack.emulator.inject({ method: 'GET', path: /^\/tasks\/[^/]+$/, status: 500, times: 2 });
    stack.emulator.inject({ method: 'GET', path: /^\/results\//, status: 503, times: 1 });
    const result = await stack.tasks.run(taskInput());
    assert.equal(result.status, 'finalized');
  });

  test('a 429 on create is retried no sooner than Retry-After, and only one task is created', async () => {
    const before = creates();
    stack.emulator.inject({ method: 'POST', path: /^\/tasks$/, status: 429, retryAfterSeconds: 2 });
    const result = await stack.tasks.run(taskInput());
    assert.equal(result.status, 'finalized');
    const attempts = stack.emulator.requests.filter((r) => r.method === 'POST' && r.path === '/tasks').slice(-2);
    assert.equal(attempts[0]!.status, 429);
    assert.equal(attempts[1]!.status, 200);
    assert.ok(attempts[1]!.at - attempts[0]!.at >= 2_000, `retried after ${attempts[1]!.at - attempts[0]!.at} ms`);
    assert.equal(creates() - before, 2, 'one refused, one created');
  });

  test('an unknown status is treated as running and the task completes', async () => {
    const result = await stack.tasks.run(taskInput({ instructions: [{ action: 'Think hard [unknown-status]' }] }));
    assert.equal(result.status, 'finalized');
  });

  test('statuses are compared case-insensitively', async () => {
    const result = await stack.tasks.run(taskInput({ instructions: [{ action: 'Shout [uppercase-status]' }] }));
    assert.equal(result.status.toLowerCase(), 'finalized');
  });

  test('a lost create answer fails AmbiguousRequest and never creates a second task', async () => {
    const before = creates();
    stack.emulator.inject({ method: 'POST', path: /^\/tasks$/, dropAfterHandling: true });
    const handle = await stack.tasks.start(taskInput());
    const failure = (await failureOf(handle.result())) as ApplicationFailure;
    assert.equal(failure.type, 'AmbiguousRequest');
    assert.match(failure.message, /at-least-once/);
    assert.equal(creates() - before, 1, 'the create was not repeated');
  });

  test("with delivery 'at-least-once' a 500 on create is retried", async () => {
    stack.emulator.inject({ method: 'POST', path: /^\/tasks$/, status: 500 });
    const result = await stack.tasks.run(taskInput({ delivery: 'at-least-once' }));
    assert.equal(result.status, 'finalized');
  });

  test('timeoutMs stops the task and fails TaskTimeout', async () => {
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Long crawl [duration=60s]' }], timeoutMs: 3_000 }),
    );
    const failure = (await failureOf(handle.result())) as ApplicationFailure;
    assert.equal(failure.type, 'TaskTimeout');
    const { executionId } = await handle.query(stateQuery);
    assert.equal(stops(executionId!), 1);
    assert.equal(stack.emulator.task(executionId!)?.status, 'stopped');
  });

  test('awaitingInputTimeoutMs stops an awaiting task and fails AwaitingInputTimeout', async () => {
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Log in [needs-code]' }], awaitingInputTimeoutMs: 1_500 }),
    );
    const failure = (await failureOf(handle.result())) as ApplicationFailure;
    assert.equal(failure.type, 'AwaitingInputTimeout');
    const { executionId } = await handle.query(stateQuery);
    assert.equal(stops(executionId!), 1);
  });

  test('a task stopped at BrowserAI while awaiting input ends with its results, not an input timeout', async () => {
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Log in [needs-code]' }], awaitingInputTimeoutMs: 1_500 }),
    );
    const { executionId } = await eventually('awaiting input', async () => {
      const s = await handle.query(stateQuery);
      return s.awaitingInput ? s : undefined;
    });
    // Someone stops it from the BrowserAI dashboard: nothing tells the workflow, which is not polling while it waits.
    await stack.browserai.stopTask(executionId!);
    const result = await handle.result();
    assert.equal(result.status, 'stopped');
    assert.equal(stops(executionId!), 1, 'only the dashboard’s stop; the workflow sent none');
  });

  test('starting twice with one workflow ID never runs the task twice, even after the first run closed', async () => {
    const workflowId = `stable-id-${Date.now()}`;
    await (await stack.tasks.start(taskInput(), { workflowId })).result();
    const creates = stack.emulator.count('POST', /^\/tasks$/);
    await assert.rejects(stack.tasks.start(taskInput(), { workflowId }), WorkflowExecutionAlreadyStartedError);
    assert.equal(stack.emulator.count('POST', /^\/tasks$/), creates);
  });

  test('start with waitForExecutionId resolves with the executionId once the task exists (update-with-start)', async () => {
    const started = await stack.tasks.start(taskInput(), { waitForExecutionId: true });
    assert.ok(stack.emulator.task(started.executionId), 'the executionId is the one BrowserAI gave');
    assert.equal((await started.result()).executionId, started.executionId);
    // Same guarantee as a plain start: a second start with the ID is refused, nothing created.
    const creates = stack.emulator.count('POST', /^\/tasks$/);
    await assert.rejects(
      stack.tasks.start(taskInput(), { workflowId: started.workflowId, waitForExecutionId: true }),
      WorkflowExecutionAlreadyStartedError,
    );
    assert.equal(stack.emulator.count('POST', /^\/tasks$/), creates);
  });

  test('start with waitForExecutionId rejects TaskNotCreated when the create is refused', async () => {
    stack.emulator.inject({ method: 'POST', path: /^\/tasks$/, status: 400, error: 'Invalid project' });
    const failure = await stack.tasks.start(taskInput(), { waitForExecutionId: true }).then(
      () => assert.fail('resolved without a task'),
      (err: unknown) => err,
    );
    assert.ok(failure instanceof WorkflowUpdateFailedError, String(failure));
    assert.equal((failure.cause as ApplicationFailure).type, 'TaskNotCreated');
  });

  test('a result of several megabytes is trimmed to fit history, and the full one can be fetched', async () => {
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Extract the whole catalogue [large=5MB]' }] }),
    );
    const result = await handle.result();
    assert.equal(result.status, 'finalized');
    assert.ok(result.trimmed, 'the result says it was trimmed');
    assert.ok(result.trimmed.originalBytes > 5_000_000);
    assert.ok(Buffer.byteLength(JSON.stringify(result)) < 1_000_000, 'what reached history is small');
    const full = await stack.browserai.getResults(result.executionId);
    assert.ok(Buffer.byteLength(JSON.stringify(full.results)) > 5_000_000);
  });
});
