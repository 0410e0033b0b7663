// The codeloop scenario: how fast the one-time-code loop closes. Code tasks start at once; for each,
// from the moment BrowserAI shows the code form (the emulator's own clock) to the moment the
// webhook `input.requested` reaches a verifying receiver, and to the moment a waiting
// `nextInputRequest` call returns; the code is then submitted and the task runs to its end. TOTP
// tasks run beside them, spread over one time step: form shown -> code typed (the emulator's record of its check). Default
// polling throughout. The MCP client's loop is its fixed 3-s poll: it notices a form 0 to 3 s late.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { BrowserTasks } from '../../../src/starters/tasks';
import { CODE_WAIT_MS } from '../../../src/emulator/scenario';
import { WebhookReceiver } from '../../../dev/webhook-receiver';
import { fmtMs } from '../../format';
import { log } from '../../format';
import { MCP_POLL_MS } from '../../mcp-client';
import {
  DISTRIBUTION_HEADER,
  distributionRow,
  missLines,
  quickBanner,
  targetTable,
  type TargetRow,
} from '../../report/markdown';
import { QUEUE_MS, type ScenarioContext, type ScenarioReport } from '../../scenario';
import { stats, type Stats } from '../../statistics';
import { withStack } from '../../stack';

const HEADING = '## One-time-code loop (codeloop)';
const TARGET_P50_MS = 2_000;
const TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
/** How long each task runs before the code form, and after the code: short, the loop is what is measured. */
const RUN_MS = 5_000;
/** The TOTP time step (RFC 6238's default, the emulator's and the worker's). */
const TOTP_STEP_MS = 30_000;

interface CodeTask {
  workflowId: string;
  executionId?: string;
  formShownAt?: number;
  webhookAt?: number;
  clientAt?: number;
  codeTypedAt?: number;
  error?: string;
}

