// The `browserTask` contract: its input and result, their defaults, and the table of input fields
// (bounds, what saved tasks may override, what an outside caller may set). Pure and free of Node
// built-ins, because both the workflow bundle and the starters import it. What is wrong with an
// input is input-problems.ts; what a code may be, one-time-codes.ts.
import type { Delivery, TrimReport } from './activity-types';
import type { GeoLocation, Instruction, ResultEntry, TaskType } from './browserai-types';
import type { CodeRecipient } from './code-recipient';
import { utf8Prefix } from './text';

/** How a task is polled: the gaps between polls, the detection time wanted, and how often the poll reports back. */
export interface PollingOptions {
  /**
   * First and shortest gap between two `GET /tasks` calls; default 1 s, at least 250 ms.
   * @minimum 250
   * @maximum 60000
   */
  initialIntervalMs?: number;
  /**
   * Longest gap; default 30 s, at most 10 min.
   * @minimum 250
   * @maximum 600000
   */
  maxIntervalMs?: number;
  /**
   * A poll whose worker died (SIGKILL, lost machine) or whose result was lost in a Temporal outage
   * is retried on another worker within this long (plus 1 s); default 55 s (1 s to 1 h). A poll
   * heartbeats 3 s before it, and each heartbeat is a billed Temporal action: about 70 per hour of
   * task at 55 s, 6 at 10 min. A worker that shuts down cleanly hands its polls over at once.
   * @minimum 1000
   * @maximum 3600000
   */
  heartbeatTimeoutMs?: number;
  /**
   * Wanted mean time from the task's end to the workflow seeing it, where the worker expects the
   * task to end (it learns how long tasks of the same kind run); default 1 s (250 ms to 60 s).
   * Lower finds ends sooner for more requests; higher saves requests.
   * @minimum 250
   * @maximum 60000
   */
  targetDetectionMs?: number;
  /**
   * The polling activity reports back to the workflow at least this often; default 1 h (250 ms to 24 h).
   * @minimum 250
   * @maximum 86400000
   */
  maxSpanMs?: number;
  /**
   * After instructions or a code were sent, an `awaiting` status is taken as "waiting for more
   * input" only once BrowserAI showed it took them (it reported another status, or its progress
   * moved on) or after this long; default 5 s (0 to 60 s). BrowserAI may report the old
   * `awaiting` for a moment after an append.
   * @minimum 0
   * @maximum 60000
   */
  inputSettleMs?: number;
  /**
   * For this long after the create, BrowserAI answering "task not found" means "not visible yet":
   * a poll keeps polling and a stop is retried; after it, the task is taken as gone
   * (`TaskNotFound`). Default 30 s (1 s to 10 min). A guess: BrowserAI documents nothing about
   * how soon a created task can be read.
   * @minimum 1000
   * @maximum 600000
   */
  notFoundGraceMs?: number;
}

/**
 * The input of `browserTask`: the task BrowserAI runs, and how the workflow runs it (timeouts, polling, codes,
 * delivery, activities). Unknown fields are refused.
 */
