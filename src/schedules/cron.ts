// Validation of saved-task schedules before they reach Temporal, and the schedule ID we
// derive for them. Client-side only: node:crypto and croner would not load in the
// workflow sandbox, so workflow code must not import this module.
//
// The Temporal server parses `spec.cronExpressions` itself, in a dialect that differs from
// croner's, and reports problems late and tersely. We accept the subset both read the same
// way (checked against Temporal Server 1.32 and its calendar.go), so croner can check values,
// ranges and steps and find the next run:
// - Exactly 5 fields. Temporal reads a 6th field as the year and 7 fields as second..year,
//   while croner reads 6 fields as second-first: "0 0 9 * * *" would run at midnight on the
//   9th, not at 09:00. So no seconds and no years.
// - @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly in lower case, as
//   Temporal matches them exactly (it refuses "@DAILY"). Not @every: Temporal makes it an
//   interval spec with its own phase rules. Not @reboot, CRON_TZ= or TZ=: the schedule's
//   timezone field is the one place for the zone.
// - Entries *, N, N-M, each with an optional /S, and names JAN-DEC and SUN-SAT. Not ?, L, W
//   or # (Temporal refuses them, or reads "5#3" as every Friday), not ranges that wrap or end
//   on SUN (croner reads that SUN as 7, Temporal as 0).
// - Temporal runs a day only when day-of-month and day-of-week both match, so croner is told
//   to do the same (domAndDow), and an expression that matches no date at all is refused.
import { createHash } from 'node:crypto';
import { Cron } from 'croner';

const FIELDS = [
  { name: 'minute', max: 59, size: 60, allowed: '0-59' },
  { name: 'hour', max: 23, size: 24, allowed: '0-23' },
  { name: 'day-of-month', max: 31, size: 31, allowed: '1-31' },
  { name: 'month', max: 12, size: 12, allowed: '1-12 or JAN-DEC' },
  { name: 'day-of-week', max: 7, size: 7, allowed: '0-7 (0 and 7 are Sunday) or SUN-SAT' },
] as const;
type Field = (typeof FIELDS)[number];

const CRONER = { mode: '5-part', domAndDow: true } as const;
const FIELD_LIST = FIELDS.map((f) => f.name).join(' ');
const PREDEFINED = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];
const PREDEFINED_LIST = PREDEFINED.join(', ');
const EXAMPLE = '"0 9 * * MON-FRI"';
// One comma-separated entry: `*` or a value or range (numbers or 3-letter names), then `/S`.
const ENTRY = /^(?:\*|([0-9]+|[a-z]{3})(?:-([0-9]+|[a-z]{3}))?)(?:\/([0-9]+))?$/i;

/**
 * Problems with a cron expression as we accept it for a Temporal Schedule's
 * `spec.cronExpressions`; an empty array means it is valid.
 */
export function cronProblems(expression: unknown): string[] {
  if (typeof expression !== 'string') {
    return [`cron expression must be a string such as ${EXAMPLE}, but it is ${describeType(expression)}`];
  }
  const trimmed = expression.trim();
  const quoted = JSON.stringify(trimmed);
  if (trimmed === '') {
    return [
      `cron expression is empty; it must have 5 fields (${FIELD_LIST}) such as ${EXAMPLE}, or be one of ${PREDEFINED_LIST}`,
    ];
  }
  if (trimmed.startsWith('@')) {
    if (PREDEFINED.includes(trimmed)) return [];
    if (PREDEFINED.includes(trimmed.toLowerCase())) {
      return [
        `cron expression ${quoted} must be written in lower case, as ${JSON.stringify(trimmed.toLowerCase())}, because Temporal matches shorthands exactly`,
      ];
    }
    if (/^@every\b/i.test(trimmed)) {
      return [
        `cron expression ${quoted} uses @every, which is not supported; write a 5-field expression such as "*/5 * * * *" or use one of ${PREDEFINED_LIST}`,
      ];
    }
    if (trimmed === '@reboot') {
      return [
        `cron expression "@reboot" is not supported because Temporal schedules have no reboot event; use a 5-field expression or one of ${PREDEFINED_LIST}`,
      ];
    }
    return [
      `cron expression ${quoted} is not a supported shorthand; use one of ${PREDEFINED_LIST} or a 5-field expression such as ${EXAMPLE}`,
    ];
  }
  if (/^(CRON_TZ|TZ)=/i.test(trimmed)) {
    return [
      `cron expression ${quoted} starts with a time zone prefix; set the schedule's timezone instead and leave the expression with 5 fields (${FIELD_LIST})`,
    ];
  }
  const parts = trimmed.split(/\s+/);
  if (parts.length === 6 || parts.length === 7) {
    return [
      `cron expression ${quoted} has ${parts.length} fields, but only 5 fields (${FIELD_LIST}) are supported; seconds and years fields are not`,
    ];
  }
  if (parts.length !== 5) {
    return [
      `cron expression ${quoted} has ${parts.length} field${parts.length === 1 ? '' : 's'}, but it must have exactly 5 (${FIELD_LIST}), such as ${EXAMPLE}`,
    ];
  }

  const problems = parts.flatMap((part, i) => part.split(',').flatMap((entry) => entryProblems(i, entry)));
  if (problems.length > 0) return problems;
  const normalized = parts
    .map((part, i) =>
      part
        .split(',')
        .map((entry) => forCroner(FIELDS[i]!, entry))
        .join(','),
    )
    .join(' ');
  if (new Cron(normalized, CRONER).nextRun() === null) {
    return [
      `cron expression ${quoted} matches no date, so the schedule would never run; check that the day-of-month exists in the month (and falls on the day-of-week, as Temporal requires both)`,
    ];
  }
  return [];
}

