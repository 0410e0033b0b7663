// From a verified message to its recipient (docs/design/inbox.md): the code is read here (with the
// default rule and each project's pattern: which task, and so which project, is the recipient's
// decision), and the message is recorded in the recipient's workflow with signal-with-start,
// durable before the provider is answered and whether or not a worker runs. The recipient then
// decides which task it is for and tells that task. The message's text never leaves this process.
import type { Client } from '@temporalio/client';
import { RECIPIENT_WORKFLOW_TYPE, recipientWorkflowId } from '../activities/code-recipient';
import { maskedAddress, normalAddress, normalSender } from '../contract/code-recipient';
import { messageArrivedSignal, type FoundCode } from '../contract/inbox-messages';
import type { ArrivedMessage } from './arrived-message';
import { findCode } from './code-in-text';

/** What became of a message: recorded at its recipient (`accepted`), or refused, and why (for the log and the answer). */
export interface Delivery {
  outcome: 'accepted' | 'refused';
  reason: string;
  /** The recipient, masked. */
  to?: string;
}

/** What delivering needs: a Temporal client, where a recipient's workflow starts, the projects' code patterns. */
export interface DeliveryOptions {
  client: Client;
  taskQueue: string;
  /** By project; `*` for every project not named. */
  codePatterns?: Record<string, RegExp>;
  /** How long Temporal may take to record the message; default 10 s (then the provider is told to retry). */
  recordTimeoutMs?: number;
}

/** Records a message at its recipient; throws only when Temporal does not take it (the provider should retry). */
export async function deliver(message: ArrivedMessage, options: DeliveryOptions): Promise<Delivery> {
  const to = normalAddress(message.to);
  if (to === null) return { outcome: 'refused', reason: 'its recipient is not a phone number or an email address' };
  const { '*': defaultPattern, ...projects } = options.codePatterns ?? {};
  const codes: Record<string, FoundCode> = { '*': findCode(message.text, defaultPattern) };
  for (const [project, pattern] of Object.entries(projects)) codes[project] = findCode(message.text, pattern);
  const { client } = options;
  await client.connection.withDeadline(Date.now() + (options.recordTimeoutMs ?? 10_000), () =>
    client.workflow.signalWithStart(RECIPIENT_WORKFLOW_TYPE, {
      workflowId: recipientWorkflowId(to),
      taskQueue: options.taskQueue,
      args: [],
      signal: messageArrivedSignal,
      signalArgs: [
        {
          messageId: message.messageId,
          from: normalSender(message.from) ?? 'unknown',
          receivedAt: new Date().toISOString(),
          codes,
        },
      ],
      staticSummary: 'BrowserAI code recipient: which tasks wait for one-time codes at one address',
    }),
  );
  const found = codes['*'];
  return {
    outcome: 'accepted',
    reason:
      'code' in found! ? 'a code was read' : found!.refused === 'no-code' ? 'no code in it' : 'several codes in it',
    to: maskedAddress(to),
  };
}
