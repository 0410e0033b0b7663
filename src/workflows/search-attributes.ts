// Typed search attributes of `browserTask`, for filtering in the Temporal UI and
// `temporal workflow list --query`. They must be registered on the namespace (`npm start`
// does it for its dev server; the README has the operator command for other clusters).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const BrowserAIExecutionId = defineSearchAttributeKey('BrowserAIExecutionId', SearchAttributeType.KEYWORD);
export const BrowserAIStatus = defineSearchAttributeKey('BrowserAIStatus', SearchAttributeType.KEYWORD);
export const BrowserAIProject = defineSearchAttributeKey('BrowserAIProject', SearchAttributeType.KEYWORD);
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

export const ALL_SEARCH_ATTRIBUTES = [
  BrowserAIExecutionId,
  BrowserAIStatus,
  BrowserAIProject,
  BrowserAIAwaitingInput,
  BrowserAIAwaitingInputSince,
];
