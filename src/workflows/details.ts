// The "current details" the Temporal UI shows for a running workflow (Markdown). They are
// read by whoever opens the UI, so they carry no instructions, and any one-time code that
// BrowserAI might echo in a progress line is masked.
import type { TaskResultsSummary } from '../contract/activity-types';
import type { BrowserTaskState } from '../contract/messages';
// Not '../browserai': its index pulls in the HTTP client, which must stay out of the workflow bundle.
import { redactCodes as redact } from '../browserai/redact';

const SHOWN_LOG_LINES = 3;

export function renderDetails(
  state: BrowserTaskState,
  results: TaskResultsSummary | null,
  secrets: readonly string[],
): string {
  const lines = [`**BrowserAI task** \`${state.executionId ?? 'not created yet'}\`: **${state.status}**`];
  const slot = state.fleetSlot;
  if (slot && !slot.held) {
    const place = slot.positionWhenQueued ? `, number ${slot.positionWhenQueued} in line when it asked` : '';
    lines.push(`Waiting for a fleet slot since ${slot.waitingSince}${place}; nothing was sent to BrowserAI yet.`);
  }
  if (state.awaitingInput) lines.push('Waiting for input: send `submitCode`, `appendInstructions` or `complete`.');
  const recipient = state.inputRequest?.codeRecipient;
  if (state.awaitingInput && recipient) lines.push(`Waiting for a one-time code at ${recipient}: the inbox types it.`);
  const message = state.inbox?.events.at(-1);
  if (message)
    lines.push(`Inbox: a message from ${message.from} at ${message.at}, ${message.outcome}: ${message.reason}.`);
  if (state.progress.status) lines.push(`Progress: ${redact(state.progress.status, secrets)}`);
  if (state.estimatedCompletion) lines.push(`Estimated completion: ${state.estimatedCompletion}`);
  if (state.pendingInstructions > 0) lines.push(`Instructions waiting to be sent: ${state.pendingInstructions}`);
  const logs = state.progress.logs.slice(-SHOWN_LOG_LINES);
  if (logs.length > 0) lines.push('', 'Latest progress:', ...logs.map((line) => `- ${redact(line, secrets)}`));
  const latest = results?.results.at(-1);
  if (latest) {
    const links = (['screenshot_url', 'html_url', 'console_url'] as const)
      .filter((key) => typeof latest[key] === 'string' && latest[key])
      .map((key) => `[${key.replace('_url', '')}](${latest[key]})`);
    if (links.length > 0) lines.push('', `Latest step: ${links.join(' · ')}`);
  }
  if (state.error) lines.push('', `Error: ${redact(state.error, secrets)}`);
  return lines.join('\n');
}
