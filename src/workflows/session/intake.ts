// What callers send a task (appendInstructions, replaceInstructions, submitCode, addInstructions),
// checked and queued. Signals never fail the caller: an invalid or late one is logged and dropped.
// The update refuses in its validator, before anything is in history. What passes goes into the
// outbox in arrival order; the sender (sender.ts) takes it from there.
import { ApplicationFailure, log, patched } from '@temporalio/workflow';
import type { TaskExecutionAnswer } from '../../contract/activity-types';
import type { Instruction } from '../../contract/browserai-types';
import { FailureType } from '../../contract/errors';
import { MAX_QUEUED_BYTES, type OutgoingInstructions } from '../../contract/input';
import { instructionProblems } from '../../contract/input-problems';
import { codeInstruction, codeProblems, passedOldCodeCheck } from '../../contract/one-time-codes';
import { jsonBytes } from '../../contract/text';
import { SHORT_CODES_REFUSED } from '../patches';
import type { OneTimeCodes } from './one-time-codes';
import type { Outbox } from './outbox';

/** What the intake needs of the session it queues for. */
export interface IntakeTarget {
  /** Nothing more will happen to the task: it takes no more input. */
  readonly ended: boolean;
  taskEnded(): ApplicationFailure;
  /** Shows the queue's new length (`state`, the UI). */
  publish(): void;
}

export class Intake {
  constructor(
    private readonly outbox: Outbox,
    private readonly codes: OneTimeCodes,
    private readonly codeInstructionTemplate: string | undefined,
    private readonly session: IntakeTarget,
  ) {}

  /** appendInstructions and replaceInstructions: never fail the caller; invalid or late ones are logged and dropped. */
  acceptInstructions(signal: string, kind: OutgoingInstructions['kind'], instructions: unknown): void {
    const bad = instructionProblems(instructions);
    if (bad.length > 0) return log.warn(`Ignored ${signal} signal with invalid instructions`, { problems: bad });
    if (this.session.ended) return log.warn(`Ignored ${signal} signal: the task has ended`);
    const item: OutgoingInstructions = { kind, instructions: instructions as Instruction[] };
    const full = this.#refusal(item);
    if (full) return log.warn(`Ignored ${signal} signal: ${full}`);
    this.enqueue(item);
  }

  /**
   * submitCode (and a code the inbox brings): queued once, whatever retries or repeats the caller
   * sends. Returns why it was ignored (logged), or null once queued.
   */
  acceptCode(code: unknown, force: boolean, signal = 'submitCode'): string | null {
    const ignored = (reason: string) => {
      log.warn(`Ignored ${signal} signal: ${reason}`);
      return reason;
    };
    const problems = codeProblems(code);
    // A code of 1 to 3 characters was typed before 0.2.0: a history that typed one replays as it ran.
    if (
      typeof code !== 'string' ||
      (problems.length > 0 && !(passedOldCodeCheck(code) && !patched(SHORT_CODES_REFUSED)))
    )
      return ignored(problems.join('; '));
    if (this.session.ended) return ignored('the task has ended');
    const refusal = this.codes.refusal(code, force, this.outbox.codesInHand);
    if (refusal) return ignored(refusal);
    const item: OutgoingInstructions = {
      kind: 'append',
      instructions: [codeInstruction(this.codeInstructionTemplate, code)],
      code,
    };
    const full = this.#refusal(item);
    if (full) return ignored(full);
    this.codes.received(code);
    this.enqueue(item);
    return null;
  }

  /** The addInstructions update's validator: refuses before anything is sent. */
  checkAddInstructions(instructions: unknown): void {
    const bad = instructionProblems(instructions);
    if (bad.length > 0) {
      throw ApplicationFailure.nonRetryable(`Invalid instructions: ${bad.join('; ')}`, FailureType.InvalidInput);
    }
    if (this.session.ended) throw this.session.taskEnded();
    const full = this.#refusal({ kind: 'append', instructions: instructions as Instruction[] });
    if (full) throw ApplicationFailure.nonRetryable(`Instructions refused: ${full}`, FailureType.InvalidInput);
  }

  /**
   * Why `item` cannot be queued: the instructions waiting to be sent would exceed MAX_QUEUED_BYTES,
   * so continue-as-new could no longer carry them (input.ts). Null when it can.
   */
  #refusal(item: OutgoingInstructions): string | null {
    const bytes = this.outbox.bytes + jsonBytes(item);
    return bytes <= MAX_QUEUED_BYTES
      ? null
      : `the instructions waiting to be sent would be ${bytes} bytes of JSON, over the ${MAX_QUEUED_BYTES} a task holds. ` +
          'Send fewer or shorter instructions, or wait until those queued are sent.';
  }

  /** The addInstructions update: BrowserAI's answer to this append, or why it was not sent. */
  addInstructions(instructions: Instruction[]): Promise<TaskExecutionAnswer> {
    return this.outbox.outcomeOf(this.enqueue({ kind: 'append', instructions }));
  }

  /** Queues an item for the sender; its number is what outcomeOf waits for. */
  enqueue(item: OutgoingInstructions): number {
    const id = this.outbox.enqueue(item);
    this.session.publish();
    return id;
  }
}
