// One-time codes as MCP input requests. A tool call that meets a task waiting for a code answers
// `input_required` (protocol 2026-07-28; for a 2025 client the SDK's shim sends it as
// `elicitation/create` and calls the tool again with the answer) with a one-field form, keyed by the
// request's sequence number (unique over the task's life, as the Tasks extension asks of keys), and
// a `requestState` naming the task, the code request and the call, sealed with the server's key
// (HMAC-SHA256, the SDK's codec). The state holds no secret: it is signed, not encrypted.
import { createHash, randomBytes } from 'node:crypto';
import {
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type InputRequest as McpInputRequest,
  type InputRequiredResult,
  type RequestStateCodec,
} from '@modelcontextprotocol/server';
import type { InputRequest } from '../contract/messages';
import { typedCodeProblems } from './wait-for-task';

/** What a code request's `requestState` says: which task, request and call it belongs to. */
export interface CodeRequestState {
  /** The task's workflow ID. */
  workflowId: string;
  /** The code request's sequence number (InputRequest.sequence). */
  sequence: number;
  /** The tool called, and a digest of its arguments: the state answers this call only. */
  tool: string;
  argsDigest: string;
  /** Times the form was shown for this request: a malformed answer is asked again, up to 3 times. */
  asked: number;
  /** Progress notifications sent so far in this call, so their count keeps rising across rounds. */
  progressSent: number;
}

/** The answer a retried call carries for a code request. */
export type CodeAnswer =
  { code: string } | { malformed: string[] } | { none: 'declined' | 'cancelled' } | { missing: true };

/** How many times one request's form is shown before the call gives up asking (malformed answers). */
export const MAX_ASKS = 3;
/** How long a minted state is good for; the open request it names is checked as well. */
const STATE_TTL_SECONDS = 60 * 60;

/** The key under which a code request travels in `inputRequests` and `inputResponses`. */
export function codeInputKey(sequence: number): string {
  return `code-${sequence}`;
}

/** The sequence number a key of {@link codeInputKey} names, or undefined. */
export function sequenceOfKey(key: string): number | undefined {
  const match = /^code-([1-9]\d{0,15})$/.exec(key);
  return match ? Number(match[1]) : undefined;
}

/**
 * The codec of code request states. The key must be the same on every server instance a client may
 * reach (behind a load balancer, or a restarted process); none given, a random one serves this
 * process only.
 */
export function codeStateCodec(key: string | Uint8Array | undefined): RequestStateCodec<CodeRequestState> {
  const bytes = typeof key === 'string' ? Buffer.byteLength(key) : key?.length;
  if (bytes !== undefined && bytes < 32)
    throw new TypeError(
      `The MCP state key (BROWSERAI_MCP_STATE_KEY) must be at least 32 bytes (got ${bytes}): openssl rand -base64 32`,
    );
  return createRequestStateCodec<CodeRequestState>({
    key: key ?? randomBytes(32),
    ttlSeconds: STATE_TTL_SECONDS,
    // A state minted for tools/call is refused on any other method.
    bind: (ctx) => ctx.mcpReq.method,
  });
}

/** A digest of a call's arguments (key order ignored): the state of one call is refused on another. */
export function argumentsDigest(args: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(args)).digest('base64url');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The form that asks the user for the code of `request` (its prompt is masked by the workflow). */
export function codeForm(request: InputRequest, retryReason?: string): McpInputRequest {
  const message = retryReason
    ? `That was not a one-time code (${retryReason}). Please type the code again.`
    : `BrowserAI task ${request.workflowId} (project ${request.project}) asks for a one-time code.` +
      (request.refusedCodes > 0 ? ` The last code was refused (${request.attemptsLeft ?? '?'} attempts left).` : '') +
      (request.prompt ? `\n\nThe page says:\n${request.prompt}` : '');
  return inputRequired.elicit({
    message,
    requestedSchema: {
      type: 'object',
      properties: {
        code: {
          type: 'string',
          title: 'One-time code',
          description: 'Letters, digits or dashes',
          minLength: 1,
          maxLength: 64,
        },
      },
      required: ['code'],
    },
  });
}

/** `input_required` for the code of `request`, with its sealed state. */
export async function askForCode(
  codec: RequestStateCodec<CodeRequestState>,
  state: CodeRequestState,
  request: InputRequest,
  ctx: Parameters<RequestStateCodec['mint']>[1],
  retryReason?: string,
): Promise<InputRequiredResult> {
  return inputRequired({
    inputRequests: { [codeInputKey(request.sequence)]: codeForm(request, retryReason) },
    requestState: await codec.mint(state, ctx),
  });
}

/** The answer to the code request `sequence` among a retry's (or a tasks/update's) input responses. */
export function codeAnswer(responses: Record<string, unknown> | undefined, sequence: number): CodeAnswer {
  const view = inputResponse(responses, codeInputKey(sequence));
  if (view.kind === 'missing') return { missing: true };
  if (view.kind !== 'elicit') return { malformed: ['the answer is not a form'] };
  if (view.action === 'decline') return { none: 'declined' };
  if (view.action === 'cancel') return { none: 'cancelled' };
  const code = typeof view.content?.code === 'string' ? view.content.code.trim() : view.content?.code;
  const problems = typedCodeProblems(code);
  return problems.length > 0 ? { malformed: problems } : { code: code as string };
}
