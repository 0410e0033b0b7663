// The inbox end to end: SMS and email providers' requests over real HTTP to the inbox, which
// routes each message through its recipient's workflow to the task waiting there, on a real dev
// server, a real worker and the emulator. Each code is typed once into the task it was sent for,
// or not at all.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { recipientWorkflowId } from '../src/activities/code-recipient';
import { recipientStateQuery } from '../src/contract/inbox-messages';
import type { BrowserTaskInput } from '../src/contract/input';
import { inboxHandler, mailgunSignature, startInbox, twilioSignature, type InboxServer } from '../src/inbox';
import { eventually, startStack, storedHistory, taskInput, type Stack } from './helpers/stack';

const TWILIO_TOKEN = randomBytes(16).toString('hex');
const MAILGUN_KEY = `key-${randomBytes(16).toString('hex')}`;
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

let stack: Stack;
/** The inbox mounted in a server of the test's own, as a user mounts it in theirs: the emulator's sites post to it. */
let inbox: InboxServer;
/** A second inbox process (`startInbox`): a provider's retry may reach either. */
let otherInbox: InboxServer;
before(async () => {
  let handler: (req: IncomingMessage, res: ServerResponse) => Promise<void> = async (_, res) => void res.end();
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  inbox = { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
  stack = await startStack({
    emulator: { inbox: { url, twilioAuthToken: TWILIO_TOKEN, mailgunSigningKey: MAILGUN_KEY } },
  });
  const options = {
    client: stack.env.client,
    taskQueue: stack.taskQueue,
    twilio: { authToken: TWILIO_TOKEN },
    mailgun: { signingKey: MAILGUN_KEY },
    secrets: [SECRET],
    log: () => undefined,
  };
  handler = inboxHandler(options);
  otherInbox = await startInbox({ ...options, port: 0 });
});
after(async () => {
  await otherInbox?.close();
  await stack?.stop();
  await inbox?.close();
});

/** A phone number of its own per test: tasks of other tests never share it. */
function phone(): string {
  return `+1415${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
}

/** An SMS as Twilio posts it, signed with the auth token (or `signature` instead). */
async function sms(
  to: string,
  body: string,
  { from = '+18005550100', sid = `SM${randomUUID().replace(/-/g, '')}`, signature, server = inbox } = {} as {
    from?: string;
    sid?: string;
    signature?: string | null;
    server?: InboxServer;
  },
): Promise<Response> {
  const url = `${server.url}/twilio`;
  const params = new URLSearchParams({ MessageSid: sid, AccountSid: 'AC1', From: from, To: to, Body: body });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const signed = signature === undefined ? twilioSignature(TWILIO_TOKEN, url, params) : signature;
  if (signed !== null) headers['x-twilio-signature'] = signed;
  return fetch(url, { method: 'POST', headers, body: params.toString() });
}

/** An email as a Mailgun route forwards it with `forward(".../mailgun/mime")`: the raw MIME, signed. */
async function email(to: string, subject: string, text: string, { key = MAILGUN_KEY } = {}): Promise<Response> {
  const mime = [
    'From: GitHub <noreply@github.com>',
    `To: ${to}`,
    `Subject: ${subject}`,
    `Message-ID: <${randomUUID()}@github.com>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    text,
  ].join('\r\n');
  const timestamp = String(Math.floor(Date.now() / 1000));
  const token = randomBytes(25).toString('hex');
  const form = new FormData();
  for (const [name, value] of Object.entries({
    recipient: to,
    sender: 'bounces@github.com',
    timestamp,
    token,
    signature: mailgunSignature(key, timestamp, token),
  }))
    form.set(name, value);
  form.set('body-mime', new Blob([mime], { type: 'message/rfc822' }), 'message.mime');
  return fetch(`${inbox.url}/mailgun/mime`, { method: 'POST', body: form });
}

