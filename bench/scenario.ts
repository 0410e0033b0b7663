// What every scenario gets and gives back: the settings and the run's environment in, one
// Markdown section (with its targets judged) and its raw per-task data out.
import type { BenchConfig } from './config';
import type { TargetRow } from './report/markdown';
import type { RunEnvironment } from './report/environment';

export interface ScenarioContext {
  config: BenchConfig;
  env: RunEnvironment;
}

export interface ScenarioReport {
  /** The `## ` heading its section is found by in BENCHMARKS.md. */
  heading: string;
  markdown: string;
  rows: TargetRow[];
  raw: unknown;
}

/** Emulator queue time of every scenario: a task reports `queued` this long after its create (as the old bench). */
export const QUEUE_MS = 500;
