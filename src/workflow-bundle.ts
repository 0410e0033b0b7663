// A prebuilt workflow bundle for production workers. Without one, every worker process bundles
// lib/src/workflows itself (webpack + SWC) in `Worker.create`, which costs seconds and memory at
// each start. The image builds the bundle once (scripts/build-workflow-bundle.ts) and names it in
// WORKER_WORKFLOW_BUNDLE; the worker then loads that file instead.
//
// The bundle must come from the same compiled workflows as the worker's: build it in the same step
// as lib/ (the Dockerfile does), and never point a worker at a bundle from another version.
import { accessSync, constants, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from './contract/errors';

/**
 * The modules to preload in a workflow bundle that runs our workflows (`bundlerOptions.preloadModules`):
 * with the worker's reusable V8 context (the SDK's default), a preloaded module is evaluated once and
 * shared by every workflow instead of once per cached workflow, about 60 KB of the workflow thread's
 * heap each (docs/design/memory.md, "The four settings"). Sharing is safe because our workflow modules hold no state of
 * their own: everything a run keeps lives in the objects its workflow function makes.
 */
export function browserAIPreloadModules(): string[] {
  return [require.resolve('./workflows')];
}

/** What `Worker.create` takes as `workflowBundle` for a bundle written to a file. */
export interface WorkflowBundleFile {
  codePath: string;
}

/**
 * `{ codePath }` when WORKER_WORKFLOW_BUNDLE names a readable file (relative to the working
 * directory; returned absolute), undefined when it is unset or empty, so the worker bundles its
 * workflows itself. Throws a ConfigError when it names a file that is missing or unreadable.
 */
export function workflowBundleFromEnv(env: NodeJS.ProcessEnv = process.env): WorkflowBundleFile | undefined {
  const given = env.WORKER_WORKFLOW_BUNDLE?.trim();
  if (!given) return undefined;
  const codePath = resolve(given);
  let problem: string | undefined;
  try {
    if (!statSync(codePath).isFile()) problem = 'is not a file';
    else accessSync(codePath, constants.R_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    problem = code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? String(err)})`;
  }
  if (problem) {
    throw new ConfigError([
      `WORKER_WORKFLOW_BUNDLE=${given}${codePath !== given ? ` (${codePath})` : ''} ${problem}: ` +
        'build it with `node lib/scripts/build-workflow-bundle.js [FILE]` after compiling, or unset WORKER_WORKFLOW_BUNDLE to bundle the workflows at start-up',
    ]);
  }
  return { codePath };
}
