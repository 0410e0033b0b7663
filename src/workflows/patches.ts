// The patch IDs of browserTask's changes to its command sequence (docs/design/recorded-histories.md,
// "The rule"): a
// workflow that ran before a change replays the old branch (patched() is false), one that meets
// the change first runs the new branch and records a marker. Each ID stays until every release
// that could have started a workflow without it is unsupported (then deprecatePatch()).

/**
 * A TOTP code not due yet is waited for with a workflow timer, not inside the typing activity:
 * a worker shut down or lost during the wait then costs nothing (docs/design/totp-timing.md).
 */
export const TOTP_WAIT_IN_WORKFLOW = 'totp-wait-in-workflow';

/**
 * A code request after a code counts that code refused only when the task shows the same form
 * and nothing new (docs/one-time-codes.md): a task that moved on to a second form took the code.
 */
export const CODE_REFUSED_ONLY_ON_SAME_FORM = 'code-refused-only-on-same-form';

/**
 * A code of 1 to 3 letters or digits is refused (one-time-codes.ts MIN_CODE_CHARS); workflows that ran
 * before it typed such a code, and replay as they ran (docs/one-time-codes.md).
 */
export const SHORT_CODES_REFUSED = 'short-codes-refused';

/**
 * A nextInputRequest update waits at most INPUT_WAIT_MS.max (a timer), so waits nobody reads
 * drain by themselves (docs/design/waiters-and-children.md); older waits had no bound.
 */
export const BOUNDED_INPUT_WAITS = 'bounded-input-waits';

/**
 * Webhook delivery children are named from the first run's ID, not the workflow ID alone, so a
 * reused workflow ID gets children of its own (docs/design/waiters-and-children.md).
 */
export const WEBHOOK_CHILD_ID_PER_RUN_CHAIN = 'webhook-child-id-per-run-chain';
