// Input requests: each time a task starts to await input, one request with its own sequence
// number, told through every channel (the nextInputRequest update, webhooks, the parent signal).
// This file decides what a request is: its kind (a code or instructions), its prompt, and whether
// the codes typed for it were refused.
import { patched } from '@temporalio/workflow';
import { redactCodes } from '../../browserai/redact';
import { CODE_REFUSED_ONLY_ON_SAME_FORM } from '../patches';
import type { InputRequest, InputRequestKind } from '../../contract/messages';

/** What a later run needs of the requests, carried across continue-as-new in the session's record. */
export interface InputRequestRecord {
  /** The latest request, still open or answered (null before the first). */
  latest: InputRequest | null;
  /** Whether the task still waits on `latest`. */
  open: boolean;
  /** What the last input sent was: a code request right after a code means BrowserAI refused that code. */
  lastSent: SentInput | null;
  /** Codes refused in a row for the current code form. */
  refusedInARow: number;
  /** TOTP time steps whose code the worker typed: never typed twice, and masked by the activities. */
  totpSteps: number[];
  /**
   * The code form the latest code request showed, as fingerprints (never the text): the line it
   * waited on and BrowserAI's output then. A later code request that shows both again, or says the
   * code was refused, is a refusal; anything else means the task moved on. Absent in runs
   * continued from before it existed.
   */
  codeForm?: { line: number; output: number };
  /** Webhook events created so far: they number the events' webhook-ids. */
  webhookEvents: number;
}

export function newInputRequestRecord(): InputRequestRecord {
  return { latest: null, open: false, lastSent: null, refusedInARow: 0, totpSteps: [], webhookEvents: 0 };
}

/** A caller's code, a TOTP code the worker typed, or instructions. */
export type SentInput = 'code' | 'totp' | 'instructions';

/** How many progress lines make the prompt, and how long it may be: enough to read, bounded in history. */
const PROMPT_LINES = 3;
export const PROMPT_CHARS = 1_000;

/**
 * A line that says the code typed was refused, in the words sites use ("invalid code", "the code
 * has expired", "not accepted, try again").
 */
