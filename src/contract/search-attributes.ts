// Typed search attributes of `browserTask`, for filtering in the Temporal UI and
// `temporal workflow list --query`. They must be registered on the namespace (`npm start`
// does it for its dev server; docs/temporal-ui.md has the operator command for other clusters).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** BrowserAI's executionId of the task, once created: finds the workflow of a BrowserAI session. */
export const BrowserAIExecutionId = defineSearchAttributeKey('BrowserAIExecutionId', SearchAttributeType.KEYWORD);
/** The task's status as BrowserAI last reported it. */
export const BrowserAIStatus = defineSearchAttributeKey('BrowserAIStatus', SearchAttributeType.KEYWORD);
/** The task's BrowserAI project. */
export const BrowserAIProject = defineSearchAttributeKey('BrowserAIProject', SearchAttributeType.KEYWORD);
/** Whether the task waits for input now: `BrowserAIAwaitingInput = true` lists every task waiting for a code. */
export const BrowserAIAwaitingInput = defineSearchAttributeKey('BrowserAIAwaitingInput', SearchAttributeType.BOOL);
/**
 * When the current wait for input began; meaningful while `BrowserAIAwaitingInput` is true (set at
 * start to 1970-01-01, "never waited": a start must give every attribute a value, so that a
 * namespace lacking one refuses the start instead of failing the workflow's upsert later).
 */
export const BrowserAIAwaitingInputSince = defineSearchAttributeKey(
  'BrowserAIAwaitingInputSince',
  SearchAttributeType.DATETIME,
);

/**
 * The kind of task a run taught something about (`taskKind`: hashes, no instruction text), set at
 * its end in the upsert of its final status with {@link BrowserAIEndMs}. Every worker reads the two
 * from closed workflows, so learning survives restarts and spans the fleet
 * (activities/visibility-durations.ts). Set at start to '', "nothing learned".
 */
export const BrowserAIKind = defineSearchAttributeKey('BrowserAIKind', SearchAttributeType.KEYWORD);
/** Where that run's task ended, in ms after its create answered (see {@link BrowserAIKind}); -1 at start. */
export const BrowserAIEndMs = defineSearchAttributeKey('BrowserAIEndMs', SearchAttributeType.INT);

/** Every search attribute `browserTask` sets, to register on a namespace. */
export const ALL_SEARCH_ATTRIBUTES = [
  BrowserAIExecutionId,
  BrowserAIStatus,
  BrowserAIProject,
  BrowserAIAwaitingInput,
  BrowserAIAwaitingInputSince,
  BrowserAIKind,
  BrowserAIEndMs,
];
