// The workflow IDs of the tasks Nexus callers start, and how a later operation proves it started
// one. The handler mints each ID under a prefix of its own with an unguessable part, and hands it
// to the caller only inside `runTask`'s operation token. `state`, `submitCode` and cancel take that
// token back and act only on an ID of this shape: so a caller reaches the tasks it started and no
// other (not a client's task in the namespace, whose ID has no such part, nor another caller's,
// whose unguessable part it never saw).
import { createHash } from 'node:crypto';

/** Every task started through the Nexus service has a workflow ID that starts with this. */
export const NEXUS_TASK_ID_PREFIX = 'browserai-nexus-';

/** The unguessable part: 128 bits, as 32 lowercase hex digits. */
const NEXUS_TASK_ID = new RegExp(`^${NEXUS_TASK_ID_PREFIX}[0-9a-f]{32}$`);

/**
 * The workflow ID of the task a `runTask` request starts. From the Nexus request ID, which the
 * caller's server draws at random for each operation and repeats on every retry of it: a retried
 * start names the same workflow (and Temporal deduplicates it), and no other caller can derive it.
 * Hashed, so the ID has one shape whatever the request ID looks like.
 */
export function nexusTaskId(requestId: string): string {
  return (
    NEXUS_TASK_ID_PREFIX + createHash('sha256').update(`browserai-nexus-task\0${requestId}`).digest('hex').slice(0, 32)
  );
}

/**
 * The workflow ID inside an operation token from `runTask`, when the token is one (in `namespace`,
 * for a workflow this service minted); otherwise undefined. The token's format is Temporal's
 * workflow-run token: base64url of `{"t":1,"ns":...,"wid":...}`.
 */
export function nexusTaskIdFromToken(token: unknown, namespace: string): string | undefined {
  if (typeof token !== 'string' || token.length === 0 || token.length > 4096) return undefined;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!decoded || typeof decoded !== 'object') return undefined;
  const { t, ns, wid } = decoded as { t?: unknown; ns?: unknown; wid?: unknown };
  return t === 1 && ns === namespace && typeof wid === 'string' && NEXUS_TASK_ID.test(wid) ? wid : undefined;
}