export interface BrowserTaskInput {
  /** @minItems 1 */
  instructions: Instruction[];
  type: TaskType;
  /**
   * A BrowserAI project name or ID, at most 512 characters. It is the `BrowserAIProject` search
   * attribute; one over 255 characters is stored there as its beginning, a mark and a hash, as
   * SQL visibility keeps no longer Keyword value.
   * @maxLength 512
   * @pattern \S
   */
  project: string;
  geoLocation: GeoLocation;
  inspect?: boolean;
  /** Keep the browser session open in `awaiting` after the instructions, for more to follow. */
  awaitable?: boolean;
  polling?: PollingOptions;
  /**
   * Whole task, from workflow start (a wait for a fleet slot not counted); default 2 h. On expiry the task is stopped and the workflow fails `TaskTimeout`.
   */
  timeoutMs?: number;
  /**
   * How long an `awaiting` task waits for instructions or a code; default 30 min, then `AwaitingInputTimeout`.
   */
  awaitingInputTimeoutMs?: number;
  /**
   * The instruction `submitCode` appends; `{code}` is replaced by the code.
   * @pattern \{code\}
   */
  codeInstructionTemplate?: string;
  /**
   * `at-most-once` (default): a create or append whose answer was lost fails `AmbiguousRequest`
   * instead of risking a second task or a code typed twice. `at-least-once` retries it.
   */
  delivery?: Delivery;
  /**
   * Budget for `results` in workflow history, in bytes of JSON; default 256 KiB.
   */
  maxResultBytes?: number;
  /**
   * How long a stop is retried (with backoff) when BrowserAI does not take it; default 30 min,
   * at least 1 s. A stop not delivered by then is reported as `stopConfirmed: false`.
   */
  stopRetryWindowMs?: number;
  /** Where and how the task's BrowserAI activities run; see {@link TaskActivityOptions}. */
  activityOptions?: TaskActivityOptions;
  /**
   * The workflow to signal (`browserTaskAwaitingInputSignal`) each time the task starts to await
   * input. Default: the parent workflow when `browserTask` runs as a child, nobody otherwise.
   * `false` signals nobody.
   */
  notifyWorkflowId?: WorkflowId | false;
  /**
   * The name of a TOTP secret the worker holds (`BROWSERAI_TOTP_SECRET_<NAME>`, the secrets file,
   * or the plugin's `totpSecrets`): when the task asks for a code, the worker types the current
   * RFC 6238 code itself. Only the name is in the input; the secret never leaves the worker.
   * @pattern ^[A-Za-z0-9_]{1,64}$
   */
  totpSecretName?: string;
  /**
   * How many one-time codes BrowserAI may refuse in a row for one code form (it asks again after
   * each) before the task is stopped and the workflow fails `CodesRefused`; default 3 (1 to 10).
   * @asType integer
   */
  maxCodeAttempts?: number;
  /** Webhooks for this task, sent to the destination configured on the worker; see {@link TaskWebhookOptions}. */
  webhook?: TaskWebhookOptions;
  /** Where the task's one-time codes arrive by SMS or email, for the inbox to type them; see {@link CodeRecipient}. */
  codeRecipient?: CodeRecipient;
  /**
   * The task's place in line, 1 (first) to 5 (last); default 3. Decides who gets the next free
   * slot under a fleet limit (docs/fleet.md), and is the Temporal priority of the workflow (when
   * started through `BrowserTasks`) and of its activities, so the task queues agree.
   * @asType integer
   */
  priority?: number;
  /**
   * Within a priority, fleet slots go round the fairness keys in turn, so one key's big batch
   * cannot starve another's single task; also the Temporal fairness key of the workflow and its
   * activities. Default: the BrowserAI project (cut to 64 bytes).
   * @maxLength 64
   */
  fairnessKey?: string;
  /**
   * The key's share of turns relative to other keys, 0.001 to 1000; default 1.
   */
  fairnessWeight?: number;
}

/**
 * Which webhook events a task wants. The destination (URL, signing secrets) is configured on the
 * worker only, never here: a URL in the input would let any caller make the worker POST anywhere.
 */
export interface TaskWebhookOptions {
  /** Default: all of them (`input.requested`, `task.finished`, `task.stop_not_confirmed`). */
  events?: WebhookEventType[];
  /**
   * Echoed in every event, to route it to the right user or record: an opaque ID of yours, 1 to
   * 128 characters of letters, digits and `._:/@+=-`. Never a code, token or personal data: it is
   * stored in workflow history and sent in every webhook body.
   * @pattern ^[A-Za-z0-9._:/@+=-]{1,128}$
   */
  reference?: string;
}

/** The webhook events a task can ask for (`BrowserTaskInput.webhook.events`); the `type` of the event's body. */
export type WebhookEventType = 'input.requested' | 'task.finished' | 'task.stop_not_confirmed';

/** Every webhook event type, the default of `webhook.events`. */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'input.requested',
  'task.finished',
  'task.stop_not_confirmed',
];

/**
 * A Temporal workflow ID.
 * @minLength 1
 * @maxLength 1000
 * @pattern \S
 */
type WorkflowId = string;

/**
 * Where and how the task's BrowserAI activities run. Within bounds only: the retry limits that
 * keep a code from being typed twice and a task from being left running are not offered.
 */
