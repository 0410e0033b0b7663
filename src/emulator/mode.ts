// Which answers the emulator gives. BrowserAI's interface description lists more fields than
// real answers were seen to carry (docs/browserai.md, "What real answers carry"), and a
// client built against the richer text breaks on the real thing. So the default, `observed`,
// answers as BrowserAI was seen to; `documented` keeps the description's richer answers for
// clients (and tests) that want to see the estimate, `started` and `progress` everywhere.

/**
 * - `observed` (default): create, append and replace answer `executionId`, `scriptType`, `status`
 *   and `geoLocation` only; `GET /tasks/{id}` has no `started`, `estimatedCompletion` or
 *   `scriptId`, carries `progress` only while the task has not ended, and a failed task's `error`
 *   is an object `{code, type, message}`.
 * - `documented`: the answers list every field of the interface description (`started`,
 *   `estimatedCompletion`, `scriptId`, `progress` in every state) and `error` is a string.
 */
export type EmulatorMode = 'observed' | 'documented';

/** Every emulator mode, for validating a setting. */
export const EMULATOR_MODES: readonly EmulatorMode[] = ['observed', 'documented'];

/** The emulator answers as BrowserAI was seen to unless told otherwise. */
export const DEFAULT_EMULATOR_MODE: EmulatorMode = 'observed';

/**
 * The status of the answer to an instruction (append, replace) or a stop command for a task that
 * has ended. No version of BrowserAI's documentation says what it is (none documents a 409):
 * - `400`: the documented 400 messages, `Invalid input` (instructions) and
 *   `Invalid command or task ID` (command), the closest documented answer;
 * - `404`: `Task not found`, as if an ended session were gone;
 * - `409`: `Task already ended`, what the emulator answered before (not documented anywhere).
 */
export type EndedTaskAnswer = 400 | 404 | 409;

/** Every status the emulator can answer an instruction or a stop for an ended task with. */
export const ENDED_TASK_ANSWERS: readonly EndedTaskAnswer[] = [400, 404, 409];

/** 400 in `observed` mode (a guess built only on documented answers), 409 in `documented` mode (the emulator's former answer). */
export function defaultEndedTaskAnswer(mode: EmulatorMode): EndedTaskAnswer {
  return mode === 'observed' ? 400 : 409;
}

export function isEmulatorMode(value: unknown): value is EmulatorMode {
  return (EMULATOR_MODES as readonly unknown[]).includes(value);
}

export function isEndedTaskAnswer(value: unknown): value is EndedTaskAnswer {
  return (ENDED_TASK_ANSWERS as readonly unknown[]).includes(value);
}
