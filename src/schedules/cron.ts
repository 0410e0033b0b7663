// Validation of saved-task schedules before they reach Temporal, and the schedule ID we
// derive for them.
//
// Temporal's own cron parser accepts more than we want to promise (seconds and years
// fields, `@every`, `L`/`W`/`#`, `CRON_TZ=` prefixes) and reports problems late, as a gRPC
// error from CreateSchedule with a terse message. Checking here lets us reject a bad
// expression where the user typed it, with a message that says what to write instead,
// and keeps the accepted language small enough to document and to test.
//
// This module must stay pure and import nothing: it is shared with workflow code, and the
// Temporal workflow sandbox neither has Node built-ins nor tolerates non-determinism.

interface CronField {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  // Index 0 is the name for `min`; names only exist for month and day-of-week.
  readonly names?: readonly string[];
  // Shown in messages instead of min-max when the field allows more than plain numbers.
  readonly allowed: string;
}

const CRON_FIELDS: readonly CronField[] = [
  { name: 'minute', min: 0, max: 59, allowed: '0-59' },
  { name: 'hour', min: 0, max: 23, allowed: '0-23' },
  { name: 'day-of-month', min: 1, max: 31, allowed: '1-31' },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
    allowed: '1-12 or JAN-DEC',
  },
  {
    name: 'day-of-week',
    // 7 is Sunday as well, because both conventions are common and Temporal accepts both.
    min: 0,
    max: 7,
    names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'],
    allowed: '0-7 (0 and 7 are Sunday) or SUN-SAT',
  },
];

const FIELD_LIST = CRON_FIELDS.map((f) => f.name).join(' ');

// The shorthands Temporal documents for cronExpressions, all of which mean a fixed
// calendar time, so they behave like an equivalent 5-field expression.
const PREDEFINED = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);
const PREDEFINED_LIST = [...PREDEFINED].join(', ');

const EXAMPLE = '"0 9 * * MON-FRI"';

/**
 * Problems with a cron expression as we accept it for a Temporal Schedule's
 * `spec.cronExpressions`; an empty array means it is valid.
 */
export function cronProblems(expression: unknown): string[] {
  if (typeof expression !== 'string') {
    return [`cron expression must be a string such as ${EXAMPLE}, but it is ${describeType(expression)}`];
  }
  const trimmed = expression.trim();
  if (trimmed === '') {
    return [`cron expression is empty; it must have 5 fields (${FIELD_LIST}) such as ${EXAMPLE}, or be one of ${PREDEFINED_LIST}`];
  }

  if (trimmed.startsWith('@')) return predefinedProblems(trimmed);

  // Temporal would honour these prefixes, but then the zone lives in two places and the
  // schedule's timezone field silently loses; one place is easier to reason about.
  if (/^(CRON_TZ|TZ)=/i.test(trimmed)) {
    return [`cron expression ${JSON.stringify(trimmed)} starts with a time zone prefix; set the schedule's timezone instead and leave the expression with 5 fields (${FIELD_LIST})`];
  }

  const parts = trimmed.split(/\s+/);
  if (parts.length === 6 || parts.length === 7) {
    return [`cron expression ${JSON.stringify(trimmed)} has ${parts.length} fields, but only 5 fields (${FIELD_LIST}) are supported; seconds and years fields are not`];
  }
  if (parts.length !== 5) {
    return [`cron expression ${JSON.stringify(trimmed)} has ${parts.length} field${parts.length === 1 ? '' : 's'}, but it must have exactly 5 (${FIELD_LIST}), such as ${EXAMPLE}`];
  }

  const problems: string[] = [];
  parts.forEach((part, i) => problems.push(...fieldProblems(CRON_FIELDS[i]!, part)));
  return problems;
}

function predefinedProblems(expression: string): string[] {
  const lower = expression.toLowerCase();
  if (PREDEFINED.has(lower)) return [];
  if (lower.startsWith('@every')) {
    // Intervals are a different kind of spec in Temporal (spec.intervals), with their own
    // phase semantics; accepting them here would hide that difference.
    return [`cron expression ${JSON.stringify(expression)} uses @every, which is not supported; write a 5-field expression such as "*/5 * * * *" or use one of ${PREDEFINED_LIST}`];
  }
  if (lower === '@reboot') {
    // A schedule has no notion of a machine booting, so there is nothing it could mean.
    return [`cron expression "@reboot" is not supported because Temporal schedules have no reboot event; use a 5-field expression or one of ${PREDEFINED_LIST}`];
  }
  return [`cron expression ${JSON.stringify(expression)} is not a supported shorthand; use one of ${PREDEFINED_LIST} or a 5-field expression such as ${EXAMPLE}`];
}

function fieldProblems(field: CronField, text: string): string[] {
  const problems: string[] = [];
  for (const item of text.split(',')) {
    const problem = itemProblem(field, item);
    if (problem !== undefined) problems.push(problem);
  }
  return problems;
}

