// The Temporal server a test file runs on. `npm test` starts one dev server for the whole run
// (scripts/run-tests.ts) and names it in TEMPORAL_TEST_ADDRESS; a file then gets a namespace of
// its own on it, registered with our search attributes, instead of a server of its own. A new
// namespace is as empty as a new server (no other file's workflows in its lists, nothing learned
// from them) and costs about a second instead of a dev server's start. The same variable points
// the tests at any existing server (TEMPORAL_TEST_NAMESPACE then names the namespace to use as it
// is: its search attributes must be registered already).
//
// A test that needs a server of its own (other `temporal server start-dev` arguments, no search
// attributes, a server it kills) still gets one.
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import { Connection } from '@temporalio/client';
import { TypedSearchAttributes, type SearchAttributeType } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTemporal as startDevServer } from '../../dev/dev-server';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/contract/search-attributes';

/** The address of a running server the tests share (set by `npm test`, or by you for an existing server). */
export const SHARED_ADDRESS_ENV = 'TEMPORAL_TEST_ADDRESS';
/** With TEMPORAL_TEST_ADDRESS: the namespace to run in, as it is, instead of a new one per test file. */
export const SHARED_NAMESPACE_ENV = 'TEMPORAL_TEST_NAMESPACE';
/** A workflow bundle built once for the whole run (set by `npm test`); without it each file bundles its own. */
export const TEST_WORKFLOW_BUNDLE_ENV = 'TEST_WORKFLOW_BUNDLE';

/**
 * WORKER_WORKFLOW_BUNDLE naming the run's prebuilt bundle, for a worker a test starts as a process
 * (as the image runs it): it then loads the bundle instead of bundling the workflows itself, which
 * takes seconds of CPU at each start. Empty outside `npm test`.
 */
export function prebuiltBundleEnv(): Record<string, string> {
  const path = process.env[TEST_WORKFLOW_BUNDLE_ENV];
  return path ? { WORKER_WORKFLOW_BUNDLE: path } : {};
}

/**
 * A Temporal server for a test: a fresh namespace on the shared server when there is one and the
 * test needs no server arguments of its own; otherwise a dev server of its own (`extraArgs` go to
 * `temporal server start-dev`). The namespace has our search attributes (`true`), none (`false`,
 * as a cluster nobody configured), or only those listed (as a cluster set up for an earlier
 * release). `teardown()` closes the connections, and stops the server only if it is the test's own.
 */
export async function startTemporal(
  extraArgs: string[] = [],
  registerSearchAttributes: boolean | typeof ALL_SEARCH_ATTRIBUTES = true,
): Promise<TestWorkflowEnvironment> {
  const address = process.env[SHARED_ADDRESS_ENV]?.trim();
  const given = process.env[SHARED_NAMESPACE_ENV]?.trim();
  // A namespace named in the environment is used as it is: only a test that wants all of ours can run there.
  if (!address || extraArgs.length > 0 || (given && registerSearchAttributes !== true)) {
    return startDevServer(extraArgs, registerSearchAttributes);
  }
  const attributes = registerSearchAttributes === true ? ALL_SEARCH_ATTRIBUTES : registerSearchAttributes || [];
  const namespace = given || (await registerTestNamespace(address, attributes));
  return TestWorkflowEnvironment.createFromExistingServer({ address, namespace });
}

/** Whether this process runs its Temporal tests on a shared server. */
export function onSharedServer(): boolean {
  return Boolean(process.env[SHARED_ADDRESS_ENV]?.trim());
}

/**
 * Registers a namespace named after the test file (unique per call) with `attributes`, and
 * resolves once the server accepts work in it with them.
 */
async function registerTestNamespace(address: string, attributes: typeof ALL_SEARCH_ATTRIBUTES): Promise<string> {
  const file = basename(process.argv[1] ?? 'test').replace(/\.test\.[cm]?js$/, '');
  const namespace = `test-${file}-${randomUUID().slice(0, 8)}`.replace(/[^A-Za-z0-9-]/g, '-');
  const connection = await Connection.connect({ address });
  try {
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    const searchAttributes = Object.fromEntries(attributes.map(({ name, type }) => [name, indexedValueType(type)]));
    // The namespace reaches the server's caches a moment after it is registered: until then these
    // calls are refused, and a start in it would be too.
    if (attributes.length) {
      await retrying(`namespace ${namespace} on ${address}`, async () => {
        await connection.operatorService.addSearchAttributes({ namespace, searchAttributes }).catch((err: unknown) => {
          // ALREADY_EXISTS: an earlier try went through although its answer did not arrive.
          if ((err as { code?: number }).code !== 6) throw err;
        });
      });
    }
    await retrying(`the search attributes of ${namespace}`, async () => {
      const listed = await connection.operatorService.listSearchAttributes({ namespace });
      const missing = attributes.filter(({ name }) => !listed.customAttributes?.[name]);
      if (missing.length) throw new Error(`not yet registered: ${missing.map(({ name }) => name).join(', ')}`);
      await connection.workflowService.describeNamespace({ namespace });
    });
    return namespace;
  } finally {
    await connection.close();
  }
}

/** `KeywordList` → INDEXED_VALUE_TYPE_KEYWORD_LIST, as the server names the types. */
function indexedValueType(type: SearchAttributeType): temporal.api.enums.v1.IndexedValueType {
  const name = TypedSearchAttributes.toMetadataType(type)
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .toUpperCase();
  return temporal.api.enums.v1.IndexedValueType[`INDEXED_VALUE_TYPE_${name}` as 'INDEXED_VALUE_TYPE_KEYWORD'];
}

async function retrying(what: string, attempt: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}: ${String(err)}`, { cause: err });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
