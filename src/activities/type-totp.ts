// Typing a TOTP code: chosen, computed and sent inside one activity, so the workflow learns only
// the time step (never the code). At most once, like every code (deliverOnce), and never a code
// about to expire or one of a step already typed: the activity waits for the next step instead.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { BrowserAIClient } from '../browserai';
import { FailureType } from '../errors';
import { codeInstruction } from '../workflows/input';
import { deliverOnce } from './at-most-once';
import { executionAnswer } from './execution-answer';
import { maskCodesInFailure } from './mask-codes';
import { TOTP_MIN_REMAINING_MS, type TotpKeys } from './totp';
import type { TotpCodeAnswer, TypeTotpCodeInput } from './types';

export async function typeTotpCode(
  client: BrowserAIClient,
  keys: TotpKeys,
  input: TypeTotpCodeInput,
): Promise<TotpCodeAnswer> {
  const { executionId, secretName, delivery } = input;
  if (!keys.has(secretName)) {
    throw ApplicationFailure.nonRetryable(
      `This worker holds no TOTP secret named "${secretName}": set BROWSERAI_TOTP_SECRET_${secretName.toUpperCase()} ` +
        "(or add it to BROWSERAI_TOTP_SECRETS_FILE, or to the plugin's totpSecrets) on every worker of the task queue.",
      FailureType.TotpSecretNotFound,
    );
  }
  const ctx = Context.current();
  const attemptStartedAtMs = Date.now();
  // Waited for before the delivery starts, so the wait never counts against the request's time.
  // (A retry whose attempt before it delivered waits needlessly, then returns that attempt's answer.)
  const step = await stepToType(keys, secretName, input.afterStep, (ms) => ctx.sleep(ms));
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
        .catch((err: unknown) => {
          throw maskCodesInFailure(err, masked);
        });
      return { answer: executionAnswer(sent), totpStep: step };
    },
    // The workflow saw AmbiguousRequest and ends; nothing to undo.
    onLateAnswer: async () => undefined,
  });
  return { ...answer, totpStep };
}

/**
 * The step whose code to type: the current one if it has at least TOTP_MIN_REMAINING_MS left and
 * was not typed before, else the next (waited for).
 */
async function stepToType(
  keys: TotpKeys,
  name: string,
  afterStep: number,
  sleep: (ms: number) => Promise<void>,
): Promise<number> {
  for (;;) {
    const { step, remainingMs } = keys.stepAt(name, Date.now());
    if (step > afterStep && remainingMs >= TOTP_MIN_REMAINING_MS) return step;
    await sleep(remainingMs + 5);
  }
}
