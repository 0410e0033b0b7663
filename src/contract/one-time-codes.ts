// What a one-time code may be, and the instruction that types it.
import type { Instruction } from './browserai-types';
import { DEFAULTS } from './input';

/**
 * The fewest letters and digits a one-time code may have. Codes are masked wherever they stand as a
 * word in BrowserAI's output (redactCodes): a shorter one would hide every "12" or "7" of a result
 * table, and real one-time codes have 4 to 10 (docs/design/masking-codes.md).
 */
export const MIN_CODE_CHARS = 4;
/** The longest code, dashes included. */
export const MAX_CODE_CHARS = 64;

export function codeProblems(code: unknown): string[] {
  if (typeof code !== 'string' || code.length > MAX_CODE_CHARS || !/^[A-Za-z0-9-]*$/.test(code))
    return [
      `code must be ${MIN_CODE_CHARS} to ${MAX_CODE_CHARS} letters, digits or dashes (the one-time code as the user received it)`,
    ];
  const significant = code.replace(/-/g, '').length;
  return significant >= MIN_CODE_CHARS
    ? []
    : [
        `code must have at least ${MIN_CODE_CHARS} letters or digits (got ${significant}): a shorter one cannot be ` +
          "masked in BrowserAI's output without hiding ordinary numbers; send the whole code as the user received it",
      ];
}

/** Whether a code passes the checks of release 0.1.0 (1 to 64 letters, digits or dashes): a running workflow's earlier codes did. */
export function passedOldCodeCheck(code: unknown): boolean {
  return typeof code === 'string' && /^[A-Za-z0-9-]{1,64}$/.test(code);
}

/** The instruction `submitCode` sends. */
export function codeInstruction(template: string | undefined, code: string): Instruction {
  return { action: (template ?? DEFAULTS.codeInstructionTemplate).split('{code}').join(code) };
}