function entryProblems(index: number, entry: string): string[] {
  const field = FIELDS[index]!;
  const grammar = `each entry must be *, N, N-M, */S, N/S or N-M/S with N and M in ${field.allowed}`;
  const has = `cron field "${field.name}" has ${show(entry)}`;
  const shape = ENTRY.exec(entry);
  if (shape === null) {
    if (entry === '') return [`cron field "${field.name}" has an empty entry in a comma list, but ${grammar}`];
    if (/[?#]|[LW]$/i.test(entry)) return [`${has}, but ?, L, W and # are not supported; ${grammar}`];
    return [`${has}, but ${grammar}`];
  }
  const [, start, end, step] = shape;
  const wraps = `cron field "${field.name}" has range ${show(entry)}, but a range must be ascending (N-M with N <= M); use a comma list for ranges that wrap around`;
  if (field.name === 'day-of-week' && end?.toUpperCase() === 'SUN') {
    return [
      `cron field "day-of-week" has range ${show(entry)}, but a range cannot end on SUN, which is 0; end it on 7 instead, as in "${start}-7"`,
    ];
  }
  // Each entry is checked on its own, so every bad field gets a message, not just the first.
  try {
    new Cron(FIELDS.map((_, i) => (i === index ? forCroner(field, entry) : '*')).join(' '), CRONER);
    return [];
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (end !== undefined && /larger than/.test(message)) return [wraps];
    if (step !== undefined && /stepping|steps/.test(message)) {
      return [
        `cron field "${field.name}" has step ${step} in ${show(entry)}, but a step must be a whole number from 1 to ${field.size}`,
      ];
    }
    return [
      `${has}, but ${start !== undefined && (end !== undefined || step !== undefined) ? 'its values' : 'it'} must be ${field.allowed}`,
    ];
  }
}

// Temporal reads N/S as N-max/S; croner only knows that spelling with its sloppyRanges
// option, which also takes "/S" and does not range-check N, so we spell it out.
function forCroner(field: Field, entry: string): string {
  return entry.replace(/^([0-9a-z]+)\/([0-9]+)$/i, `$1-${field.max}/$2`);
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
    return [
      `timezone ${JSON.stringify(tz)} must be spelled exactly as in the IANA database: ${JSON.stringify(resolved)}`,
    ];
  }
  return [];
}

const SCHEDULE_ID_PREFIX = 'browserai-saved-';
const MAX_SLUG_LENGTH = 40;
const HASH_LENGTH = 8;

/**
 * The Temporal schedule ID for a saved task. Deterministic so every process finds the same
 * schedule for the same name without storing the ID; the slug keeps it readable in the
 * Temporal UI, and the hash of the exact name (UTF-8, not normalised) keeps names that slug
 * alike ("Daily Report", "daily-report", all-non-ASCII names) apart.
 */
export function scheduleIdFor(savedTaskName: string): string {
  const slug = savedTaskName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG_LENGTH)
    // Truncation can end the slug on a separator.
    .replace(/-+$/, '');
  const hash = createHash('sha256').update(savedTaskName, 'utf8').digest('hex').slice(0, HASH_LENGTH);
  return slug === '' ? `${SCHEDULE_ID_PREFIX}${hash}` : `${SCHEDULE_ID_PREFIX}${slug}-${hash}`;
}
