// Typing a TOTP code: chosen, computed and sent inside one activity, so the workflow learns only
// the time step (never the code). At most once, like every code (deliverOnce), and never a code
// about to expire or one of a step already typed. When no code is due, the activity sends nothing
// and answers how long until one is: the workflow waits with a timer (docs/design/totp-timing.md),
// so a deploy or a crash during the wait loses nothing and needs no ambiguous retry.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { BrowserAIClient } from '../browserai';
import { FailureType } from '../contract/errors';
import { codeInstruction } from '../contract/one-time-codes';
import { deliverOnce, notSent } from './at-most-once';
import { executionAnswer } from './execution-answer';
import { instructionRefusal } from './instruction-refusal';
import { maskCodesInFailure } from './mask-codes';
import type { TotpKeys } from './totp';
import type { TotpCodeAnswer, TotpNotDue, TypeTotpCodeInput } from '../contract/activity-types';

export async function typeTotpCode(
  client: BrowserAIClient,
  keys: TotpKeys,
  input: TypeTotpCodeInput,
): Promise<TotpCodeAnswer | TotpNotDue> {
  const { executionId, secretName, delivery } = input;
  if (!keys.has(secretName)) {
    throw ApplicationFailure.nonRetryable(
      `This worker holds no TOTP secret named "${secretName}": set BROWSERAI_TOTP_SECRET_${secretName.toUpperCase()} ` +
        "(or add it to BROWSERAI_TOTP_SECRETS_FILE, or to the plugin's totpSecrets) on every worker of the task queue.",
      FailureType.TotpSecretNotFound,
    );
  }
  const attemptStartedAtMs = Date.now();
  let step: number;
  if (input.waitInWorkflow) {
    const due = keys.dueStep(secretName, input.afterStep, Date.now());
    if ('waitMs' in due) {
      // Recorded, so that a retry of this attempt (its answer lost: a worker killed before it
      // reported, Temporal unreachable) sees that nothing was sent. It is the attempt's only
      // heartbeat, so the SDK sends it at once.
      Context.current().heartbeat(notSent());
      return { notDueForMs: due.waitMs };
    }
    step = due.step;
  } else {
    step = await waitForDueStep(keys, secretName, input.afterStep);
  }
  const { answer, totpStep } = await deliverOnce({
    what: `Typing a TOTP code into ${executionId}`,
    delivery,
    requestTimeoutMs: client.requestTimeoutMs,
    attemptStartedAtMs,
    send: async (timeoutMs) => {
      const code = keys.code(secretName, step);
      const instructions = [codeInstruction(input.codeInstructionTemplate, code)];
      const masked = [...(input.codes ?? []), code];
      const sent = await client
        .appendInstructions(executionId, { instructions, awaitable: input.awaitable }, { timeoutMs })
        .catch(async (err: unknown) => {
          throw await instructionRefusal(client, executionId, maskCodesInFailure(err, masked));
        });
      return { answer: executionAnswer(sent), totpStep: step };
    },
    // The workflow saw AmbiguousRequest and ends; nothing to undo.
    onLateAnswer: async () => undefined,
  });
  return { ...answer, totpStep };
}

/**
 * For workflows started before the wait moved into the workflow (they call without
 * `waitInWorkflow`): the attempt waits for the step itself. It heartbeats while it waits, so it
 * stops (its sleep is cancelled, nothing is sent) once its workflow is gone or cancels it. The
 * heartbeat records no "not sent": a later heartbeat of the same attempt could be held back by
 * the SDK's throttling, and a retry must never take a sent code for one that was not.
 */
async function waitForDueStep(keys: TotpKeys, name: string, afterStep: number): Promise<number> {
  const ctx = Context.current();
  for (;;) {
    const due = keys.dueStep(name, afterStep, Date.now());
    if ('step' in due) return due.step;
    ctx.heartbeat({ phase: 'waiting-for-step' });
    await ctx.sleep(Math.min(due.waitMs, WAIT_HEARTBEAT_MS));
  }
}

/** How often a waiting attempt heartbeats (the SDK sends fewer: it throttles them). */
const WAIT_HEARTBEAT_MS = 1_000;