export interface TaskActivityOptions {
  /**
   * Task queue of the BrowserAI activities; default: the workflow's own. A dedicated activity
   * queue lets a separate worker fleet make every BrowserAI request, under one server-side rate
   * limit (`maxTaskQueueActivitiesPerSecond`; docs/your-own-worker.md, "One request limit for a fleet").
   * @minLength 1
   * @maxLength 1000
   * @pattern \S
   */
  taskQueue?: string;
  /**
   * Temporal task priority, 1 (first) to 5 (last); default the server's (3).
   * @asType integer
   * @minimum 1
   * @maximum 5
   */
  priorityKey?: number;
  /**
   * Tasks with different keys share the activity queue's throughput fairly (when the server
   * enables fairness); default: the BrowserAI project, so one project's burst cannot starve the
   * others. At most 64 characters; Temporal takes 64 UTF-8 bytes, so a key (or project) of
   * longer characters is cut there.
   * @maxLength 64
   */
  fairnessKey?: string;
  /**
   * The key's share relative to other keys, 0.001 to 1000; default 1.
   * @minimum 0.001
   * @maximum 1000
   */
  fairnessWeight?: number;
  /** Retry pacing of every activity (not the attempt limits, which are part of the guarantees). */
  retry?: {
    /**
     * First retry delay; 100 ms to 1 min.
     * @minimum 100
     * @maximum 60000
     */
    initialIntervalMs?: number;
    /**
     * Longest retry delay; 1 s to 10 min.
     * @minimum 1000
     * @maximum 600000
     */
    maximumIntervalMs?: number;
    /**
     * Growth of the delay per attempt; 1 to 10.
     * @minimum 1
     * @maximum 10
     */
    backoffCoefficient?: number;
  };
}

/** Instructions waiting to be sent, in arrival order. `code` items are never shown in queries. */
export interface OutgoingInstructions {
  kind: 'append' | 'replace';
  instructions: Instruction[];
  /** Set for a one-time code: the code itself, so a second submit of it is recognised. */
  code?: string;
  /** A TOTP code the worker computes and types itself (`instructions` is then empty): the workflow never learns it. */
  totp?: true;
}

/**
 * The result of `browserTask`: the task's final status, output and results (cut to `maxResultBytes`), and whether a
 * stop was confirmed.
 */
export interface BrowserTaskResult {
  executionId: string;
  status: string;
  started: string | null;
  completed: string | null;
  /** The task's output as `GET /tasks` reports it (cut to 64 KiB). */
  result: unknown;
  error: string | null;
  /** As `GET /results` gives them, cut to `maxResultBytes`. */
  results: ResultEntry[];
  /** Present when results were cut: what, and how to fetch them whole. */
  trimmed?: TrimReport;
  /**
   * Present when this workflow sent a stop: true once BrowserAI took it (or the task was seen
   * ended), false when it could not be delivered within `stopRetryWindowMs` — the task may
   * still be running: stop it from the BrowserAI dashboard.
   */
  stopConfirmed?: boolean;
}

/** The default of every optional duration and size of `BrowserTaskInput`. */
export const DEFAULTS = {
  initialIntervalMs: 1_000,
  maxIntervalMs: 30_000,
  heartbeatTimeoutMs: 55_000,
  targetDetectionMs: 1_000,
  maxSpanMs: 60 * 60_000,
  timeoutMs: 2 * 60 * 60_000,
  awaitingInputTimeoutMs: 30 * 60_000,
  codeInstructionTemplate: 'Enter the one-time code {code}',
  delivery: 'at-most-once' as Delivery,
  maxResultBytes: 256 * 1024,
  inputSettleMs: 5_000,
  notFoundGraceMs: 30_000,
  stopRetryWindowMs: 30 * 60_000,
  maxCodeAttempts: 3,
} as const;

// Bounds of the options: below them a workflow would hammer BrowserAI or Temporal, above them
// it would notice nothing for hours.
const MS = { second: 1_000, minute: 60_000, hour: 3_600_000 };
export const BOUNDS: Record<string, readonly [number, number]> = {
  'polling.initialIntervalMs': [250, 60 * MS.second],
  'polling.maxIntervalMs': [250, 10 * MS.minute],
  'polling.heartbeatTimeoutMs': [MS.second, MS.hour],
  'polling.targetDetectionMs': [250, 60 * MS.second],
  'polling.maxSpanMs': [250, 24 * MS.hour],
  'polling.inputSettleMs': [0, 60 * MS.second],
  'polling.notFoundGraceMs': [MS.second, 10 * MS.minute],
  'activityOptions.retry.initialIntervalMs': [100, MS.minute],
  'activityOptions.retry.maximumIntervalMs': [MS.second, 10 * MS.minute],
};
/** Temporal's limits: fairness keys of at most 64 bytes, weights clamped to [0.001, 1000], priorities 1-5 by default. */
export const FAIRNESS_KEY_BYTES = 64;
/** The longest fairness key a caller may give, in characters (code points, as JSON Schema counts). */
export const FAIRNESS_KEY_CHARS = 64;

/**
 * The largest input taken, in bytes of JSON. Continue-as-new carries the input whole, with the
 * instructions waiting to be sent (at most MAX_QUEUED_BYTES), in one payload that Temporal refuses
 * over 2 MB: a refused continue-as-new fails the workflow task again and again, with no timer left
 * to stop the task.
 */
