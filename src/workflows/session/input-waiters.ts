// The callers waiting for the task's next input request (the nextInputRequest update). Each wait
// holds one of the 10 updates Temporal lets a workflow have in flight, whether or not its caller
// is still there (a Ctrl-C, a restarted service, a client timeout): past 10, the server refuses
// every update, addInstructions included. So a task keeps a few waiting, refuses more with a
// typed error, and answers each one within a bound, so waits nobody reads drain by themselves.
import { ApplicationFailure, condition, patched } from '@temporalio/workflow';
import { FailureType } from '../../contract/errors';
import { INPUT_WAIT_MS, MAX_INPUT_WAITERS, nextInputRequestProblems } from '../../contract/input-waits';
import { BOUNDED_INPUT_WAITS } from '../patches';

export class InputWaiters {
  /** nextInputRequest updates this run is running now. */
  #waiting = 0;
  /**
   * Updates the validator let in whose handler has not started yet: the SDK runs the validators
   * of an activation's updates before their handlers, so counting handlers alone would let a
   * burst of updates all in. Replay runs no validator, and leaves this at 0.
   */
  #admitted = 0;

  /** The update's validator: a refused update is never in flight, nor in history. */
  check(message: unknown): void {
    const problems = nextInputRequestProblems(message);
    if (problems.length > 0) throw ApplicationFailure.nonRetryable(problems.join('; '), FailureType.InvalidInput);
    const waiting = this.#waiting + this.#admitted;
    if (waiting < MAX_INPUT_WAITERS) {
      this.#admitted++;
      return;
    }
    throw ApplicationFailure.nonRetryable(
      `This task already has ${waiting} nextInputRequest updates waiting, the most it keeps, so that ` +
        'addInstructions always finds room (Temporal admits 10 updates in flight per workflow). Ask with an update ID ' +
        'already waiting to join its wait (BrowserTasks.nextInputRequest and wait-input use one per `after`), or ask ' +
        `again once one has answered: each answers within ${INPUT_WAIT_MS.max / 1_000} s.`,
      FailureType.TooManyWaiters,
    );
  }

  /**
   * Waits until `ready` holds, or `waitMs` (default and at most INPUT_WAIT_MS.max) passed. Runs
   * started before the bound existed replay their unbounded waits (no timer).
   */
  async wait(ready: () => boolean, waitMs: number | undefined): Promise<void> {
    if (this.#admitted > 0) this.#admitted--;
    this.#waiting++;
    try {
      if (patched(BOUNDED_INPUT_WAITS))
        await condition(ready, Math.min(waitMs ?? INPUT_WAIT_MS.max, INPUT_WAIT_MS.max));
      else await condition(ready);
    } finally {
      this.#waiting--;
    }
  }
}
