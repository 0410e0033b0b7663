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
