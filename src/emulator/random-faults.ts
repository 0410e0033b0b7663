// Random faults for chaos tests: every API request may, with a set probability, fail the way a
// real network or an overloaded service does. The choices come from a small seeded PRNG, so a run
// that found a bug can be repeated with the same seed (given the same order of requests).

import type { Fault } from './faults';

/**
 * The faults a random-fault run chooses from: a 500, a 429, a request left hanging, or an answer lost after the
 * request was handled.
 */
export type RandomFaultKind = 'server-error' | 'rate-limited' | 'hang' | 'answer-lost';

/** Every random fault kind, the default choice. */
export const RANDOM_FAULT_KINDS: readonly RandomFaultKind[] = ['server-error', 'rate-limited', 'hang', 'answer-lost'];

/** Seed used when none is given: runs are reproducible by default. */
export const DEFAULT_RANDOM_FAULT_SEED = 1;

/** Random faults on API requests: how often, from which seed, and of which kinds. */
export interface RandomFaultOptions {
  /** Probability (0 to 1) that an API request gets a fault. */
  rate: number;
  /** PRNG seed (an integer); default 1. */
  seed?: number;
  /**
   * Faults to choose from, uniformly; default all four: `server-error` (500 Internal server
   * error), `rate-limited` (429 with `Retry-After: 1`), `hang` (never answered) and `answer-lost`
   * (performed for real, then the connection is destroyed).
   */
  kinds?: RandomFaultKind[];
}

/** The queued-fault form of each kind, so random faults take the same paths as injected ones. */
const FAULTS: Record<RandomFaultKind, Fault> = {
  'server-error': { status: 500 },
  'rate-limited': { status: 429, retryAfterSeconds: 1 },
  hang: { hang: true },
  'answer-lost': { dropAfterHandling: true },
};

export class RandomFaults {
  private settings: Required<RandomFaultOptions> | undefined;
  private random = mulberry32(DEFAULT_RANDOM_FAULT_SEED);
  private readonly counts = zeroCounts();

  /** Replaces the settings and reseeds; undefined turns random faults off. Throws RangeError on invalid options. */
  set(options: RandomFaultOptions | undefined): void {
    if (options === undefined) {
      this.settings = undefined;
      return;
    }
    const checked = randomFaultOptionsFrom(options);
    if (typeof checked === 'string') throw new RangeError(`Invalid randomFaults: ${checked}`);
    this.settings = {
      rate: checked.rate,
      seed: checked.seed ?? DEFAULT_RANDOM_FAULT_SEED,
      kinds: [...(checked.kinds ?? RANDOM_FAULT_KINDS)],
    };
    this.random = mulberry32(this.settings.seed);
  }

  get options(): RandomFaultOptions | undefined {
    return this.settings && { ...this.settings, kinds: [...this.settings.kinds] };
  }

  /** Decides the fate of one request: a fault (counted) or undefined. */
  draw(): { kind: RandomFaultKind; fault: Fault } | undefined {
    const settings = this.settings;
    if (!settings || settings.rate <= 0) return undefined;
    if (this.random() >= settings.rate) return undefined;
    const kind =
      settings.kinds[Math.min(settings.kinds.length - 1, Math.floor(this.random() * settings.kinds.length))]!;
    this.counts[kind] += 1;
    return { kind, fault: { ...FAULTS[kind] } };
  }

  /** Faults injected so far by kind, since the emulator started (changing the settings keeps the counts). */
  get injected(): Record<RandomFaultKind, number> {
    return { ...this.counts };
  }
}

/** Validates options given in-process or as JSON to the control endpoint; a string is the problem found. */
export function randomFaultOptionsFrom(value: unknown): RandomFaultOptions | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object';
  const { rate, seed, kinds } = value as Record<string, unknown>;
  if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) return 'rate must be a number from 0 to 1';
  const options: RandomFaultOptions = { rate };
  if (seed !== undefined) {
    if (!Number.isInteger(seed)) return 'seed must be an integer';
    options.seed = seed as number;
  }
  if (kinds !== undefined) {
    if (!Array.isArray(kinds) || kinds.length === 0) return 'kinds must be a non-empty array';
    for (const kind of kinds) {
      if (!RANDOM_FAULT_KINDS.includes(kind))
        return `kinds: unknown kind ${JSON.stringify(kind)} (known: ${RANDOM_FAULT_KINDS.join(', ')})`;
    }
    options.kinds = [...kinds] as RandomFaultKind[];
  }
  return options;
}

function zeroCounts(): Record<RandomFaultKind, number> {
  return { 'server-error': 0, 'rate-limited': 0, hang: 0, 'answer-lost': 0 };
}

/** mulberry32: a tiny 32-bit PRNG, plenty for choosing faults, and the same sequence for the same seed. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
