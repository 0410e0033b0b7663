/**
 * The inbox: where SMS and email providers post the messages that carry one-time codes, each code
 * typed once into the one task it was sent for (docs/one-time-codes.md, "The inbox").
 *
 * @module browserai-temporal/inbox
 */
export { inboxHandler, startInbox, type InboxOptions, type InboxServer, type InboxLogLine } from './server';
export { inboxOptionsFromEnv } from './config';
export { twilioSignature } from './twilio';
export { mailgunSignature } from './mailgun';
export type { Delivery } from './deliver';
