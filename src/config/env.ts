// The toolbox every settings reader uses: the environment as a record, and numbers read from it.
// Each reader adds a problem (naming the variable, what it takes and what it got) and goes on with
// the fallback, so start-up reports everything that is wrong at once.

/** The process environment, or a test's. Empty counts as unset, as compose passes `${VAR:-}`. */
export type Env = Record<string, string | undefined>;

/** A whole number from `min` to `max` (inclusive); a problem, and the fallback, otherwise. */
export function integerFrom(
  env: Env,
  name: string,
  fallback: number,
  { min, max, unit }: { min: number; max: number; unit: string },
  problems: string[],
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
    problems.push(`${name} must be a whole number of ${unit} ${range} (got "${raw}")`);
    return fallback;
  }
  return value;
}

/** A positive number; a problem, and the fallback, otherwise. */
export function numberFrom(env: Env, name: string, fallback: number, problems: string[]): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    problems.push(`${name} must be a positive number (got "${raw}")`);
    return fallback;
  }
  return value;
}