const SAYS_REFUSED =
  /\b(not accepted|invalid|incorrect|wrong|expired|rejected|denied|did ?n[o']t work|try again|not valid)\b/i;

/** A prompt that asks for a code, in the words sites and BrowserAI's engine use. */
const ASKS_FOR_CODE =
  /\b(codes?|otp|totp|passcode|one[- ]time|verification|verify|2fa|mfa|two[- ]factor|authenticator|pin)\b/i;

export interface TaskFacts {
  awaitable: boolean;
  totpSecretName: string | undefined;
  maxCodeAttempts: number;
  /** Where the inbox waits for the task's codes, masked; null without a codeRecipient. */
  codeRecipient: string | null;
}

export interface RequestContext {
  workflowId: string;
  executionId: string;
  project: string;
  sinceMs: number;
  timesOutAtMs: number;
  progress: { status?: string; logs: string[] };
  /** The `result` BrowserAI shows now (its output so far), or undefined. */
  output: unknown;
  /** The task's codes, masked in the prompt (the activities masked them already; this is a second line). */
  secrets: readonly string[];
}

/**
 * The verdict on a new wait: the request to tell, or the codes refused too often. `refusedCode`
 * says which kind of code BrowserAI just refused, if it refused one.
 */
export type Begun = ({ request: InputRequest } | { tooManyRefused: number }) & { refusedCode: 'code' | 'totp' | null };

export class InputRequests {
  constructor(
    private readonly record: InputRequestRecord,
    private readonly task: TaskFacts,
  ) {}

  get latest(): InputRequest | null {
    return this.record.latest;
  }

  /** The request the task waits on now, if any. */
  get open(): InputRequest | null {
    return this.record.open ? this.record.latest : null;
  }

  get totpSteps(): readonly number[] {
    return this.record.totpSteps;
  }

  /**
   * A wait for input began: a new request. A code request right after a code means BrowserAI
   * refused that code, unless the task visibly moved on (another form, new output: a payment
   * confirmation after a login), which resets the count; after `maxCodeAttempts` refusals in a row
   * there is no request, only the verdict (the session then stops the task).
   */
  begin(context: RequestContext): Begun {
    const record = this.record;
    const prompt = promptOf(context.progress, context.secrets);
    const lastLine = context.progress.logs.at(-1) ?? '';
    const kind = this.#kindOf(lastLine);
    const lastSent = record.lastSent;
    const form = { line: fingerprint(lastLine), output: fingerprint(JSON.stringify(context.output ?? null)) };
    const afterCode = kind === 'code' && (lastSent === 'code' || lastSent === 'totp');
    const movedOn = afterCode && this.#movedOnFrom(record.codeForm, form, lastLine);
    const refusedCode = afterCode && !movedOn ? lastSent : null;
    if (refusedCode) record.refusedInARow++;
    else if (kind === 'instructions' || movedOn) record.refusedInARow = 0;
    if (kind === 'code') record.codeForm = form;
    record.lastSent = null;
    if (kind === 'code' && record.refusedInARow >= this.task.maxCodeAttempts)
      return { tooManyRefused: record.refusedInARow, refusedCode };
    const answeredBy = kind === 'code' && this.task.totpSecretName ? 'worker' : 'caller';
    const request: InputRequest = {
      sequence: (record.latest?.sequence ?? 0) + 1,
      kind,
      answeredBy,
      prompt,
      refusedCodes: kind === 'code' ? record.refusedInARow : 0,
      ...(kind === 'code' ? { attemptsLeft: this.task.maxCodeAttempts - record.refusedInARow } : {}),
      since: new Date(context.sinceMs).toISOString(),
      timesOutAt: new Date(context.timesOutAtMs).toISOString(),
      workflowId: context.workflowId,
      executionId: context.executionId,
      project: context.project,
      ...(kind === 'code' && answeredBy === 'caller' && this.task.codeRecipient
        ? { codeRecipient: this.task.codeRecipient }
        : {}),
    };
    record.latest = request;
    record.open = true;
    return { request, refusedCode };
  }

  /** The task stopped waiting (input arrived, or it moved on by itself). */
  close(): void {
    this.record.open = false;
  }

  /** Input reached BrowserAI: what it was decides whether the next code request means a refusal. */
  sent(what: SentInput): void {
    this.record.lastSent = what;
    if (what === 'instructions') this.record.refusedInARow = 0;
  }

  totpTyped(step: number): void {
    this.record.totpSteps.push(step);
  }

  /** The number of the next webhook event (1, 2, ...), never reused across runs. */
  nextWebhookEvent(): number {
    return ++this.record.webhookEvents;
  }

  /**
   * Whether a code request after a code shows a task that moved on: a line that does not say the
   * code was refused, and another form or new output than the request the code answered. A re-ask
   * of the same form with nothing new is a refusal (and so is anything in runs from before).
   */
  #movedOnFrom(
    before: InputRequestRecord['codeForm'],
    now: NonNullable<InputRequestRecord['codeForm']>,
    lastLine: string,
  ): boolean {
    if (!before || SAYS_REFUSED.test(lastLine)) return false;
    if (before.line === now.line && before.output === now.output) return false;
    return patched(CODE_REFUSED_ONLY_ON_SAME_FORM);
  }

  /**
   * The rule documented on `InputRequestKind`, read from the line BrowserAI shows last (the one
   * it waits on: earlier lines may be about a code already taken).
   */
  #kindOf(lastLine: string): InputRequestKind {
    if (!this.task.awaitable) return 'code';
    if (ASKS_FOR_CODE.test(lastLine)) return 'code';
    if (this.task.totpSecretName && this.record.latest === null) return 'code';
    return 'instructions';
  }
}

/** A 32-bit FNV-1a fingerprint: tells two texts apart without keeping them in history. */
function fingerprint(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/** BrowserAI's last progress lines, masked and bounded: what it shows while it waits. */
export function promptOf(progress: { status?: string; logs: string[] }, secrets: readonly string[]): string {
  const text = redactCodes(progress.logs.slice(-PROMPT_LINES).join('\n'), secrets);
  return text.length <= PROMPT_CHARS ? text : `…${text.slice(text.length - PROMPT_CHARS + 1)}`;
}
