// Each workflow's Worker Deployment Versioning behaviour (docs/design/versioning.md), declared only
// when a versioned worker runs it: SDK 1.24 sends a declared behaviour from an unversioned worker
// too, and the server then refuses every workflow task ("versioning behavior cannot be specified
// without deployment options being set with versioned mode"). The getter runs once per workflow
// run a worker loads, with the deployment version of the worker that ran its first task.
import type { VersioningBehavior, WorkflowDefinitionOptions } from '@temporalio/common';
import { workflowInfo } from '@temporalio/workflow';

export function whenVersioned(versioningBehavior: VersioningBehavior): () => WorkflowDefinitionOptions {
  // An unversioned worker has a version too, with a build ID of its own and no deployment name.
  return () => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior } : {});
}