export const MAX_INPUT_BYTES = 256 * 1024;
/** The most instructions a task holds waiting to be sent, in bytes of JSON (see MAX_INPUT_BYTES). */
export const MAX_QUEUED_BYTES = 512 * 1024;
export const TASK_TYPES: readonly string[] = ['crawler_automation', 'script_automation'];

// The fields each input object takes. `Record<keyof T, true>` makes the compiler insist that a
// field added to a type is added here too: the workflow refuses any other field (a misspelt
// option must not silently fall back to its default), as the published JSON Schemas do.
export const INSTRUCTION_FIELDS: Record<keyof Instruction, true> = { action: true, type: true };
export const GEO_LOCATION_FIELDS: Record<keyof GeoLocation, true> = { country: true, city: true, zipcode: true };
export const POLLING_FIELDS: Record<keyof PollingOptions, true> = {
  initialIntervalMs: true,
  maxIntervalMs: true,
  heartbeatTimeoutMs: true,
  targetDetectionMs: true,
  maxSpanMs: true,
  inputSettleMs: true,
  notFoundGraceMs: true,
};
/**
 * The operator's allowances that open a field of the task to callers outside the operator's trust
 * (a Nexus caller, an MCP client): `CallerAllowances` in src/contract/callers.ts.
 */
export type CallerAllowanceName =
  | 'totpSecretNames'
  | 'codeInstructionTemplates'
  | 'webhooks'
  | 'webhookReferencePrefixes'
  | 'notifyWorkflowIdPrefixes'
  | 'activityTaskQueues'
  | 'codeRecipients'
  | 'priority'
  | 'maxTimeoutMs';
/** Whether an outside caller may set a field: `true`, or the allowance that opens it. */
export type CallerRule = true | CallerAllowanceName;

// Each one reaches past the caller's own task (where the token's requests run, the operator's
// work on a shared queue); retry pacing is bounded and routes nothing.
export const ACTIVITY_OPTION_FIELDS = {
  taskQueue: 'activityTaskQueues',
  priorityKey: 'priority',
  fairnessKey: 'priority',
  fairnessWeight: 'priority',
  retry: true,
} as const satisfies Record<keyof TaskActivityOptions, CallerRule>;
// The receiver routes on `reference`: a caller naming the operator's user would be routed as that user.
export const WEBHOOK_FIELDS = {
  events: true,
  reference: 'webhookReferencePrefixes',
} as const satisfies Record<keyof TaskWebhookOptions, CallerRule>;
// Codes sent to `address` are typed into the task, where the agent the caller steers sees them; and
// two tasks waiting on one address have each code refused, so a caller could block the operator's logins.
export const CODE_RECIPIENT_FIELDS = {
  address: 'codeRecipients',
  senders: true,
} as const satisfies Record<keyof CodeRecipient, CallerRule>;

/** What the table of input fields says of one field of `BrowserTaskInput`. */
export interface TaskInputField {
  /** Whether a run of a saved task may set it (`runSavedTask`'s `overrides`); the rest comes from the saved task. */
  override: boolean;
  /** Whether a caller outside the operator's trust (Nexus, MCP) may set it: `true`, or the allowance that opens it. */
  caller: CallerRule;
  /** An object field's own fields, each with its rule for outside callers (checked besides the field's own). */
  fields?: Readonly<Record<string, CallerRule>>;
  /** The smallest and largest number taken, both included (the validator's and the JSON Schemas' bounds). */
  range?: readonly [min: number, max: number];
}

/**
 * Every field of `BrowserTaskInput`, once: the validator refuses any other field (a misspelt
 * option must not silently fall back to its default) and takes the bounds from here, the saved
 * tasks' overrides are the fields marked `override` (`SavedTaskOverrides`, and their check), the
 * fence of outside callers (src/contract/callers.ts) opens the fields marked `caller: true` and
 * the others only under their allowance, and `npm run schemas` writes the bounds into the JSON
 * Schemas. A new field is its line here and its line (with its description) in `BrowserTaskInput`;
 * the compiler insists on both. Plain numbers: the schema generator reads this table's type, and it
 * cannot evaluate arithmetic.
 */
