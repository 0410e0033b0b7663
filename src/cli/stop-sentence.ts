// The CLI's one sentence about a task's stop. It never says "stopped" unless BrowserAI took the stop.

/** What became of the BrowserAI task, as the workflow recorded it: never "stopped" unless BrowserAI took the stop. */
export function stopSentence(
  stopConfirmed: boolean | null | undefined,
  executionId: string | null | undefined,
): string {
  if (!executionId) return 'No BrowserAI task had been created.';
  if (stopConfirmed === true) return `BrowserAI task ${executionId} was stopped.`;
  if (stopConfirmed === false) {
    return `The stop of BrowserAI task ${executionId} could NOT be confirmed: it may still be running. Stop it from the BrowserAI dashboard.`;
  }
  return `BrowserAI task ${executionId} had ended; no stop was needed.`;
}
