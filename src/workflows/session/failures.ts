// Reading the failures activities end in, inside workflow code.
import { ApplicationFailure } from '@temporalio/workflow';

/** An activity failure's own error (the ApplicationFailure under the ActivityFailure). */
export function rootFailure(err: unknown): Error {
  if (err instanceof Error && err.cause instanceof Error) return err.cause;
  return err instanceof Error ? err : new Error(String(err));
}

/** The stable `type` of a failure (or of the activity failure's cause), if it has one. */
export function failureType(err: unknown): string | undefined {
  const root = rootFailure(err);
  return root instanceof ApplicationFailure ? (root.type ?? undefined) : undefined;
}
