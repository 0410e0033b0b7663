// The search attributes a `browserTask` starts with, for every starter: the client, the Nexus
// service and the batch workflow (which starts its items as children). Workflow-safe.
import { TypedSearchAttributes } from '@temporalio/common';
import {
  BrowserAIAwaitingInput,
  BrowserAIAwaitingInputSince,
  BrowserAIEndMs,
  BrowserAIExecutionId,
  BrowserAIKind,
  BrowserAIProject,
  BrowserAIStatus,
} from '../contract/search-attributes';
import { keywordValue } from './keyword-value';

export function startSearchAttributes(project?: string): TypedSearchAttributes {
  return new TypedSearchAttributes([
    { key: BrowserAIStatus, value: 'starting' },
    { key: BrowserAIAwaitingInput, value: false },
    // "Never waited": the workflow sets it when a wait for input begins.
    { key: BrowserAIAwaitingInputSince, value: new Date(0) },
    // Not known until the create answers; the workflow upserts it then.
    { key: BrowserAIExecutionId, value: '' },
    // A saved task's project is known only once it is read: the workflow upserts it then. A
    // project over 255 characters is cut and hashed, as SQL visibility stores no longer Keyword.
    { key: BrowserAIProject, value: keywordValue(project ?? '') },
    // Nothing learned yet: the workflow sets both when its task ends normally.
    { key: BrowserAIKind, value: '' },
    { key: BrowserAIEndMs, value: -1 },
  ]);
}
