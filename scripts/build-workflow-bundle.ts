// `node lib/scripts/build-workflow-bundle.js [OUT]` after the build: bundles the compiled workflows
// (lib/src/workflows) once, as `Worker.create` would at every start, and writes the code to OUT
// (default lib/workflow-bundle.js). A worker started with WORKER_WORKFLOW_BUNDLE=OUT loads it
// instead of bundling (src/workflow-bundle.ts). The Dockerfile runs this at image build time.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { browserAIPreloadModules } from '../src/workflow-bundle';

async function main(argv: string[]): Promise<void> {
  if (argv.length > 1 || argv[0]?.startsWith('-')) {
    console.error('Usage: node lib/scripts/build-workflow-bundle.js [OUT]   (default lib/workflow-bundle.js)');
    process.exit(2);
  }
  const out = resolve(argv[0] ?? resolve(__dirname, '..', 'workflow-bundle.js'));
  const started = Date.now();
  const { bytes, workflowsPath } = await writeWorkflowBundle(out);
  console.log(
    `Workflow bundle: ${out} (${(bytes / 1024 / 1024).toFixed(1)} MiB, ${Date.now() - started} ms) ` +
      `from ${workflowsPath}. Start workers with WORKER_WORKFLOW_BUNDLE=${out}`,
  );
}

/** Bundles our compiled workflows as a worker would and writes the code to `out` (also the tests' one bundle per run). */
export async function writeWorkflowBundle(out: string): Promise<{ bytes: number; workflowsPath: string }> {
  // The module and preloads the worker bundles when it has no prebuilt bundle (src/plugin.ts).
  const workflowsPath = require.resolve('../src/workflows');
  // Options as Worker.create's own bundling (the worker adds no interceptor modules and no
  // payload converter path); the source map stays inline in the code, as there.
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    preloadModules: browserAIPreloadModules(),
    logger: silent,
  });
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, code);
  return { bytes: Buffer.byteLength(code), workflowsPath };
}

const noop = (): void => undefined;
const silent = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
