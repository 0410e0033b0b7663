// What every provider's request comes down to, once its signature holds: one message, to one
// address, from one sender, with its text. The text never leaves the inbox process.

/** A message a provider delivered, verified. */
export interface ArrivedMessage {
  /** The provider's ID of the message, prefixed with the provider's name: a retry carries the same. */
  messageId: string;
  /** The address it was sent to, as the provider gave it (normalised by the inbox). */
  to: string;
  /** Its sender, as the provider gave it. */
  from: string;
  /** What it says (subject and text, for an email). */
  text: string;
}

/** Why a request is refused before anything is done: the HTTP status and a sentence for the caller. */
export interface Refused {
  status: number;
  error: string;
}

export function refused(status: number, error: string): Refused {
  return { status, error };
}