/** A JSON message signed as Standard Webhooks. */
async function signedJson(message: object, secret = SECRET, id = `msg_${randomUUID()}`): Promise<Response> {
  const body = JSON.stringify(message);
  const headers = new Webhook(secret).sign(id, new Date(), body);
  return fetch(`${inbox.url}/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': headers,
    },
    body,
  });
}

/** The recipient workflow of an address: what it decided on each message. */
const recipientOf = (address: string) => stack.env.client.workflow.getHandle(recipientWorkflowId(address));

/** A task's inbox events, once it has `count` of them. */
async function eventsOf(workflowId: string, count = 1) {
  return eventually(`${count} inbox event(s) of ${workflowId}`, async () => {
    const events = (await stack.tasks.state(workflowId)).inbox?.events ?? [];
    return events.length >= count ? events : undefined;
  });
}

/** A task that stops at a code form, with its codes arriving at `codeRecipient`; resolves once it asks for the code. */
async function waitingTask(codeRecipient: BrowserTaskInput['codeRecipient'], extra: Partial<BrowserTaskInput> = {}) {
  const handle = await stack.tasks.start(
    taskInput({ instructions: [{ action: 'Log in [needs-code]' }], codeRecipient, ...extra }),
  );
  const next = await stack.tasks.nextInputRequest(handle.workflowId);
  assert.ok(next.kind === 'input-requested' && next.request.kind === 'code', JSON.stringify(next));
  return { handle, request: next.request };
}

const codesOf = (executionId: string) => stack.emulator.task(executionId)!.codesReceived;

describe('a message types its code once into the task waiting at its recipient', () => {
  test('a signed SMS webhook: typed once, the request and state show the recipient masked', async () => {
    const number = phone();
    const spaced = `${number.slice(0, 2)} (${number.slice(2, 5)}) ${number.slice(5, 8)}-${number.slice(8)}`;
    const project = `inbox-${randomUUID()}`;
    const { handle, request } = await waitingTask({ address: spaced }, { project });
    assert.equal(request.codeRecipient, `${number.slice(0, 3)}•••••••${number.slice(-2)}`);
    const [listed] = await eventually('the waiting list shows the task', async () => {
      const found = await stack.tasks.listAwaitingInput({ project, details: true });
      return found.length === 1 ? found : undefined;
    });
    assert.equal(listed!.request?.codeRecipient, request.codeRecipient);
    assert.deepEqual(listed!.inbox, { recipient: request.codeRecipient, events: [] });
    const answer = await sms(number, 'Your Acme verification code is 482913. Do not share it.');
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('x-browserai-inbox'), 'accepted');
    assert.match(await answer.text(), /<Response><\/Response>/);
    const result = await handle.result();
    assert.equal(result.status, 'finalized');
    assert.deepEqual(codesOf(result.executionId), ['482913']);
    const { inbox: seen } = await stack.tasks.state(handle.workflowId);
    assert.equal(seen?.recipient, request.codeRecipient);
    assert.deepEqual(
      seen?.events.map(({ from, outcome }) => ({ from, outcome })),
      [{ from: '+18•••••••00', outcome: 'matched' }],
    );
    const history = await storedHistory(stack.env.client, handle.workflowId);
    assert.ok(!history.includes('Acme'), "the message's text is not in the task's history");
    const recipientHistory = await storedHistory(stack.env.client, recipientWorkflowId(number));
    // The recipient's holds the code, as a submitCode signal does, but neither the text nor the number.
    assert.ok(!recipientHistory.includes('Acme') && !recipientHistory.includes(number), "nor in the recipient's");
  });

  test('a forwarded email (Mailgun, raw MIME) and a signed JSON message', async () => {
    const address = `codes+${randomUUID().slice(0, 8)}@inbox.example.com`;
    const { handle, request } = await waitingTask({ address: address.toUpperCase(), senders: ['@github.com'] });
    const answer = await email(
      address,
      '[GitHub] Please verify your device',
      'Verification code: 731904\n\nThanks, GitHub',
    );
    assert.equal(answer.status, 200);
    assert.deepEqual(await answer.json(), { outcome: 'accepted', reason: 'a code was read' });
    assert.equal((await handle.result()).status, 'finalized');
    assert.deepEqual(codesOf(request.executionId), ['731904']);

    const json = await waitingTask({ address: 'Codes@Example.org' });
    const sent = await signedJson({ to: 'codes@example.org', from: 'Acme', text: 'Acme login code: 5521' });
    assert.deepEqual(await sent.json(), { outcome: 'accepted', reason: 'a code was read' });
    assert.equal((await json.handle.result()).status, 'finalized');
    assert.deepEqual(codesOf(json.request.executionId), ['5521']);
  });
});

describe("the emulator's sites send the codes they ask for", () => {
  test('by SMS and by email: each form gets a code of its own, typed once, and only that code is taken', async () => {
    const number = phone();
    const address = `codes+${randomUUID().slice(0, 8)}@inbox.example.com`;
    const [bySms, byEmail] = await Promise.all([
      stack.tasks.run(
        taskInput({
          instructions: [{ action: `Log in [sms-code=${number}] [code-forms=2]` }],
          codeRecipient: { address: number },
        }),
      ),
      stack.tasks.run(
        taskInput({
          instructions: [{ action: `Log in [email-code=${address}] [code-delay=300ms]` }],
          codeRecipient: { address, senders: ['@emulator.browserai.test'] },
        }),
      ),
    ]);
    for (const [result, forms] of [
      [bySms, 2],
      [byEmail, 1],
    ] as const) {
      assert.equal(result.status, 'finalized');
      const task = stack.emulator.task(result.executionId)!;
      assert.equal(task.codesSent.length, forms);
      assert.ok(task.codesSent.every((sent) => sent.status === 200));
      assert.deepEqual(
        task.codeChecks.map(({ code, accepted }) => ({ code, accepted })),
        task.codesSent.map(({ code }) => ({ code, accepted: true })),
      );
      assert.deepEqual(
        task.codesReceived,
        task.codesSent.map(({ code }) => code),
      );
    }
  });
});

describe('the right task, or none', () => {
  test('a forged or missing signature is refused with 401, and nothing is typed or decided', async () => {
    const number = phone();
    const { handle, request } = await waitingTask({ address: number });
    const text = 'Your code is 482913';
    const refusals = await Promise.all([
      sms(number, text, { signature: null }),
      sms(number, text, { signature: twilioSignature('not-the-token', `${inbox.url}/twilio`, new URLSearchParams()) }),
      email(number, 'code', text, { key: 'not-the-key' }),
      signedJson({ to: number, from: 'x', text }, `whsec_${randomBytes(32).toString('base64')}`),
      fetch(`${inbox.url}/messages`, { method: 'POST', body: JSON.stringify({ to: number, from: 'x', text }) }),
    ]);
    assert.deepEqual(
      refusals.map((r) => r.status),
      [401, 401, 401, 401, 401],
    );
    assert.equal(
      (await recipientOf(number).query(recipientStateQuery)).remembered,
      0,
      'no message reached the recipient',
    );
    assert.equal((await stack.tasks.state(handle.workflowId)).inbox?.events.length, 0);
    assert.deepEqual(codesOf(request.executionId), []);
    await stack.tasks.cancel(handle.workflowId);
  });

  test('a code that arrives before the form shows is typed when it shows', async () => {
    const number = phone();
    const handle = await stack.tasks.start(
      taskInput({ instructions: [{ action: 'Log in [needs-code]' }], codeRecipient: { address: number } }),
      { waitForExecutionId: true },
    );
    // The create has answered: the task joined its recipient before it was created.
    const answer = await sms(number, 'G-482913 is your Google verification code');
    assert.equal(answer.headers.get('x-browserai-inbox'), 'accepted');
    const task = stack.emulator.task(handle.executionId)!;
    assert.ok(
      task.codeChecks.length === 0 && task.status !== 'awaiting',
      `the form had not shown yet (${task.status})`,
    );
    const result = await handle.result();
    assert.equal(result.status, 'finalized');
    assert.deepEqual(
      stack.emulator.task(handle.executionId)!.codeChecks.map(({ code, accepted }) => ({ code, accepted })),
      [{ code: '482913', accepted: true }],
    );
  });

  test('two tasks sharing a recipient never get each other’s code: ambiguous messages are refused, senders tell them apart', async () => {
    const number = phone();
    const [a, b] = await Promise.all([waitingTask({ address: number }), waitingTask({ address: number })]);
    const answer = await sms(number, 'Your code is 111111');
    assert.equal(answer.status, 200);
    for (const task of [a, b]) {
      const events = await eventsOf(task.handle.workflowId);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.outcome, 'refused');
      assert.match(events[0]!.reason, /several tasks wait for codes at this recipient/);
      assert.deepEqual(codesOf(task.request.executionId), []);
    }
    await Promise.all([a, b].map((task) => stack.tasks.cancel(task.handle.workflowId)));

    const shared = phone();
    const github = await waitingTask({ address: shared, senders: ['GitHub'] });
    const bank = await waitingTask({ address: shared, senders: ['+1 800 555 0199'] });
    const [toBank, toGitHub] = await Promise.all([
      sms(shared, 'Bank security code: 222222', { from: '+18005550199' }),
      sms(shared, 'GitHub code: 333333', { from: 'GitHub' }),
    ]);
    assert.deepEqual([toBank.status, toGitHub.status], [200, 200]);
    await Promise.all([github.handle.result(), bank.handle.result()]);
    assert.deepEqual(codesOf(github.request.executionId), ['333333']);
    assert.deepEqual(codesOf(bank.request.executionId), ['222222']);
  });

  test("a provider's retry types nothing twice: not into its task, nor into the next task at the recipient", async () => {
    const number = phone();
    const first = await waitingTask({ address: number });
    const sid = `SM${randomUUID().replace(/-/g, '')}`;
    const text = 'Your verification code is 640571';
    // The same message twice at once, through two inbox processes, and once more later.
    const answers = await Promise.all([sms(number, text, { sid }), sms(number, text, { sid, server: otherInbox })]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200],
    );
    await first.handle.result();
    assert.deepEqual(codesOf(first.request.executionId), ['640571']);
    assert.equal((await stack.tasks.state(first.handle.workflowId)).inbox?.events.length, 1, 'acted on once');

    // A new task waits at the number; the provider retries the old message (its 200 was lost).
    const next = await waitingTask({ address: number });
    await sms(number, text, { sid, server: otherInbox });
    await eventually('the recipient drops the retry as a repeat', async () => {
      const { repeats, recent } = await recipientOf(number).query(recipientStateQuery);
      // The two at once: one decided on, one repeat; the retry: the second repeat.
      return repeats === 2 && recent.length === 1;
    });
    assert.deepEqual(codesOf(next.request.executionId), [], 'the old code never reaches the new task');
    assert.equal((await stack.tasks.state(next.handle.workflowId)).inbox?.events.length, 0);
    await sms(number, 'Your verification code is 902113');
    assert.equal((await next.handle.result()).status, 'finalized');
    assert.deepEqual(codesOf(next.request.executionId), ['902113']);
  });

  test('a task terminated without leaving does not hold its recipient; an idle recipient closes', async () => {
    const number = phone();
    const [gone, waiting] = await Promise.all([waitingTask({ address: number }), waitingTask({ address: number })]);
    await gone.handle.terminate('an operator ends it');
    await sms(number, 'Your code is 712398');
    assert.equal((await waiting.handle.result()).status, 'finalized', 'the check dropped the terminated task');
    assert.deepEqual(codesOf(waiting.request.executionId), ['712398']);

    // A recipient that never got a message closes once its last task has left.
    const quiet = phone();
    const task = await waitingTask({ address: quiet });
    await stack.tasks.submitCode(task.handle.workflowId, '5521');
    await task.handle.result();
    await eventually(
      'the recipient closes',
      async () => (await recipientOf(quiet).describe()).status.name === 'COMPLETED',
    );
  });

  test('a message without a code is reported to its task and the sender; nothing is typed', async () => {
    const number = phone();
    const { handle, request } = await waitingTask({ address: number });
    const answer = await signedJson({
      to: number,
      from: 'Acme',
      text: 'Sign in with this link: https://acme.example/l/x',
    });
    assert.deepEqual(await answer.json(), { outcome: 'accepted', reason: 'no code in it' });
    const events = await eventsOf(handle.workflowId);
    assert.equal(events[0]!.outcome, 'refused');
    assert.match(events[0]!.reason, /no code found in the message/);
    assert.deepEqual(codesOf(request.executionId), []);
    await stack.tasks.cancel(handle.workflowId);

    // A message for a number no task waits at: decided on (no task), and remembered for its retries.
    const nobody = phone();
    await sms(nobody, 'Your code is 482913');
    const { recent } = await eventually('the recipient decides', async () => {
      const state = await recipientOf(nobody).query(recipientStateQuery);
      return state.recent.length === 1 ? state : undefined;
    });
    assert.deepEqual(recent[0]!.routed, { kind: 'no-task' });
  });
});
