// The emulator's behaviour is chosen by markers written into the instruction texts, so a test,
// a starter or the benchmark can ask for any situation through the ordinary public API, with no
// side channel and without the client knowing it talks to an emulator.

/** How long a `[slow]` task runs: long enough to outlive the short timeouts tests use. */
export const SLOW_DURATION_MS = 30_000;
/** How long a `[needs-code]` task runs before it stops at the one-time-code form. */
export const CODE_WAIT_MS = 500;
/** The failure a `[fail]` task reports: a realistic browser error, not an emulator-specific one. */
export const FAIL_ERROR = 'Navigation failed: net::ERR_NAME_NOT_RESOLVED';
/** Upper bound of every size marker (`[large=...]`, `[big-logs=...]`, ...), so a typo cannot make the emulator allocate gigabytes. */
export const MAX_LARGE_BYTES = 64 * 1024 * 1024;
/**
 * How long a task that was `awaiting` keeps reporting `awaiting` after it received instructions.
 * Observed, not invented: BrowserAI's public MCP client waits 1 s after an append for this reason.
 */
export const DEFAULT_AWAITING_LAG_MS = 1_000;
/**
 * How long an `awaiting` session waits for instructions before the engine closes it (the task
 * then ends `failed`). A GUESS borrowed from Bright Data's separate headless-browser product,
 * whose idle sessions close after 5 minutes; nothing documents BrowserAI's own limit.
 */
export const DEFAULT_AWAITING_IDLE_CLOSE_MS = 5 * 60_000;

/** What the emulator logs when a task meets its next code form (`[code-forms=N]`). A GUESS. */
export const NEXT_CODE_FORM_LINE = 'Confirmation required: waiting for a one-time code';

/** A one-time code as a person would type it: a standalone number of 4 to 8 digits. */
const CODE_PATTERN = /(?<!\d)\d{4,8}(?!\d)/g;

/** `[name=90s]`: a number with an optional unit (ms, s, m, h); bare numbers are milliseconds. */
function durationMarker(name: string): RegExp {
  return new RegExp(`\\[${name}\\s*=\\s*(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)?\\s*\\]`, 'i');
}
/** `[name=5MB]`: a number with an optional unit (b, k/kb, m/mb, g/gb); bare numbers are bytes. */
function sizeMarker(name: string): RegExp {
  return new RegExp(`\\[${name}\\s*=\\s*(\\d+(?:\\.\\d+)?)\\s*(b|kb|k|mb|m|gb|g)?\\s*\\]`, 'i');
}

const DURATION_MARKER = durationMarker('duration');
const AWAITING_LAG_MARKER = durationMarker('awaiting-lag');
const NOT_VISIBLE_MARKER = durationMarker('not-visible');
const IDLE_CLOSE_MARKER = durationMarker('idle-close');
const LARGE_MARKER = sizeMarker('large');
const BIG_LOGS_MARKER = sizeMarker('big-logs');
const BIG_ERROR_MARKER = sizeMarker('big-error');
const LONG_STATUS_MARKER = sizeMarker('long-status');
const BIG_PROGRESS_MARKER = sizeMarker('big-progress');
const BIG_CREATE_MARKER = sizeMarker('big-create');
const CRAFTED_RESULT_MARKER = sizeMarker('crafted-result');
const DEEP_RESULT_MARKER = /\[deep-result\s*=\s*(\d{1,6})\s*\]/i;
const REJECT_CODES_MARKER = /\[reject-codes\s*=\s*(\d{1,2})\s*\]/i;
const CODE_FORMS_MARKER = /\[code-forms\s*=\s*(\d{1,2})\s*\]/i;
const NEEDS_TOTP_MARKER = /\[needs-totp\s*=\s*([A-Za-z0-9_]{1,64})\s*\]/i;
const CODE_TO_MARKER = /\[(sms|email)-code\s*=\s*([^\]\s][^\]]{0,253})\]/i;
const CODE_DELAY_MARKER = durationMarker('code-delay');

const DURATION_UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const SIZE_UNIT_BYTES: Record<string, number> = {
  b: 1,
  k: 1024,
  kb: 1024,
  m: 1024 * 1024,
  mb: 1024 * 1024,
  g: 1024 * 1024 * 1024,
  gb: 1024 * 1024 * 1024,
};

/**
 * How an emulated task behaves, read from the markers in its instructions (`[needs-code]`, `[fail]`, `[duration=90s]`,
 * ...).
 */
