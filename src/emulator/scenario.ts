// The emulator's behaviour is chosen by markers written into the instruction texts, so a test,
// a starter or the benchmark can ask for any situation through the ordinary public API, with no
// side channel and without the client knowing it talks to an emulator.

/** How long a `[slow]` task runs: long enough to outlive the short timeouts tests use. */
export const SLOW_DURATION_MS = 30_000;
/** How long a `[needs-code]` task runs before it stops at the one-time-code form. */
export const CODE_WAIT_MS = 500;
/** The failure a `[fail]` task reports: a realistic browser error, not an emulator-specific one. */
export const FAIL_ERROR = 'Navigation failed: net::ERR_NAME_NOT_RESOLVED';
/** Upper bound of `[large=...]`, so a typo cannot make the emulator allocate gigabytes. */
export const MAX_LARGE_BYTES = 64 * 1024 * 1024;

/** A one-time code as a person would type it: a standalone number of 4 to 8 digits. */
const CODE_PATTERN = /(?<!\d)\d{4,8}(?!\d)/g;

const DURATION_MARKER = /\[duration\s*=\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*\]/i;
const LARGE_MARKER = /\[large\s*=\s*(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m|gb|g)?\s*\]/i;

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

export interface Scenario {
  /** Length of every running phase. */
  durationMs: number;
  /** `[needs-code]`: the run stops in `awaiting` until an appended instruction carries a code. */
  needsCode: boolean;
  /** `[fail]`: the run ends in `failed` with {@link FAIL_ERROR}. */
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
}

export interface ScenarioSource {
  instructions: ReadonlyArray<{ action: string }>;
  awaitable?: boolean;
}

/**
 * Reads the markers of every action of a create request (case-insensitive, anywhere in the text).
 * An explicit `[duration=...]` wins over `[slow]`; a bare duration number is milliseconds and a
 * bare size is bytes; KB and MB are binary (1024).
 */
export function parseScenario(source: ScenarioSource, defaultDurationMs: number): Scenario {
  const text = source.instructions.map((instruction) => instruction.action).join('\n');
  const has = (marker: string): boolean => text.toLowerCase().includes(`[${marker}]`);

  let durationMs = has('slow') ? SLOW_DURATION_MS : defaultDurationMs;
  const duration = DURATION_MARKER.exec(text);
  if (duration) {
    durationMs = Math.round(Number(duration[1]) * DURATION_UNIT_MS[(duration[2] ?? 'ms').toLowerCase()]!);
  }

  let largeResultBytes: number | null = null;
  const large = LARGE_MARKER.exec(text);
  if (large) {
    const bytes = Math.round(Number(large[1]) * SIZE_UNIT_BYTES[(large[2] ?? 'b').toLowerCase()]!);
    largeResultBytes = Math.min(bytes, MAX_LARGE_BYTES);
  }

  return {
    durationMs: Math.max(0, durationMs),
    needsCode: has('needs-code'),
    fail: has('fail'),
    largeResultBytes,
    unknownStatus: has('unknown-status'),
    uppercaseStatus: has('uppercase-status'),
    noEta: has('no-eta'),
    awaitable: source.awaitable === true,
  };
}

/** The one-time codes found in instruction texts, in order. */
export function extractCodes(actions: readonly string[]): string[] {
  return actions.flatMap((action) => action.match(CODE_PATTERN) ?? []);
}