export const TASK_INPUT_FIELDS = {
  instructions: { override: false, caller: true },
  type: { override: false, caller: true },
  project: { override: false, caller: true },
  geoLocation: { override: true, caller: true },
  inspect: { override: true, caller: true },
  awaitable: { override: true, caller: true },
  polling: { override: true, caller: true },
  // A task that runs or waits for days holds its slot, and the operator's quota, as long.
  timeoutMs: { override: true, caller: 'maxTimeoutMs', range: [1_000, 2_592_000_000] }, // 1 s to 30 days
  awaitingInputTimeoutMs: { override: true, caller: 'maxTimeoutMs', range: [1_000, 2_592_000_000] }, // 1 s to 30 days
  // It could type the code anywhere (`Open https://elsewhere/?otp={code}`).
  codeInstructionTemplate: { override: true, caller: 'codeInstructionTemplates' },
  delivery: { override: true, caller: true },
  // What fits in one history payload with room to spare (Temporal refuses payloads over 2 MB).
  maxResultBytes: { override: true, caller: true, range: [1_024, 1_572_864] }, // 1 KiB to 1.5 MiB
  stopRetryWindowMs: { override: true, caller: 'maxTimeoutMs', range: [1_000, 604_800_000] }, // 1 s to 7 days
  activityOptions: { override: true, caller: true, fields: ACTIVITY_OPTION_FIELDS },
  // A signal to any workflow of the namespace (`false`, nobody, is always allowed).
  notifyWorkflowId: { override: true, caller: 'notifyWorkflowIdPrefixes' },
  // The secret's live codes, typed into the caller's task.
  totpSecretName: { override: true, caller: 'totpSecretNames' },
  maxCodeAttempts: { override: true, caller: true, range: [1, 10] },
  // Signed events to the operator's receiver.
  webhook: { override: true, caller: 'webhooks', fields: WEBHOOK_FIELDS },
  codeRecipient: { override: true, caller: true, fields: CODE_RECIPIENT_FIELDS },
  // Temporal's priorities (1-5 by default) and fairness weights (clamped to [0.001, 1000]). The
  // task's place in line against the operator's own work: an outside caller's tasks queue under
  // the caller's identity instead.
  priority: { override: true, caller: 'priority', range: [1, 5] },
  fairnessKey: { override: true, caller: 'priority' },
  fairnessWeight: { override: true, caller: 'priority', range: [0.001, 1000] },
} as const satisfies Record<keyof BrowserTaskInput, TaskInputField>;

/**
 * The fields of `BrowserTaskInput` a run of a saved task may set (`SavedTaskOverrides`): how the task runs and its
 * place in line, not what it is (its instructions, type and project come from the saved task).
 */
export type OverrideField = {
  [K in keyof typeof TASK_INPUT_FIELDS]: (typeof TASK_INPUT_FIELDS)[K]['override'] extends true ? K : never;
}[keyof typeof TASK_INPUT_FIELDS];

/** The table's fields that have a range. */
export type RangedField = {
  [K in keyof typeof TASK_INPUT_FIELDS]: (typeof TASK_INPUT_FIELDS)[K] extends { range: unknown } ? K : never;
}[keyof typeof TASK_INPUT_FIELDS];

/** A ranged field's bounds. */
export function rangeOf(field: RangedField): readonly [number, number] {
  return TASK_INPUT_FIELDS[field].range;
}

/** The task's priority: 1 (first) to 5 (last), default 3 (Temporal's default). */
export function priorityOf(input: Pick<BrowserTaskInput, 'priority'>): number {
  return input.priority ?? 3;
}

/**
 * The activities' fairness key: activityOptions' if set, else the task's, else the project; cut to
 * its first 64 bytes (Temporal's limit; a caller's key is checked in characters, as JSON Schema's
 * maxLength counts them).
 */
export function fairnessKeyOf(input: Pick<BrowserTaskInput, 'project' | 'activityOptions' | 'fairnessKey'>): string {
  return utf8Prefix(input.activityOptions?.fairnessKey ?? input.fairnessKey ?? input.project, FAIRNESS_KEY_BYTES);
}

export function resolvePolling(polling: PollingOptions | undefined): Required<PollingOptions> {
  return {
    initialIntervalMs: polling?.initialIntervalMs ?? DEFAULTS.initialIntervalMs,
    maxIntervalMs: polling?.maxIntervalMs ?? Math.max(DEFAULTS.maxIntervalMs, polling?.initialIntervalMs ?? 0),
    heartbeatTimeoutMs: polling?.heartbeatTimeoutMs ?? DEFAULTS.heartbeatTimeoutMs,
    targetDetectionMs: polling?.targetDetectionMs ?? DEFAULTS.targetDetectionMs,
    maxSpanMs: polling?.maxSpanMs ?? DEFAULTS.maxSpanMs,
    inputSettleMs: polling?.inputSettleMs ?? DEFAULTS.inputSettleMs,
    notFoundGraceMs: polling?.notFoundGraceMs ?? DEFAULTS.notFoundGraceMs,
  };
}
