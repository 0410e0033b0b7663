// Number formatting for the report and the progress lines: one place, so every table rounds alike.

/** `n/a` for a missing or non-finite value, else fixed digits. */
export const fmt = (value: number | undefined, digits = 1): string =>
  value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits);

/** Milliseconds below 10 s, seconds above (one decimal). */
export const fmtMs = (ms: number | undefined): string =>
  ms === undefined || !Number.isFinite(ms)
    ? 'n/a'
    : ms >= 10_000
      ? `${(ms / 1000).toFixed(1)} s`
      : `${Math.round(ms)} ms`;

/** Whole numbers without decimals, others with one. */
export const fmtCount = (value: number | undefined): string =>
  value === undefined ? 'n/a' : fmt(value, value % 1 ? 1 : 0);

/** A ratio such as `0.42×`. */
export const fmtRatio = (value: number | undefined): string =>
  value === undefined || !Number.isFinite(value) ? 'n/a' : `${value.toFixed(2)}×`;

export const mb = (kb: number): number => kb / 1024;

export function log(message: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
}
