// Flag values of the bench and the chaos run, each checked with a message that names the flag.

export function integer(flag: string, raw: string, min: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${flag} must be an integer >= ${min} (got "${raw}")`);
  return value;
}

export function fraction(flag: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || value > 1)
    throw new Error(`--${flag} must be between 0 and 1 (got "${raw}")`);
  return value;
}

/** `500ms`, `30s`, `12m`, `1h`; a bare number is seconds. */
export function duration(flag: string, raw: string, min = 1): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(raw);
  const ms = match
    ? Number(match[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h']
    : NaN;
  if (!Number.isFinite(ms) || ms < min)
    throw new Error(`--${flag} must be a duration such as 500ms, 30s or 12m (got "${raw}")`);
  return Math.round(ms);
}

/**
 * Flag values as given to a harness: `PREFIX_<FLAG>` environment variables first, `--flag value`
 * or `--flag=value` over them. `booleans` need no value (`--quick`). Unknown flags throw with `usage`.
 */
export function flagValues(
  argv: string[],
  env: NodeJS.ProcessEnv,
  options: { prefix: string; known: readonly string[]; booleans?: readonly string[]; usage: string },
): Map<string, string> {
  const values = new Map<string, string>();
  for (const name of options.known) {
    const value = env[`${options.prefix}_${name.toUpperCase().replace(/-/g, '_')}`];
    if (value) values.set(name, value);
  }
  for (let i = 0; i < argv.length; i++) {
    const name = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]!)?.[1];
    if (!name || !options.known.includes(name)) throw new Error(`Unknown argument "${argv[i]}"\n\n${options.usage}`);
    const inline = argv[i]!.includes('=') ? argv[i]!.slice(argv[i]!.indexOf('=') + 1) : undefined;
    const value = inline ?? (options.booleans?.includes(name) ? '1' : argv[++i]);
    if (value === undefined) throw new Error(`--${name} needs a value\n\n${options.usage}`);
    values.set(name, value);
  }
  return values;
}

/** How a harness was asked for, for its report: `npm run NAME -- ARGS` or `node SCRIPT ARGS`, with the env prefix's variables. */
export function commandLine(npmScript: string, script: string, envPrefix: string): string {
  const fromEnv = Object.keys(process.env)
    .filter((name) => name.startsWith(`${envPrefix}_`) && process.env[name])
    .map((name) => `${name}=${process.env[name]}`);
  const args = process.argv.slice(2);
  const viaNpm = process.env.npm_lifecycle_event === npmScript;
  const base = viaNpm ? `npm run ${npmScript}` : `node ${script}`;
  return [...fromEnv, base, ...(viaNpm && args.length > 0 ? ['--', ...args] : args)].join(' ');
}
