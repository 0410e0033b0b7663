// Worker Deployment Versioning: the worker reads TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID
// (as Temporal's worker controller sets them), both or neither; with them it polls as that version,
// and each workflow runs with the versioning behaviour it declares (src/workflows/versioning.ts).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { temporal } from '@temporalio/proto';
import { loadWorkerConfig } from '../src/config/worker';
import { ConfigError } from '../src/contract/errors';
import { BrowserTasks } from '../src/starters/tasks';
import { WorkerChild, workerEnvironment } from '../dev/worker-child';
import { eventually, startStack, taskInput, type Stack } from './helpers/stack';
import { prebuiltBundleEnv } from './helpers/temporal';

const BASE = { BROWSERAI_API_TOKEN: 'token' };

describe('TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID', () => {
  test('both: the worker is versioned as that deployment version; neither: unversioned', () => {
    const versioned = loadWorkerConfig({
      ...BASE,
      TEMPORAL_DEPLOYMENT_NAME: 'browserai',
      TEMPORAL_WORKER_BUILD_ID: ' 2026-01-05.1 ',
    });
    assert.deepEqual(versioned.deployment, { deploymentName: 'browserai', buildId: '2026-01-05.1' });
    assert.equal(loadWorkerConfig(BASE).deployment, undefined);
    assert.equal(
      loadWorkerConfig({ ...BASE, TEMPORAL_DEPLOYMENT_NAME: '', TEMPORAL_WORKER_BUILD_ID: '' }).deployment,
      undefined,
    );
  });

  test('one without the other is a ConfigError naming the one to set', () => {
    for (const [given, missing] of [
      ['TEMPORAL_DEPLOYMENT_NAME', 'TEMPORAL_WORKER_BUILD_ID'],
      ['TEMPORAL_WORKER_BUILD_ID', 'TEMPORAL_DEPLOYMENT_NAME'],
    ]) {
      assert.throws(
        () => loadWorkerConfig({ ...BASE, [given]: 'x' }),
        (err: unknown) =>
          err instanceof ConfigError &&
          err.problems.length === 1 &&
          err.problems[0]!.startsWith(`${given} is set but ${missing} is not`) &&
          err.problems[0]!.includes(`set ${missing} too, or unset ${given}`),
      );
    }
  });
});

describe('a worker with a deployment version, on a real dev server', () => {
  let stack: Stack;
  let worker: WorkerChild;
  const taskQueue = `versioned-${randomUUID()}`;
  const version = { deploymentName: `browserai-${randomUUID().slice(0, 8)}`, buildId: 'build-1' };
  const lines: string[] = [];

  before(async () => {
    stack = await startStack();
    worker = new WorkerChild(
      {
        ...workerEnvironment({
          temporalAddress: stack.env.address,
          namespace: stack.env.namespace,
          taskQueue,
          browserAIBaseUrl: stack.emulator.baseUrl,
          browserAIToken: stack.emulator.apiToken,
        }),
        ...prebuiltBundleEnv(),
        TEMPORAL_DEPLOYMENT_NAME: version.deploymentName,
        TEMPORAL_WORKER_BUILD_ID: version.buildId,
      },
      (line) => lines.push(line),
    );
    assert.ok(await worker.ready, `the worker did not start:\n${worker.outputTail.join('\n')}`);
  });
  after(async () => {
    await worker?.signal('SIGTERM', 10_000);
    await stack?.stop();
  });

  test('it polls as that version, and each workflow runs with the behaviour it declares', async () => {
    const { workflowService } = stack.env.client;
    const namespace = stack.env.namespace ?? 'default';
    const banner = lines.find((line) => line.includes('browserai-temporal worker: task queue'));
    assert.match(banner ?? '', new RegExp(`deployment version ${version.deploymentName}\\.${version.buildId}`));

    // The server knows the version from the worker's polls, with our task queue in it.
    const described = await eventually('the version registered by the worker', async () => {
      const answer = await workflowService
        .describeWorkerDeploymentVersion({ namespace, deploymentVersion: version })
        .catch(() => undefined);
      const queues = answer?.workerDeploymentVersionInfo?.taskQueueInfos ?? [];
      return queues.some((q) => q.name === taskQueue) ? answer : undefined;
    });
    assert.equal(described.workerDeploymentVersionInfo?.deploymentVersion?.buildId, version.buildId);
    // New workflows go to the deployment's current version: make this one current, as a rollout would.
    await workflowService.setWorkerDeploymentCurrentVersion({
      namespace,
      deploymentName: version.deploymentName,
      buildId: version.buildId,
      identity: 'versioning.test',
    });

    const tasks = new BrowserTasks(stack.env.client, taskQueue);
    const task = await tasks.start(taskInput());
    assert.equal((await task.result()).status, 'finalized');
    const list = await stack.env.client.workflow.start('savedTaskList', {
      taskQueue,
      workflowId: `list-${randomUUID()}`,
    });
    await list.result();

    const { VERSIONING_BEHAVIOR_AUTO_UPGRADE, VERSIONING_BEHAVIOR_PINNED } = temporal.api.enums.v1.VersioningBehavior;
    for (const [handle, behavior] of [
      [task, VERSIONING_BEHAVIOR_AUTO_UPGRADE],
      [list, VERSIONING_BEHAVIOR_PINNED],
    ] as const) {
      const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
      assert.equal(info?.behavior, behavior, `${handle.workflowId}'s versioning behaviour`);
      assert.deepEqual(
        { deploymentName: info?.deploymentVersion?.deploymentName, buildId: info?.deploymentVersion?.buildId },
        version,
        `${handle.workflowId} ran on the versioned worker`,
      );
    }
  });
});
