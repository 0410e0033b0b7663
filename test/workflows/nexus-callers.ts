// Test-only workflows for test/nexus.test.ts: a team's workflows in another namespace that call the
// `browserai` Nexus service through an endpoint, the way docs/nexus.md shows. They import the contract only (browserai-temporal/nexus).
import { NexusOperationFailure } from '@temporalio/common';
import {
  condition,
  createNexusServiceClient,
  defineQuery,
  defineSignal,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import {
  browserAIService,
  type BrowserTaskInput,
  type BrowserTaskResult,
  type BrowserTaskState,
  type RunTaskInput,
  type SubmitCodeInput,
  type TaskStateInput,
} from '../../src/nexus';

export interface CallerInput {
  endpoint: string;
  task: BrowserTaskInput;
}

/** What the test, playing the person with the phone, sends once the task awaits a code. */
export const codeFromUserSignal = defineSignal<[string]>('codeFromUser');

/** The token of the caller's runTask operation, once started: the test finds the service's workflow from it. */
export const operationTokenQuery = defineQuery<string | undefined>('operationToken');

/** Runs a task that needs a code: waits (reading `state` through Nexus) until it awaits input, then passes the user's code on. */
export async function loginThroughNexus(
  input: CallerInput,
): Promise<{ result: BrowserTaskResult; awaited: BrowserTaskState; stateReads: number }> {
  const browserai = createNexusServiceClient({ service: browserAIService, endpoint: input.endpoint });
  let code: string | undefined;
  setHandler(codeFromUserSignal, (received) => void (code = received));
  const run = await browserai.startOperation('runTask', { task: input.task });
  // The service named the task: its operation token is how this caller addresses it.
  const operationToken = run.token!;
  setHandler(operationTokenQuery, () => operationToken);
  let state: BrowserTaskState;
  let stateReads = 0;
  for (;;) {
    state = await browserai.executeOperation('state', { operationToken });
    stateReads++;
    if (state.awaitingInput) break;
    await sleep('1 second');
  }
  await condition(() => code !== undefined);
  await browserai.executeOperation('submitCode', { operationToken, code: code! });
  return { result: await run.result(), awaited: state, stateReads };
}

/** Runs a task to its end: the result, as the operation returns it. */
export async function taskThroughNexus(input: CallerInput): Promise<BrowserTaskResult> {
  const browserai = createNexusServiceClient({ service: browserAIService, endpoint: input.endpoint });
  const run = await browserai.startOperation('runTask', { task: input.task });
  setHandler(operationTokenQuery, () => run.token);
  return run.result();
}

/** Runs the tasks at once, as a caller with many tasks does: their results, in order. */
export async function tasksThroughNexus(input: {
  endpoint: string;
  tasks: BrowserTaskInput[];
}): Promise<BrowserTaskResult[]> {
  const browserai = createNexusServiceClient({ service: browserAIService, endpoint: input.endpoint });
  const runs = await Promise.all(input.tasks.map((task) => browserai.startOperation('runTask', { task })));
  return Promise.all(runs.map((run) => run.result()));
}

/** Runs a task until the test cancels this workflow: the cancellation reaches the operation, and the operation's workflow. */
export async function cancelledThroughNexus(input: CallerInput): Promise<BrowserTaskResult> {
  const browserai = createNexusServiceClient({ service: browserAIService, endpoint: input.endpoint });
  const run = await browserai.startOperation(
    'runTask',
    { task: input.task },
    // The default, written out: the caller ends only once the task's workflow has ended (after its stop).
    { cancellationType: 'WAIT_CANCELLATION_COMPLETED' },
  );
  setHandler(operationTokenQuery, () => run.token);
  return run.result();
}

export interface Refusal {
  failure: string;
  /** The cause's type: a HandlerError's (BAD_REQUEST, ...) or an ApplicationFailure's (the workflow's failure type). */
  causeType?: string;
  /** A HandlerError's own cause's type: the service's typed refusal (NexusOptionNotAllowed, ...). */
  refusalType?: string;
  retryable?: boolean;
  message?: string;
}

/** Operations the test expects to fail, each with its input. */
export type BadCall =
  | { operation: 'runTask'; input: RunTaskInput }
  | { operation: 'submitCode'; input: SubmitCodeInput }
  | { operation: 'state'; input: TaskStateInput };

/** Makes each call in turn (all expected to fail): what each failed with. */
export async function failuresThroughNexus({
  endpoint,
  calls,
}: {
  endpoint: string;
  calls: BadCall[];
}): Promise<Refusal[]> {
  const browserai = createNexusServiceClient({ service: browserAIService, endpoint });
  // A bad request must fail at once: an INTERNAL error would be retried until this timeout instead.
  const options = { scheduleToCloseTimeout: '30 seconds' } as const;
  const refusals: Refusal[] = [];
  for (const call of calls) {
    try {
      // Each input matches its operation (BadCall); the client's overloads cannot see that through the union.
      await browserai.executeOperation(call.operation, call.input as never, options);
      refusals.push({ failure: 'none' });
    } catch (err) {
      // A HandlerError (nexus-rpc's) or the workflow's ApplicationFailure, read by shape: the bundle's classes are not the test's.
      const cause = (err instanceof NexusOperationFailure ? err.cause : undefined) as
        { type?: string; retryable?: boolean; message?: string; cause?: { type?: string } } | undefined;
      refusals.push({
        failure: err instanceof Error ? err.name : String(err),
        causeType: cause?.type,
        refusalType: cause?.cause?.type,
        retryable: cause?.retryable,
        message: cause?.message,
      });
    }
  }
  return refusals;
}
