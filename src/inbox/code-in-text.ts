// Finding the one-time code in a message, the same way every time: a number of 4 to 10 digits
// (or two groups of 3, or of 4, `482 913`, `482-913`) that stands near a word such as "code", "OTP"
// or "verification". Exactly one such code is typed; none, or several different ones, and
// nothing is (the inbox reports why). A project whose messages say it otherwise gets a pattern.

import type { FoundCode } from '../contract/inbox-messages';

/** Only the beginning of a message is read: codes come first, and a long email's footer has numbers of its own. */
export const READ_CHARS = 4_000;
/** How far from a word that names a code the code may stand, before or after it. */
const NEAR_BEFORE = 40;
const NEAR_AFTER = 80;

const NAMES_A_CODE =
  /\b(?:codes?|otp|passcodes?|pass codes?|one[- ]time|verification|verify|pin|2fa|mfa|two[- ]factor|security code|authentication|login|sign[- ]in|confirmation)\b/gi;
/**
 * A candidate: not part of a longer number, a word, a phone number (`+1 415 555 0100`) or a
 * decimal; a one-letter prefix (`G-482913`, as Google sends it) is left off.
 */
const CANDIDATE =
  /(?:(?<=(?:^|[^\w-])[A-Z]-)|(?<![\w+.,/-]|\d[ -]))(\d{3}[ -]\d{3}|\d{4}[ -]\d{4}|\d{4,10})(?![\w.,/:-]?\d|[ -]\d)(?![\w-])/g;

/**
 * The code in `text`: with `pattern`, every match of its first group (or of the whole pattern);
 * otherwise the default rule above. Separators are dropped (`482 913` is typed `482913`).
 */
export function findCode(text: string, pattern?: RegExp): FoundCode {
  const read = text.slice(0, READ_CHARS);
  const found = new Set<string>();
  if (pattern) {
    for (const match of read.matchAll(new RegExp(pattern.source, withGlobal(pattern.flags))))
      found.add((match[1] ?? match[0]).replace(/[\s-]/g, ''));
  } else {
    const near: Array<[number, number]> = [...read.matchAll(NAMES_A_CODE)].map((m) => [
      m.index - NEAR_BEFORE,
      m.index + m[0].length + NEAR_AFTER,
    ]);
    for (const match of read.matchAll(CANDIDATE)) {
      const at = match.index;
      if (near.some(([from, to]) => at >= from && at <= to)) found.add(match[1]!.replace(/[\s-]/g, ''));
    }
  }
  found.delete('');
  if (found.size === 1) return { code: [...found][0]! };
  return { refused: found.size === 0 ? 'no-code' : 'several-codes' };
}

function withGlobal(flags: string): string {
  return flags.includes('g') ? flags : `${flags}g`;
}

/**
 * A per-project pattern as configured (`BROWSERAI_INBOX_CODE_PATTERNS`): a regular expression
 * whose first capture group (or whole match) is the code. Throws a TypeError naming the problem.
 */
export function codePattern(project: string, source: string): RegExp {
  let pattern: RegExp;
  try {
    pattern = new RegExp(source, 'g');
  } catch (err) {
    throw new TypeError(
      `the code pattern of project ${project} is not a regular expression: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (pattern.test(''))
    throw new TypeError(`the code pattern of project ${project} matches an empty text: make it match the code`);
  return pattern;
}
