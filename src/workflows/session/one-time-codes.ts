// The rule that makes a one-time code safe to send from a workflow: each code is typed at most
// once (unless the caller forces it), and every code the session received is masked wherever the
// session shows BrowserAI's text (a log line may echo what was typed).

/** The codes of a session, carried across continue-as-new inside the session's record. */
export interface CodeRecord {
  /** Every code received, in arrival order (for masking). */
  received: string[];
  /** Codes that may have reached BrowserAI: answered, or sent with an unknown outcome. */
  typed: string[];
  /** Codes BrowserAI refused (it asked again right after them): never typed again, even when forced. */
  refused?: string[];
}

export class OneTimeCodes {
  constructor(private readonly record: CodeRecord) {}

  /**
   * Why a submitted code must not be queued, or null when it may be. `inHand` are the codes queued
   * or on the wire: a second submit of one of them would type it twice.
   */
  refusal(code: string, force: boolean, inHand: readonly string[]): string | null {
    if (this.record.refused?.includes(code))
      return 'BrowserAI refused this code already; it is never typed again. Send a new code.';
    if (force || !(this.record.typed.includes(code) || inHand.includes(code))) return null;
    return 'this task already typed (or queued) this code. Send it with force: true to type it again.';
  }

  received(code: string): void {
    if (!this.record.received.includes(code)) this.record.received.push(code);
  }

  typed(code: string): void {
    this.record.typed.push(code);
  }

  /** BrowserAI asked again right after the last code typed: that code was refused. */
  lastTypedRefused(): void {
    const last = this.record.typed.at(-1);
    if (last === undefined) return;
    (this.record.refused ??= []).push(last);
  }

  /** What an activity masks in BrowserAI's text (nothing to pass when no code was received). */
  get toMask(): { codes?: string[] } {
    return this.record.received.length > 0 ? { codes: this.record.received } : {};
  }

  /** The codes to mask in what the workflow itself shows (current details). */
  get secrets(): readonly string[] {
    return this.record.received;
  }
}
