// How fast the one-time-code loop closes: from the code form shown (the emulator's clock) to the
// webhook `input.requested` received and to a waiting `nextInputRequest` returned; for TOTP tasks,
// to the code typed; for codes the emulated site texts to the inbox, from the message sent to the
// code typed. The MCP client's fixed 3-s poll notices a form 0 to 3 s late.
import { randomBytes } from 'node:crypto';
import { errorText, sleep } from '../../dev/async';
import { WebhookReceiver } from '../../dev/webhook-receiver';
import { CODE_WAIT_MS } from '../../src/emulator/scenario';
import { BrowserTasks } from '../../src/starters/tasks';
import { startInbox } from '../../src/inbox';
import type { BrowserTaskInput } from '../../src/contract/input';
import { fmtMs, log } from '../format';
import { plainInput } from '../plan';
import { MCP_POLL_MS } from '../mcp-client';
import { distributions, row } from '../report/markdown';
import { QUEUE_MS, scenario } from '../scenario';
import { between, type Stats } from '../statistics';

const TASK_QUEUE = 'codeloop';
const TARGET_P50_MS = 2_000;
/** Message received → code typed: the inbox adds a route and a signal to what a caller's submitCode costs. */
const INBOX_TARGET_P50_MS = 1_000;
const TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
/** How long each task runs before the code form, and after the code: short, the loop is what is measured. */
const RUN_MS = 5_000;
/** The TOTP time step (RFC 6238's default, the emulator's and the worker's). */
const TOTP_STEP_MS = 30_000;

/** A task and the moments of its loop: code form shown (computed), webhook received, client call returned, code typed. */
type CodeTask = { workflowId: string; input: BrowserTaskInput; executionId?: string; error?: string } & {
  [moment in 'formShownAt' | 'webhookAt' | 'clientAt' | 'codeTypedAt' | 'messageAt']?: number;
};

