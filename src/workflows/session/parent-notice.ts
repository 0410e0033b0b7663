// The waiting workflow's notice: a parent (or `notifyWorkflowId`) hears of each input request by
// a signal, once per wait, so it learns without polling (docs/workflow.md).
import { getExternalWorkflowHandle, isCancellation, log, workflowInfo } from '@temporalio/workflow';
import type { BrowserTaskInput } from '../../contract/input';
import { browserTaskAwaitingInputSignal, type InputRequest } from '../../contract/messages';
import { rootFailure } from './failures';

/** Signals the input request to the workflow that waits for it, if any. A workflow that is gone changes nothing here. */
export async function notifyWaitingWorkflow(
  input: Pick<BrowserTaskInput, 'notifyWorkflowId'>,
  request: InputRequest,
  status: string,
): Promise<void> {
  const { notifyWorkflowId } = input;
  const target = notifyWorkflowId === false ? undefined : (notifyWorkflowId ?? workflowInfo().parent?.workflowId);
  if (!target) return;
  try {
    await getExternalWorkflowHandle(target).signal(browserTaskAwaitingInputSignal, { ...request, status });
  } catch (err) {
    if (isCancellation(err)) throw err;
    log.warn('Could not tell the waiting workflow that the task awaits input', {
      workflowId: target,
      failure: rootFailure(err).message,
    });
  }
}