export async function measureCodeLoop(context: ScenarioContext): Promise<ScenarioReport> {
  const { tasks: codeTasks, totpTasks } = context.config.codeloop;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const receiver = await WebhookReceiver.start([secret]);
  try {
    return await withStack({ queueMs: QUEUE_MS, totpSecrets: { bench: TOTP_SECRET } }, async (stack) => {
      const taskQueue = 'codeloop';
      await stack.startWorker('default', taskQueue, {
        BROWSERAI_WEBHOOK_URL: receiver.url,
        BROWSERAI_WEBHOOK_SECRET: secret,
        BROWSERAI_TOTP_SECRET_BENCH: TOTP_SECRET,
      });
      const client = new BrowserTasks(stack.temporal.client, taskQueue);
      const instruction = (i: number, marker: string) => ({
        action: `Log in to account ${i} [duration=${RUN_MS}ms] ${marker}`,
      });
      log(
        `codeloop: ${codeTasks} code tasks (webhook and a waiting client call each) and ${totpTasks} TOTP tasks at once`,
      );
      const deliveries = new Map<string, number>();
      receiver.onDelivery((d) => {
        if (d.body.type === 'input.requested' && !deliveries.has(d.body.data.workflowId))
          deliveries.set(d.body.data.workflowId, d.at);
      });
      const input = (i: number, marker: string, extra: object = {}) => ({
        instructions: [instruction(i, marker)],
        type: 'crawler_automation' as const,
        project: 'bench-codeloop',
        geoLocation: { country: 'US' },
        ...extra,
      });
      const run = async (i: number): Promise<CodeTask> => {
        const record: CodeTask = { workflowId: `codeloop-${i}-${Date.now()}` };
        try {
          const handle = await client.start(input(i, '[needs-code]', { webhook: { events: ['input.requested'] } }), {
            workflowId: record.workflowId,
          });
          const next = await client.nextInputRequest(handle.workflowId);
          record.clientAt = Date.now();
          if (next.kind !== 'input-requested') throw new Error(`the task ended first (${next.finished.outcome})`);
          record.executionId = next.request.executionId;
          await client.submitCode(handle.workflowId, String(100000 + i));
          await handle.result();
        } catch (err) {
          record.error = err instanceof Error ? err.message : String(err);
        }
        return record;
      };
      const runTotp = async (i: number): Promise<CodeTask> => {
        // Spread over one 30-s time step: forms shown all at one instant would share one phase of the
        // step, and so wait for the next step all together or not at all.
        await sleep((i * TOTP_STEP_MS) / totpTasks);
        const record: CodeTask = { workflowId: `codeloop-totp-${i}-${Date.now()}` };
        try {
          const handle = await client.start(input(i, '[needs-totp=bench]', { totpSecretName: 'bench' }), {
            workflowId: record.workflowId,
          });
          record.executionId = (await handle.result()).executionId;
        } catch (err) {
          record.error = err instanceof Error ? err.message : String(err);
        }
        return record;
      };
      const [coded, totp] = await Promise.all([
        Promise.all(Array.from({ length: codeTasks }, (_, i) => run(i))),
        Promise.all(Array.from({ length: totpTasks }, (_, i) => runTotp(i))),
      ]);
      for (const record of [...coded, ...totp]) {
        const task = record.executionId ? stack.emulator.task(record.executionId) : undefined;
        if (!task) continue;
        // The emulator shows the form when its first run (queue, then the blocked run) ends.
        record.formShownAt = Date.parse(task.createdAt) + QUEUE_MS + Math.min(CODE_WAIT_MS, task.scenario.durationMs);
        record.webhookAt = deliveries.get(record.workflowId);
        record.codeTypedAt = task.codeChecks[0]?.at;
      }
      const toWebhook = stats(coded.map((r) => gap(r.formShownAt, r.webhookAt)));
      const toClient = stats(coded.map((r) => gap(r.formShownAt, r.clientAt)));
      const toTyped = stats(totp.map((r) => gap(r.formShownAt, r.codeTypedAt)));
      const errors = [...coded, ...totp].filter((r) => r.error);
      const rows: TargetRow[] = [
        judge('Code form shown → webhook received, p50', toWebhook),
        judge('Code form shown → waiting client call returned, p50', toClient),
        judge(
          'TOTP: code form shown → code typed, p50',
          toTyped,
          'waits for the next step when under 10 s are left: up to 10 s more for one task in three',
        ),
      ];
      const markdown = [
        HEADING,
        '',
        ...quickBanner(context.config.quick),
        `${codeTasks} code tasks (each with a webhook and a waiting \`nextInputRequest\` call) and ${totpTasks} TOTP tasks (the code tasks started at once, the TOTP tasks spread over one 30-s time step) on one worker process, default polling, the emulator in \`${stack.emulator.mode}\` mode (the form shows ${QUEUE_MS + CODE_WAIT_MS} ms after the create). Command: \`${context.env.command}\`.`,
        '',
        ...targetTable(rows),
        '',
        ...DISTRIBUTION_HEADER,
        distributionRow('form shown → webhook received', toWebhook, fmtMs),
        distributionRow('form shown → client call returned', toClient, fmtMs),
        distributionRow('TOTP: form shown → code typed', toTyped, fmtMs),
        `| MCP client's loop: form shown → noticed (its fixed ${MCP_POLL_MS / 1000}-s poll, computed) | — | 0 | ${fmtMs(MCP_POLL_MS / 2)} | ${fmtMs(MCP_POLL_MS / 2)} | ${fmtMs(MCP_POLL_MS * 0.99)} | ${fmtMs(MCP_POLL_MS)} |`,
        '',
        `Errors: ${errors.length}${errors.length ? ` (${[...new Set(errors.map((e) => e.error))].slice(0, 3).join('; ')})` : ''}. Webhook deliveries: ${receiver.received.length}, every one verified: ${receiver.received.every((d) => d.verifiedWith.length > 0)}.`,
        '',
        ...missLines(rows),
      ].join('\n');
      return { heading: HEADING, markdown, rows, raw: { coded, totp } };
    });
  } finally {
    await receiver.close();
  }
}

function gap(from: number | undefined, to: number | undefined): number | undefined {
  return from === undefined || to === undefined ? undefined : to - from;
}

function judge(measure: string, s: Stats | undefined, why?: string): TargetRow {
  return {
    measure,
    target: `≤ ${fmtMs(TARGET_P50_MS)}`,
    measured: s ? `${fmtMs(s.p50)} (p99 ${fmtMs(s.p99)})` : 'n/a',
    met: s ? s.p50 <= TARGET_P50_MS : undefined,
    ...(why ? { why } : {}),
  };
}
