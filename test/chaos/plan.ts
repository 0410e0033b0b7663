// What the run will do, decided up front from the seed: which workflows, of which kind, started
// when, with which one-time code and when they are cancelled. TOTP workflows start around the
// deploy, so their waits for a time step meet it. The workflow ID is written into
// the first instruction so every task the emulator holds can be traced back to its workflow.
import type { BrowserTaskInput } from '../../src/contract/input';
import type { Mix } from './config';
import type { Random } from '../../dev/random';

export type WorkflowKind = 'plain' | 'otp' | 'cancel' | 'fail' | 'totp';
export const KINDS: readonly WorkflowKind[] = ['plain', 'otp', 'cancel', 'fail', 'totp'];

/** The TOTP secret the workers hold and the emulator checks (30-s steps, the default). */
export const CHAOS_TOTP_NAME = 'chaos';
export const CHAOS_TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
/** TOTP workflows start this long before the deploy, spread over TOTP_START_SPREAD_MS. */
const TOTP_START_LEAD_MS = 15_000;
const TOTP_START_SPREAD_MS = 30_000;

/** How each kind should end when nothing goes wrong. */
export const EXPECTED_OUTCOME: Record<WorkflowKind, string> = {
  plain: 'completed',
  otp: 'completed',
  cancel: 'cancelled',
  fail: 'failed: BrowserAITaskFailed',
  totp: 'completed',
};

/** Running time of the emulated task, in seconds (a one-time-code task runs this long after the code). */
const TASK_SECONDS: Record<WorkflowKind, [number, number]> = {
  plain: [3, 20],
  otp: [3, 10],
  // Long enough that a cancel a few seconds in always meets a running task.
  cancel: [20, 40],
  fail: [3, 10],
  totp: [3, 10],
};

export interface PlannedWorkflow {
  workflowId: string;
  kind: WorkflowKind;
  /** From the first start. */
  startAtMs: number;
  taskSeconds: number;
  input: BrowserTaskInput;
  /** One-time-code workflows: a 6-digit code, unique in the run. */
  code?: string;
  /** Cancelled workflows: right as the create reaches BrowserAI, or a while after the task is seen running. */
  cancelAt?: 'create' | 'running';
  cancelDelayMs?: number;
}

/** Workflow counts per kind, by largest remainder, so they add up to exactly `total`. */
export function countsByKind(total: number, mix: Mix): Record<WorkflowKind, number> {
  const sum = KINDS.reduce((acc, kind) => acc + mix[kind], 0);
  const exact = KINDS.map((kind) => ({ kind, value: (total * mix[kind]) / sum }));
  const counts = Object.fromEntries(exact.map(({ kind, value }) => [kind, Math.floor(value)])) as Record<
    WorkflowKind,
    number
  >;
  let left = total - KINDS.reduce((acc, kind) => acc + counts[kind], 0);
  for (const { kind } of [...exact].sort((a, b) => (b.value % 1) - (a.value % 1))) {
    if (left-- <= 0) break;
    counts[kind] += 1;
  }
  return counts;
}

/** The workflow ID as written into a task's first instruction, or undefined for other text. */
export function workflowIdInInstruction(action: string | undefined): string | undefined {
  return action ? /^Chaos task (\S+) /.exec(action)?.[1] : undefined;
}

export function planWorkflows(
  options: { workflows: number; mix: Mix; startSpreadMs: number; deadlineMs: number; deployAtMs: number },
  rng: Random,
): PlannedWorkflow[] {
  const counts = countsByKind(options.workflows, options.mix);
  const kinds = rng.shuffle(KINDS.flatMap((kind) => Array.from({ length: counts[kind] }, () => kind)));
  const usedCodes = new Set<string>();
  const width = String(options.workflows).length;
  return kinds.map((kind, index) => {
    const workflowId = `chaos-${String(index + 1).padStart(width, '0')}-${kind}`;
    const [min, max] = TASK_SECONDS[kind];
    const taskSeconds = rng.int(min, max);
    // A TOTP task refuses its first code, so the worker must wait for a later step (up to 30 s)
    // before it types the second: the wait a deploy meets.
    const markers = [
      kind === 'otp' ? '[needs-code]' : '',
      kind === 'totp' ? `[needs-totp=${CHAOS_TOTP_NAME}] [rejects-code]` : '',
      kind === 'fail' ? '[fail]' : '',
      `[duration=${taskSeconds}s]`,
    ].filter(Boolean);
    const planned: PlannedWorkflow = {
      workflowId,
      kind,
      startAtMs:
        kind === 'totp'
          ? Math.max(0, options.deployAtMs - TOTP_START_LEAD_MS + Math.round(rng.next() * TOTP_START_SPREAD_MS))
          : Math.round(rng.next() * options.startSpreadMs),
      taskSeconds,
      input: {
        instructions: [{ action: `Chaos task ${workflowId} ${markers.join(' ')}` }],
        type: 'crawler_automation',
        project: 'chaos',
        geoLocation: { country: 'US' },
        // Short polling and heartbeats, so a killed worker's poll moves on within seconds.
        polling: { initialIntervalMs: 500, maxIntervalMs: 3_000, heartbeatTimeoutMs: 10_000 },
        // Past the deadline: a workflow never fails TaskTimeout inside the run, it is "not closed".
        timeoutMs: options.deadlineMs + 10 * 60_000,
        ...(kind === 'totp' ? { totpSecretName: CHAOS_TOTP_NAME } : {}),
      },
    };
    if (kind === 'otp') {
      let code: string;
      do code = String(rng.int(100_000, 999_999));
      while (usedCodes.has(code));
      usedCodes.add(code);
      planned.code = code;
    }
    if (kind === 'cancel') {
      planned.cancelAt = rng.chance(0.5) ? 'create' : 'running';
      planned.cancelDelayMs = planned.cancelAt === 'running' ? rng.int(1_000, 5_000) : 0;
    }
    return planned;
  });
}
