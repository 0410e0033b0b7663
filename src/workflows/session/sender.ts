// The sender: what sends an instruction, a one-time code or a TOTP code to BrowserAI, and records
// what reached it. The outbox (outbox.ts) decides what goes next and when; the sender does the
// sending, so the queue knows nothing of activities and the session nothing of how a TOTP code is
// typed. The session hears once per item, through SendTarget.inputSettled, what the send changed.
import { type ApplicationFailure, log, patched, sleep } from '@temporalio/workflow';
import type { TaskExecutionAnswer, TotpCodeAnswer, TotpMask, TypeTotpCodeInput } from '../../contract/activity-types';
import { FailureType } from '../../contract/errors';
import type { BrowserTaskInput, OutgoingInstructions } from '../../contract/input';
import { TOTP_WAIT_IN_WORKFLOW } from '../patches';
import { TOTP_SEND_TIMEOUT_MS, type SessionActivities } from './activities';
import { failureType } from './failures';
import type { InputRequests } from './input-requests';
import { recordCodeTyped } from './metrics';
import type { OneTimeCodes } from './one-time-codes';
import type { OutboxSender, SendOutcome } from './outbox';
import type { SessionSettings } from './settings';

/** What a settled send means for the session (its record, its UI, whether it must end). */
export interface SendReport {
  outcome: SendOutcome;
  /** BrowserAI got it, or may have (AmbiguousRequest). */
  reached: boolean;
  /**
   * The session cannot go on after this send: its delivery is unknown (AmbiguousRequest: repeating
   * could type a code twice), or a TOTP code the worker could not type (no one else can).
   */
  endsSession: ApplicationFailure | null;
}

/** What the sender needs of the session it sends for. */
export interface SendTarget {
  /** Nothing more will happen to the task: a send now would go nowhere. */
  readonly ended: boolean;
  /** The refusal of an item the ended task will never get. */
  taskEnded(): ApplicationFailure;
  /** One item settled, in the order they were sent. */
  inputSettled(report: SendReport): void;
}

/** What the activities mask in BrowserAI's text: the codes received, and the TOTP codes (computed by them). */
export function secretsToMask(
  input: Pick<BrowserTaskInput, 'totpSecretName'>,
  codes: OneTimeCodes,
  requests: InputRequests,
): { codes?: string[]; totp?: TotpMask } {
  const totp = input.totpSecretName
    ? { totp: { secretName: input.totpSecretName, steps: [...requests.totpSteps] } }
    : {};
  return { ...codes.toMask, ...totp };
}

export class Sender implements OutboxSender {
  constructor(
    private readonly executionId: string,
    private readonly input: BrowserTaskInput,
    private readonly settings: SessionSettings,
    private readonly activities: SessionActivities,
    private readonly codes: OneTimeCodes,
    private readonly requests: InputRequests,
    private readonly target: SendTarget,
  ) {}

  refusal(): Error | null {
    return this.target.ended ? this.target.taskEnded() : null;
  }

  send(item: OutgoingInstructions): Promise<TaskExecutionAnswer> {
    const { executionId } = this;
    if (item.totp) return this.#typeTotpCode();
    const what = item.code
      ? 'Send one-time code'
      : item.kind === 'replace'
        ? 'Replace instructions'
        : 'Append instructions';
    const request = {
      executionId,
      instructions: item.instructions,
      awaitable: this.input.awaitable,
      delivery: this.settings.delivery,
      ...secretsToMask(this.input, this.codes, this.requests),
    };
    return item.kind === 'replace'
      ? this.activities.replaceInstructions.executeWithOptions({ summary: `${what} of ${executionId}` }, [request])
      : this.activities.appendInstructions.executeWithOptions({ summary: `${what} to ${executionId}` }, [request]);
  }

  /** Records what reached BrowserAI (codes typed, TOTP steps, the input request answered), then tells the session. */
  sent(item: OutgoingInstructions, outcome: SendOutcome): void {
    const type = 'error' in outcome ? failureType(outcome.error) : undefined;
    const ambiguous = type === FailureType.AmbiguousRequest;
    const reached = 'answer' in outcome || ambiguous;
    if (item.code && reached) {
      this.codes.typed(item.code);
      recordCodeTyped();
    }
    if (item.totp && 'answer' in outcome && 'totpStep' in outcome.answer) {
      this.requests.totpTyped(outcome.answer.totpStep as number);
      recordCodeTyped();
    }
    if (reached) this.requests.sent(item.totp ? 'totp' : item.code ? 'code' : 'instructions');
    const endsSession =
      ambiguous || (item.totp && 'error' in outcome && type !== FailureType.TaskEnded)
        ? (outcome as { error: ApplicationFailure }).error
        : null;
    if ('error' in outcome && type !== FailureType.TaskEnded) {
      log.warn('Sending instructions to BrowserAI failed', {
        executionId: this.executionId,
        failure: outcome.error.message,
      });
    }
    this.target.inputSettled({ outcome, reached, endsSession });
  }

  /**
   * Types the TOTP code once one is due. The activity only computes and sends: when no code is due
   * (too little left of the step, or the step was typed), it answers how long until one is and
   * this workflow waits with a timer, so a deploy or a crash during the wait loses nothing
   * (docs/design/totp-timing.md). Workflows that ran before keep the activity that waits itself.
   */
  async #typeTotpCode(): Promise<TotpCodeAnswer> {
    const { executionId, input } = this;
    const summary = `Type the TOTP code of secret ${input.totpSecretName} into ${executionId}`;
    const request = (): TypeTotpCodeInput => ({
      executionId,
      secretName: input.totpSecretName!,
      codeInstructionTemplate: input.codeInstructionTemplate,
      afterStep: Math.max(-1, ...this.requests.totpSteps),
      awaitable: input.awaitable,
      delivery: this.settings.delivery,
      ...this.codes.toMask,
    });
    if (!patched(TOTP_WAIT_IN_WORKFLOW)) {
      return (await this.activities.typeTotpCode.executeWithOptions({ summary }, [request()])) as TotpCodeAnswer;
    }
    for (;;) {
      const answer = await this.activities.typeTotpCode.executeWithOptions(
        // The attempt never waits for a step: it gets a send's time, whatever the period.
        { summary, startToCloseTimeout: TOTP_SEND_TIMEOUT_MS },
        [{ ...request(), waitInWorkflow: true }],
      );
      if (!('notDueForMs' in answer)) return answer;
      await sleep(answer.notDueForMs, {
        summary: `Wait for the next time step of TOTP secret ${input.totpSecretName}`,
      });
      // The task may have ended during the wait (a code typed now would go nowhere).
      if (this.target.ended) throw this.target.taskEnded();
    }
  }
}
