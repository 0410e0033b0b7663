// Why a task failed, as the `error` of `GET /tasks/{id}` carries it. BrowserAI's docs have an
// error catalogue naming kinds with numeric codes (compile, engine, AI, network, auth, unknown),
// but not where they appear in answers, and the public clients read `error` as a message string
// (docs/browserai.md). So `error` may be either: `observed` mode sends the object, with the
// catalogue's shape; `documented` mode sends its message. The numeric codes and the kind chosen
// for each failure below are a GUESS: the catalogue's numbers are not tied to any failure we saw.

import { FAIL_ERROR } from './scenario';

/**
 * A failed task's `error` as the emulator sends it in `observed` mode: a numeric code, a kind and a message (a guess
 * at BrowserAI's error catalogue).
 */
export interface EngineError {
  code: number;
  /** The catalogue's kind: `compile`, `engine`, `ai`, `network`, `auth` or `unknown`. */
  type: string;
  message: string;
}

/** A `[fail]` task: the page could not be reached. `message` may be replaced by a `[big-error=...]` text. */
export const NAVIGATION_FAILED: Readonly<EngineError> = { code: 3001, type: 'engine', message: FAIL_ERROR };

/** An `awaiting` session that got no instructions for `idleMs` and was closed by the engine. */
export function sessionClosedIdle(idleMs: number): EngineError {
  return {
    code: 3002,
    type: 'engine',
    message: `Browser session closed after being idle for ${formatSeconds(idleMs)}`,
  };
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(3).replace(/0+$/, '')} s`;
}