export const measureCodeLoop = scenario({
  heading: '## One-time-code loop (codeloop)',
  stack: () => ({ queueMs: QUEUE_MS, totpSecrets: { bench: TOTP_SECRET } }),
  plan(_stack, { config: { codeloop: settings } }) {
    const tasks = (n: number, kind: string, marker: string, extra: Partial<BrowserTaskInput>) =>
      Array.from({ length: n }, (_, i): CodeTask => ({
        workflowId: `codeloop-${kind}${i}-${Date.now()}`,
        input: { ...plainInput(`Log in to account ${i} [duration=${RUN_MS}ms] ${marker}`, 'bench-codeloop'), ...extra },
      }));
    return {
      coded: tasks(settings.tasks, '', '[needs-code]', { webhook: { events: ['input.requested'] } }),
      totp: tasks(settings.totpTasks, 'totp-', '[needs-totp=bench]', { totpSecretName: 'bench' }),
      // Each its own number: tasks that share one get no code (docs/design/inbox.md).
      inbox: Array.from({ length: settings.inboxTasks }, (_, i) => {
        const number = `+1555${String(i).padStart(7, '0')}`;
        // A code lost on the way fails the task in 2 minutes (an error in the report), not 30.
        const extra = { codeRecipient: { address: number }, awaitingInputTimeoutMs: 120_000 };
        return tasks(1, `inbox-${i}-`, `[sms-code=${number}]`, extra)[0]!;
      }),
    };
  },
  async measure(stack, { coded, totp, inbox }) {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const receiver = await WebhookReceiver.start([secret]);
    const authToken = randomBytes(16).toString('hex');
    const client = new BrowserTasks(stack.temporal.client, TASK_QUEUE);
    const inboxServer = await startInbox({
      client: client.client,
      taskQueue: TASK_QUEUE,
      twilio: { authToken },
      port: 0,
      log: () => undefined,
    });
    stack.emulator.sendCodesTo({ url: inboxServer.url, twilioAuthToken: authToken });
    try {
      await stack.startWorker('default', TASK_QUEUE, {
        BROWSERAI_WEBHOOK_URL: receiver.url,
        BROWSERAI_WEBHOOK_SECRET: secret,
        BROWSERAI_TOTP_SECRET_BENCH: TOTP_SECRET,
      });
      log(`codeloop: ${coded.length} code tasks (a webhook, a waiting client call) and ${totp.length} TOTP tasks`);
      receiver.onDelivery(({ body, at }) => {
        const record = body.type === 'input.requested' && coded.find((r) => r.workflowId === body.data.workflowId);
        if (record) record.webhookAt ??= at;
      });
      const run = async (record: CodeTask, i: number) => {
        const handle = await client.start(record.input, { workflowId: record.workflowId });
        const next = await client.nextInputRequest(handle.workflowId);
        record.clientAt = Date.now();
        if (next.kind !== 'input-requested') throw new Error(`the task ended first (${next.finished.outcome})`);
        record.executionId = next.request.executionId;
        await client.submitCode(handle.workflowId, String(100000 + i));
        await handle.result();
      };
      // Spread over one 30-s time step: forms shown all at one instant would share one phase of the
      // step, and so wait for the next step all together or not at all.
      const runTotp = async (record: CodeTask, i: number) => {
        await sleep((i * TOTP_STEP_MS) / totp.length);
        const handle = await client.start(record.input, { workflowId: record.workflowId });
        record.executionId = (await handle.result()).executionId;
      };
      const attempt = (body: typeof run) => (record: CodeTask, i: number) =>
        body(record, i).catch((err: unknown) => void (record.error = errorText(err)));
      await Promise.all([...coded.map(attempt(run)), ...totp.map(attempt(runTotp))]);
      // Apart from the rest, so each figure is at its own number of concurrent tasks.
      log(`codeloop: ${inbox.length} tasks whose codes the emulated site texts to the inbox`);
      const runInbox = async (record: CodeTask) => {
        const handle = await client.start(record.input, { workflowId: record.workflowId });
        record.executionId = (await handle.result()).executionId;
      };
      await Promise.all(inbox.map(attempt(runInbox)));
      for (const record of [...coded, ...totp, ...inbox]) {
        const task = record.executionId ? stack.emulator.task(record.executionId) : undefined;
        if (!task) continue;
        // The emulator shows the form when its first run (queue, then the blocked run) ends.
        record.formShownAt = Date.parse(task.createdAt) + QUEUE_MS + Math.min(CODE_WAIT_MS, task.scenario.durationMs);
        record.codeTypedAt = task.codeChecks.find((check) => check.accepted)?.at;
        // Sent and received on this machine: the inbox reads it within a millisecond or two.
        record.messageAt = task.codesSent[0]?.at;
      }
      const verified = receiver.received.every((d) => d.verifiedWith.length > 0);
      return { coded, totp, inbox, deliveries: receiver.received.length, verified };
    } finally {
      await receiver.close();
      await inboxServer.close();
    }
  },
  report({ coded, totp, inbox, deliveries, verified }, stack) {
    const shown = (r: CodeTask) => r.formShownAt;
    const toWebhook = between(coded, shown, (r) => r.webhookAt);
    const toClient = between(coded, shown, (r) => r.clientAt);
    const toTyped = between(totp, shown, (r) => r.codeTypedAt);
    const messageToTyped = between(
      inbox,
      (r) => r.messageAt,
      (r) => r.codeTypedAt,
    );
    const errors = [...coded, ...totp, ...inbox].flatMap((r) => (r.error ? [r.error] : []));
    const texted = inbox.flatMap((r) => (r.messageAt === undefined ? [] : [r.messageAt]));
    const inboxWhy =
      texted.length > 1
        ? `the ${texted.length} texts came within ${fmtMs(Math.max(...texted) - Math.min(...texted))} of each other, and each goes through its recipient's workflow (signal-with-start), a signal to its task and that task's workflow task before the activity that types it: the whole burst queues on one worker and the dev server.`
        : undefined;
    // prettier-ignore
    const judge = (measure: string, s: Stats | undefined, why?: string) =>
      row(measure, `≤ ${fmtMs(TARGET_P50_MS)}`, s ? `${fmtMs(s.p50)} (p99 ${fmtMs(s.p99)}, max ${fmtMs(s.max)})` : 'n/a', s && s.p50 <= TARGET_P50_MS, why);
    const mcp = [0, MCP_POLL_MS / 2, MCP_POLL_MS / 2, MCP_POLL_MS * 0.99, MCP_POLL_MS].map(fmtMs).join(' | ');
    return {
      // prettier-ignore
      rows: [
        judge('Code form shown → webhook received, p50', toWebhook),
        judge('Code form shown → waiting client call returned, p50', toClient),
        judge('TOTP: code form shown → code typed, p50', toTyped, 'waits for the next step when under 10 s are left: up to 10 s more for one task in three'),
        row('Inbox: SMS received → code typed, p50', `≤ ${fmtMs(INBOX_TARGET_P50_MS)}`, messageToTyped ? `${fmtMs(messageToTyped.p50)} (p99 ${fmtMs(messageToTyped.p99)}, max ${fmtMs(messageToTyped.max)})` : 'n/a', messageToTyped && messageToTyped.p50 <= INBOX_TARGET_P50_MS, inboxWhy),
      ],
      setup: [
        `- **Tasks:** ${coded.length} code tasks (each with a webhook and a waiting \`nextInputRequest\` call) and ${totp.length} TOTP tasks (the code tasks started at once, the TOTP tasks spread over one 30-s time step) on one worker process, default polling, the emulator in \`${stack.emulator.mode}\` mode (the form shows ${QUEUE_MS + CODE_WAIT_MS} ms after the create).`,
        `- **Inbox:** then ${inbox.length} tasks started at once, each with a number of its own, whose emulated site texts a code to the inbox (a signed Twilio webhook, in this process) when the form shows; from the message sent to the code typed into BrowserAI (the emulator's clock).`,
      ],
      details: [
        ...distributions([
          ['form shown → webhook received', toWebhook, fmtMs],
          ['form shown → client call returned', toClient, fmtMs],
          ['TOTP: form shown → code typed', toTyped, fmtMs],
          ['inbox: SMS received → code typed', messageToTyped, fmtMs],
        ]),
        `| MCP client's loop: form shown → noticed (its fixed ${MCP_POLL_MS / 1000}-s poll, computed) | — | ${mcp} |`,
        '',
        `Errors: ${errors.length}${errors.length ? ` (${[...new Set(errors)].slice(0, 3).join('; ')})` : ''}. Webhook deliveries: ${deliveries}, every one verified: ${verified}.`,
      ],
      raw: { coded, totp, inbox },
    };
  },
});
