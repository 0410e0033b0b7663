// A throw-away Temporal dev server (the `temporal` CLI, in memory) with our search attributes
// registered: what the tests and the benchmark run workflows on. It lives in src/ so the
// benchmark does not depend on test helpers; `npm start` keeps its own, persistent server.
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ALL_SEARCH_ATTRIBUTES } from '../src/workflows/search-attributes';
import { findTemporalCli, TEMPORAL_CLI_MISSING } from './temporal-cli';

/**
 * Starts the dev server. `extraArgs` go to `temporal server start-dev` as they are (e.g.
 * `['--metrics-port', '9090']`, `['--namespace', 'other']`); without `registerSearchAttributes`
 * the namespace lacks ours, as a cluster nobody configured would.
 */
export async function startTemporal(
  extraArgs: string[] = [],
  registerSearchAttributes = true,
): Promise<TestWorkflowEnvironment> {
  const path = findTemporalCli();
  if (!path) throw new Error(TEMPORAL_CLI_MISSING);
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path },
      searchAttributes: registerSearchAttributes ? ALL_SEARCH_ATTRIBUTES : [],
      extraArgs,
    },
  });
}
