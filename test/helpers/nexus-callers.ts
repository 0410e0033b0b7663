// The callers' side of the Nexus tests: a team's workflows (test/workflows/nexus-callers.ts) run by
// a worker in another namespace, with no BrowserAI token and no BrowserAI code.
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';

const noop = () => undefined;

/** A worker of the caller workflows in `namespace`, and a client there to start them on its queue. */
export async function startNexusCallers(env: TestWorkflowEnvironment, namespace: string) {
  const taskQueue = `nexus-callers-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace,
    taskQueue,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: require.resolve('../workflows/nexus-callers'),
      logger: { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop },
    }),
  });
  const running = worker.run();
  return {
    taskQueue,
    client: new Client({ connection: env.connection, namespace }),
    async stop() {
      worker.shutdown();
      await running.catch(noop);
    },
  };
}