// One comma-separated element: `*`, `N`, `N-M`, each optionally followed by `/S`.
function itemProblem(field: CronField, item: string): string | undefined {
  const prefix = `cron field "${field.name}"`;
  if (item === '') {
    return `${prefix} has an empty entry in a comma list, but each entry must be *, N, N-M, */S, N-M/S or N/S with N and M in ${field.allowed}`;
  }

  const slashParts = item.split('/');
  if (slashParts.length > 2) {
    return `${prefix} has ${show(item)}, but it may contain at most one "/" (as in */S, N-M/S or N/S)`;
  }
  const [base, stepText] = slashParts as [string, string | undefined];

  if (stepText !== undefined) {
    // Only digits: Number() would otherwise accept "1e2", "0x10" or " 5".
    if (!/^\d+$/.test(stepText) || Number(stepText) < 1) {
      return `${prefix} has step ${show(stepText)} in ${show(item)}, but a step must be a whole number of at least 1`;
    }
  }

  if (base === '*') return undefined;
  if (base === '') {
    return `${prefix} has ${show(item)}, but a step needs a start: use */S, N/S or N-M/S`;
  }

  const dash = base.split('-');
  if (dash.length > 2) {
    return `${prefix} has ${show(base)}, but a range must be N-M with N and M in ${field.allowed}`;
  }
  if (dash.length === 2) {
    const [startText, endText] = dash as [string, string];
    const start = valueOf(field, startText);
    if (typeof start === 'string') return `${prefix} has ${show(startText)} in ${show(item)}, but ${start}`;
    const end = valueOf(field, endText);
    if (typeof end === 'string') return `${prefix} has ${show(endText)} in ${show(item)}, but ${end}`;
    // Wrap-around ranges such as FRI-MON are read differently by different cron
    // dialects, so rather than guess we ask for a list.
    if (start > end) {
      return `${prefix} has range ${show(base)}, but a range must be ascending (N-M with N <= M); use a comma list for ranges that wrap around`;
    }
    return undefined;
  }

  const value = valueOf(field, base);
  if (typeof value === 'string') return `${prefix} has ${show(base)}, but ${value}`;
  return undefined;
}

// The numeric value of a single token, or the tail of a problem message.
function valueOf(field: CronField, token: string): number | string {
  if (/^\d+$/.test(token)) {
    const n = Number(token);
    if (n < field.min || n > field.max) return `it must be ${field.allowed}`;
    return n;
  }
  if (field.names !== undefined) {
    const index = field.names.indexOf(token.toUpperCase());
    if (index >= 0) return field.min + index;
  }
  if (token === '?' || token.includes('#') || /^(\d*L|\d+W|LW)$/i.test(token)) {
    // Quartz-style extensions that Temporal may parse but we do not document or test.
    return `?, L, W and # are not supported; it must be ${field.allowed}`;
  }
  return `it must be ${field.allowed}`;
}

// Numbers read naturally bare (`has 25`), anything else is quoted so spaces, empty
// strings and look-alike characters stay visible.
function show(value: string): string {
  return /^\d+$/.test(value) ? value : JSON.stringify(value);
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

const TZ_EXAMPLE = 'such as "Europe/Berlin" or "UTC"';

/**
 * Problems with a schedule time zone; undefined means "use the schedule default" (UTC in
 * Temporal) and is fine.
 */
export function timezoneProblems(tz: unknown): string[] {
  if (tz === undefined) return [];
  if (typeof tz !== 'string') {
    return [`timezone must be a string IANA time zone ${TZ_EXAMPLE}, but it is ${describeType(tz)}`];
  }
  // V8 accepts fixed offsets like "+01:00", but the Temporal server loads zones from the
  // IANA database and would refuse them; offsets also ignore daylight saving, which is
  // rarely what someone scheduling "9 o'clock" means.
  if (/^[+\-\u2212]/.test(tz)) {
    return [`timezone ${JSON.stringify(tz)} is a fixed UTC offset, not an IANA time zone ${TZ_EXAMPLE}`];
  }
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch (err) {
    if (err instanceof RangeError) {
      return [`timezone ${JSON.stringify(tz)} is not an IANA time zone ${TZ_EXAMPLE}`];
    }
    throw err;
  }
  // Intl matches zone names case-insensitively, but the server's IANA lookup is
  // case-sensitive, so "europe/berlin" would pass here and fail at CreateSchedule.
  if (resolved !== tz && resolved.toLowerCase() === tz.toLowerCase()) {
    return [`timezone ${JSON.stringify(tz)} must be spelled exactly as in the IANA database: ${JSON.stringify(resolved)}`];
  }
  return [];
}

const SCHEDULE_ID_PREFIX = 'browserai-saved-';
const MAX_SLUG_LENGTH = 40;

/**
 * The Temporal schedule ID for a saved task. Deterministic so every process (and a
 * workflow replay) finds the same schedule for the same name without storing the ID;
 * the slug keeps it readable in the Temporal UI, and the hash of the exact name keeps
 * names that slug alike ("Daily Report", "daily-report", all-non-ASCII names) apart.
 */
export function scheduleIdFor(savedTaskName: string): string {
  const slug = savedTaskName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG_LENGTH)
    // Truncation can end the slug on a separator.
    .replace(/-+$/, '');
  const hash = fnv1a32(utf8Bytes(savedTaskName)).toString(16).padStart(8, '0');
  return slug === '' ? `${SCHEDULE_ID_PREFIX}${hash}` : `${SCHEDULE_ID_PREFIX}${slug}-${hash}`;
}

// FNV-1a rather than a cryptographic hash: we only need a stable spread of short names,
// and node:crypto is not available inside the workflow sandbox. The name is hashed as-is
// (no Unicode normalisation), because the ID must follow the exact name the user saved.
function fnv1a32(bytes: readonly number[]): number {
  let hash = 0x811c9dc5;
  for (const byte of bytes) {
    hash ^= byte;
    // Math.imul keeps the multiply in 32 bits; a plain * would lose low bits to floats.
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

// Hand-rolled UTF-8 so the hash does not depend on TextEncoder being present in whatever
// runtime bundles this module. Lone surrogates become U+FFFD, as TextEncoder does, so the
// result matches a TextEncoder-based implementation byte for byte.
function utf8Bytes(text: string): number[] {
  const bytes: number[] = [];
  for (const char of text) {
    let cp = char.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp < 0x80) {
      bytes.push(cp);
    } else if (cp < 0x800) {
      bytes.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      bytes.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    } else {
      bytes.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    }
  }
  return bytes;
}
