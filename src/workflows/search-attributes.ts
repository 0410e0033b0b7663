// Typed search attributes of `browserTask`, for filtering in the Temporal UI and
// `temporal workflow list --query`. They must be registered on the namespace (`npm start`
// does it for its dev server; the README has the operator command for other clusters).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const BrowserAIExecutionId = defineSearchAttributeKey('BrowserAIExecutionId', SearchAttributeType.KEYWORD);
export const BrowserAIStatus = defineSearchAttributeKey('BrowserAIStatus', SearchAttributeType.KEYWORD);
export const BrowserAIProject = defineSearchAttributeKey('BrowserAIProject', SearchAttributeType.KEYWORD);
export const BrowserAIAwaitingInput = defineSearchAttributeKey('BrowserAIAwaitingInput', SearchAttributeType.BOOL);

export const ALL_SEARCH_ATTRIBUTES = [BrowserAIExecutionId, BrowserAIStatus, BrowserAIProject, BrowserAIAwaitingInput];