export interface Scenario {
  /** Length of every running phase. */
  durationMs: number;
  /** `[needs-code]` (or `[needs-totp=...]`): the run stops in `awaiting` until an appended instruction carries a code it accepts. */
  needsCode: boolean;
  /**
   * `[reject-codes=2]` (`[rejects-code]` is 1; either implies `[needs-code]`): the first codes are refused, each followed by the
   * code form again, as a site does with a wrong or expired code. How BrowserAI shows a refused
   * code is a GUESS: nothing documents it; the emulator logs "The one-time code was not accepted"
   * and asks again in `awaiting`, as it asks for the first code.
   */
  rejectCodes: number;
  /**
   * `[code-forms=2]` (implies `[needs-code]`; else 1): how many code forms the task meets. After a
   * form takes its code, the task runs its instructions (new results, new progress lines) and
   * then stops at the next form, as a payment confirmation follows a login. How BrowserAI shows a
   * second form is a GUESS: nothing documents it; the emulator logs
   * `Confirmation required: waiting for a one-time code` and waits in `awaiting`, as for the first.
   */
  codeForms: number;
  /**
   * `[needs-totp=NAME]`: a code task that accepts only the current TOTP code of the emulator's
   * secret NAME (`EmulatorOptions.totpSecrets`), checked for the time step in which it arrives.
   */
  totpSecretName: string | null;
  /**
   * `[sms-code=+14155550123]`, `[email-code=codes@example.com]` (either implies `[needs-code]`):
   * at each code form the task sends a new random 6-digit code to that address through the
   * emulator's inbox (`EmulatorOptions.inbox`), as a site does, and accepts only the code it sent
   * last. The site's wording ("Your verification code is …") and sender are the emulator's own.
   */
  codeTo: { channel: 'sms' | 'email'; address: string } | null;
  /** `[code-delay=2s]`: how long after the code form shows the message is sent (SMS and email take a while); default 0. */
  codeDelayMs: number;
  /** `[fail]`: the run ends in `failed` with the error `Navigation failed: net::ERR_NAME_NOT_RESOLVED`. */
  fail: boolean;
  /** `[large=...]`: byte length of the last result of each run; null for a short result. */
  largeResultBytes: number | null;
  /** `[unknown-status]`: `GET /tasks` reports a running task as `thinking`. */
  unknownStatus: boolean;
  /** `[uppercase-status]`: every reported status is upper-case. */
  uppercaseStatus: boolean;
  /** `[no-eta]`: `estimatedCompletion` is always null. */
  noEta: boolean;
  /** Create-request `awaitable: true`: the session waits in `awaiting` after each run. */
  awaitable: boolean;
  /**
   * `[awaiting-lag=2500ms]` (else the emulator's `awaitingLagMs`): how long an `awaiting` task
   * still reports `awaiting` after instructions were appended or replaced, before it runs them.
   */
  awaitingLagMs: number;
  /** `[big-logs=3MB]`: byte length of one extra log line written when the task starts running; null for none. */
  bigLogBytes: number | null;
  /** `[big-error=3MB]` (with `[fail]`): byte length of the `error` of the failed task; null for the short one. */
  bigErrorBytes: number | null;
  /**
   * `[not-visible=2s]`: for this long after the create, reads and stop commands answer 404
   * `Task not found` for the task. 0 when absent.
   */
  notVisibleMs: number;
  /**
   * `[idle-close=2s]` (else the emulator's `awaitingIdleCloseMs`): how long the task may wait in
   * `awaiting` with no instructions before the session closes and the task ends `failed`; 0 never.
   */
  idleCloseMs: number;
  // Hostile answers (hostile.ts): values no client may keep as they are. Nothing says BrowserAI
  // sends them; they are the shapes a client must survive.
  /** `[long-status=3000]`: while not ended, every status is this many characters (the real one first). */
  longStatusChars: number | null;
  /** `[big-progress=2.5MB]`: while not ended, `progress.status` of `GET /tasks` is this many bytes. */
  bigProgressBytes: number | null;
  /** `[deep-result=20000]`: each `result` (of `GET /tasks` and of every results entry) is JSON nested this many levels deep. */
  deepResultLevels: number | null;
  /** `[crafted-result=2MB]`: each `result` is this many bytes of `%3Fws=` repeated (every one a new inspector parameter). */
  craftedResultBytes: number | null;
  /** `[big-create=2.5MB]`: the answers of create, append and replace carry an extra field `debug` of this many bytes. */
  bigCreateBytes: number | null;
  /** `[secret-keys]`: each `result` is an object keyed by the browser's proxy URL, password included. */
  secretKeys: boolean;
}

