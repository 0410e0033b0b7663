// The answer-shaping switches read from the environment, in one place: the standalone emulator
// (main.ts) and the test stack both use it, so `BROWSERAI_EMULATOR_MODE=documented` means the
// same everywhere and a typo is refused the same way.

import {
  EMULATOR_MODES,
  ENDED_TASK_ANSWERS,
  isEmulatorMode,
  isEndedTaskAnswer,
  type EmulatorMode,
  type EndedTaskAnswer,
} from './mode';

/** The environment variable that sets the emulator's mode (`observed` or `documented`). */
export const MODE_ENV = 'BROWSERAI_EMULATOR_MODE';
/**
 * The environment variable that sets the emulator's answer to an instruction or a stop for an ended task (400, 404 or
 * 409).
 */
export const ENDED_ANSWER_ENV = 'BROWSERAI_EMULATOR_ENDED_ANSWER';

/** The options the environment sets; an unset (or empty) variable leaves its option out, so the emulator's default applies. */
export interface EmulatorOptionsFromEnv {
  mode?: EmulatorMode;
  endedTaskAnswer?: EndedTaskAnswer;
}

/**
 * Reads `BROWSERAI_EMULATOR_MODE` (`observed` | `documented`, case-insensitive) and
 * `BROWSERAI_EMULATOR_ENDED_ANSWER` (`400` | `404` | `409`). Throws an Error naming the variable
 * and the accepted values for anything else: a misspelt mode must not silently test the other one.
 */
export function emulatorOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): EmulatorOptionsFromEnv {
  const options: EmulatorOptionsFromEnv = {};
  const mode = env[MODE_ENV]?.trim().toLowerCase();
  if (mode) {
    if (!isEmulatorMode(mode)) {
      throw new Error(`${MODE_ENV} must be one of ${EMULATOR_MODES.join(', ')}; got ${JSON.stringify(env[MODE_ENV])}`);
    }
    options.mode = mode;
  }
  const ended = env[ENDED_ANSWER_ENV]?.trim();
  if (ended) {
    const status = /^\d+$/.test(ended) ? Number(ended) : NaN;
    if (!isEndedTaskAnswer(status)) {
      throw new Error(
        `${ENDED_ANSWER_ENV} must be one of ${ENDED_TASK_ANSWERS.join(', ')}; got ${JSON.stringify(env[ENDED_ANSWER_ENV])}`,
      );
    }
    options.endedTaskAnswer = status;
  }
  return options;
}