/** What a scenario is read from: a task's instructions (their markers) and whether it is awaitable. */
export interface ScenarioSource {
  instructions: ReadonlyArray<{ action: string }>;
  awaitable?: boolean;
}

/**
 * Reads the markers of every action of a create request (case-insensitive, anywhere in the text).
 * An explicit `[duration=...]` wins over `[slow]`; a bare duration number is milliseconds and a
 * bare size is bytes; KB and MB are binary (1024).
 */
export function parseScenario(
  source: ScenarioSource,
  defaultDurationMs: number,
  defaultAwaitingLagMs: number = DEFAULT_AWAITING_LAG_MS,
  defaultIdleCloseMs: number = DEFAULT_AWAITING_IDLE_CLOSE_MS,
): Scenario {
  const text = source.instructions.map((instruction) => instruction.action).join('\n');
  const has = (marker: string): boolean => text.toLowerCase().includes(`[${marker}]`);
  const rejectCodes = Number(REJECT_CODES_MARKER.exec(text)?.[1] ?? (has('rejects-code') ? 1 : 0));
  const codeForms = Math.max(1, Number(CODE_FORMS_MARKER.exec(text)?.[1] ?? 1));
  const codeTo = CODE_TO_MARKER.exec(text);

  return {
    durationMs:
      readDuration(text, DURATION_MARKER) ?? (has('slow') ? SLOW_DURATION_MS : Math.max(0, defaultDurationMs)),
    needsCode: has('needs-code') || NEEDS_TOTP_MARKER.test(text) || rejectCodes > 0 || codeForms > 1 || codeTo !== null,
    rejectCodes,
    codeForms,
    totpSecretName: NEEDS_TOTP_MARKER.exec(text)?.[1] ?? null,
    codeTo: codeTo ? { channel: codeTo[1]!.toLowerCase() as 'sms' | 'email', address: codeTo[2]!.trim() } : null,
    codeDelayMs: readDuration(text, CODE_DELAY_MARKER) ?? 0,
    fail: has('fail'),
    largeResultBytes: readSize(text, LARGE_MARKER),
    unknownStatus: has('unknown-status'),
    uppercaseStatus: has('uppercase-status'),
    noEta: has('no-eta'),
    awaitable: source.awaitable === true,
    awaitingLagMs: readDuration(text, AWAITING_LAG_MARKER) ?? Math.max(0, defaultAwaitingLagMs),
    bigLogBytes: readSize(text, BIG_LOGS_MARKER),
    bigErrorBytes: readSize(text, BIG_ERROR_MARKER),
    notVisibleMs: readDuration(text, NOT_VISIBLE_MARKER) ?? 0,
    idleCloseMs: readDuration(text, IDLE_CLOSE_MARKER) ?? Math.max(0, defaultIdleCloseMs),
    longStatusChars: readSize(text, LONG_STATUS_MARKER),
    bigProgressBytes: readSize(text, BIG_PROGRESS_MARKER),
    deepResultLevels: DEEP_RESULT_MARKER.test(text) ? Number(DEEP_RESULT_MARKER.exec(text)![1]) : null,
    craftedResultBytes: readSize(text, CRAFTED_RESULT_MARKER),
    bigCreateBytes: readSize(text, BIG_CREATE_MARKER),
    secretKeys: has('secret-keys'),
  };
}

function readDuration(text: string, marker: RegExp): number | undefined {
  const match = marker.exec(text);
  return match ? Math.round(Number(match[1]) * DURATION_UNIT_MS[(match[2] ?? 'ms').toLowerCase()]!) : undefined;
}

/** Capped at {@link MAX_LARGE_BYTES}. */
function readSize(text: string, marker: RegExp): number | null {
  const match = marker.exec(text);
  if (!match) return null;
  return Math.min(Math.round(Number(match[1]) * SIZE_UNIT_BYTES[(match[2] ?? 'b').toLowerCase()]!), MAX_LARGE_BYTES);
}

/** The one-time codes found in instruction texts, in order. */
export function extractCodes(actions: readonly string[]): string[] {
  return actions.flatMap((action) => action.match(CODE_PATTERN) ?? []);
}
