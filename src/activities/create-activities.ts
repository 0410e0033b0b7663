// The BrowserAI activities, bound to a client: one per endpoint (polling aside), named `browserAI*`.
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { FailureType } from '../contract/errors';
import { DEFAULTS } from '../contract/input';
import { recordAmbiguousRequest } from '../telemetry/activity-metrics';
import {
  isBrowserAIError,
  type BrowserAIClient,
  type CreateSavedTaskRequest,
  type CreateSavedTaskResponse,
  type SavedTask,
} from '../browserai';
import { normalizeStatus } from '../contract/status';
import { beforeSending, deliverOnce, earlierDelivery, latestSendMs } from './at-most-once';
import { fleetLimiterActivities, type FleetLimit } from './fleet';
import { joinRecipient, leaveRecipient } from './code-recipient';

import { executionAnswer } from './execution-answer';
import { toActivityFailure } from './failures';
import { instructionRefusal } from './instruction-refusal';
import { maskCodesInFailure } from './mask-codes';
import { pollUntilStatusChanges } from './poll-task';
import { stopLateTask, stopTask } from './stop-task';
import { snapshotOf } from './snapshot';
import { readResults } from './results';
import { TaskDurations, taskKind } from './task-durations';
import { TotpKeys } from './totp';
import { typeTotpCode } from './type-totp';
import { noWebhookDestination, type WebhookSender } from './webhooks';
import type {
  CreateTaskInput,
  GetResultsInput,
  PollTaskInput,
  PollTaskOutput,
  SendInstructionsInput,
  StopTaskInput,
  StopTaskOutput,
  TaskExecutionAnswer,
  CreatedTask,
  TaskResultsSummary,
  TaskSnapshot,
  TotpCodeAnswer,
  TotpMask,
  TotpNotDue,
  WaitingForSlot,
  TypeTotpCodeInput,
  SlotPlace,
} from '../contract/activity-types';
import type { WebhookDeliveryInput, WebhookDeliveryOutput } from '../contract/webhooks';

/** The workflow a fleet slot belongs to, across its continue-as-new runs. */
export function holderIdOf(place: Pick<SlotPlace, 'workflowId' | 'firstExecutionRunId'>): string {
  return `${place.workflowId}/${place.firstExecutionRunId}`;
}

/**
 * A slot held (the limiter's ID), or the place in line to wait in. Given up at `deadlineMs` or with
 * the activity's cancellation: the attempt then sends nothing, and its retry asks again.
 */
async function acquireSlot(
  fleet: FleetLimit,
  place: SlotPlace,
  project: string,
  deadlineMs: number,
): Promise<{ limiterId: string } | WaitingForSlot> {
  if (place.heldFrom) return { limiterId: place.heldFrom };
  const { workflowId, runId, priority, fairnessKey, fairnessWeight, ticket } = place;
  const ctx = Context.current();
  const answer = await fleet.acquire(
    ctx.client,
    {
      request: { holderId: holderIdOf(place), workflowId, runId, project, priority, fairnessKey, fairnessWeight },
      ...(ticket ? { ticket } : {}),
    },
    deadlineMs,
    ctx.cancellationSignal,
  );
  if (answer.held) return { limiterId: fleet.limiterId };
  const { position, sinceMs, askAgainMs } = answer;
  return {
    waitingForSlot: { limiterId: fleet.limiterId, position, sinceMs, ticket: answer.ticket, askAgainMs },
  };
}

/** How long after a `queued` create answer the create looks once more (the emulator's queue: 200 to 500 ms). */
const LOOK_AFTER_CREATE_MS = 1_000;

/** What the activities need from the worker beyond its client: the code loop's secrets and webhooks, the fleet limit. */
export interface CodeLoopDependencies {
  /** The TOTP secrets this worker holds, by name; default: none. */
  totp?: TotpKeys;
  /**
   * Where this worker sends webhook events, and how it signs them; default: none (events are dropped with a warning).
   */
  webhooks?: WebhookSender;
  /** The fleet-wide limit on running tasks; default: none (a create acquires nothing). */
  fleet?: FleetLimit;
}

/**
 * The BrowserAI activities, bound to a client. Their names start with `browserAI` so they cannot
 * collide with a team's own activities in a shared worker (`createTask` is a common name). Workers pass a real client; tests pass one
 * pointed at the emulator. Each activity is one API call (polling aside), so retry policies
 * can be chosen per call in the workflow. `durations` is what this worker learned of how long
 * tasks of each kind run (one per worker process, shared by its polls).
 */
export function createActivities(
  client: BrowserAIClient,
  durations: TaskDurations = new TaskDurations(),
  { totp = new TotpKeys(), webhooks, fleet }: CodeLoopDependencies = {},
) {
  const signal = () => Context.current().cancellationSignal;
  /** The codes to mask for a task: those it was sent, and its TOTP codes (typed ones and the current ones). */
  const secretCodes = (task: { codes?: string[]; totp?: TotpMask }): string[] | undefined => {
    if (!task.totp) return task.codes;
    return [...(task.codes ?? []), ...totp.codesToMask(task.totp.secretName, task.totp.steps, Date.now())];
  };
  const call = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw toActivityFailure(err);
    }
  };

  /** Append (POST) or replace (PUT) instructions, at most once unless the caller chose otherwise. */
  const sendInstructions = async (
    kind: 'append' | 'replace',
    input: SendInstructionsInput,
  ): Promise<TaskExecutionAnswer> => {
    const { executionId, instructions, awaitable, delivery } = input;
    const codes = secretCodes(input);
    const answer = await countingAmbiguous(
      deliverOnce({
        what:
          kind === 'append'
            ? `Appending instructions to ${executionId}`
            : `Replacing the instructions of ${executionId}`,
        delivery,
        requestTimeoutMs: client.requestTimeoutMs,
        send: (timeoutMs) =>
          (kind === 'append'
            ? client.appendInstructions(executionId, { instructions, awaitable }, { timeoutMs })
            : client.replaceInstructions(executionId, { instructions, awaitable }, { timeoutMs })
          ).then(executionAnswer, async (err: unknown) => {
            throw await instructionRefusal(client, executionId, maskCodesInFailure(err, codes), signal());
          }),
        // Nothing to undo, but worth a line: the workflow saw AmbiguousRequest for instructions BrowserAI got.
        onLateAnswer: async () =>
          log.warn('Instructions reached BrowserAI after their attempt gave up (the workflow saw AmbiguousRequest)', {
            executionId,
          }),
      }),
    );
    return answer;
  };

  return {
    /** `POST /tasks`: creates the task, at most once unless `delivery` is `at-least-once`. */
    async browserAICreateTask(input: CreateTaskInput): Promise<CreatedTask | WaitingForSlot> {
      const { delivery, stopRetryWindowMs, place, lookInPoll, codeRecipient, ...body } = input;
      const attemptStartedAtMs = Date.now();
      const what = 'Creating the BrowserAI task';
      let slot: { limiterId: string } | undefined;
      if (fleet && place) {
        // A retry whose create was delivered holds its slot already: it must not wait for one again.
        const delivered = await countingAmbiguous((async () => earlierDelivery(what, delivery))());
        const deadlineMs = latestSendMs(attemptStartedAtMs, client.requestTimeoutMs);
        const acquired = delivered
          ? { limiterId: place.heldFrom ?? fleet.limiterId }
          : await beforeSending(() => acquireSlot(fleet, place, body.project, deadlineMs));
        if ('waitingForSlot' in acquired) return acquired;
        slot = acquired;
      }
      // Before the create: every code the task sets off then finds it at its recipient.
      const recipientWorkflowId = codeRecipient
        ? await beforeSending(() => joinRecipient(Context.current().client, codeRecipient))
        : undefined;
      try {
        const answer = await countingAmbiguous(
          deliverOnce({
            what,
            delivery,
            attemptStartedAtMs,
            requestTimeoutMs: client.requestTimeoutMs,
            send: (timeoutMs) => client.createTask(body, { timeoutMs }).then(executionAnswer),
            // Nobody else will ever learn this task's ID: stop it rather than leave it running.
            onLateAnswer: (late) =>
              stopLateTask(client, late.executionId, stopRetryWindowMs ?? DEFAULTS.stopRetryWindowMs),
          }),
        );
        const answered = { ...answer, kind: taskKind(body) };
        const created = lookInPoll ? leaveLookToPoll(answered) : await lookWhenQueued(client, answered);
        return { ...created, ...(slot ? { slot } : {}), ...(recipientWorkflowId ? { recipientWorkflowId } : {}) };
      } catch (err) {
        // Refused for good: the slot goes to the next in line now. A retryable refusal (BrowserAI's
        // own limit on running tasks, a 429) keeps it, so the task keeps its place.
        if (slot && place && err instanceof ApplicationFailure && err.nonRetryable)
          await fleet!.release(Context.current().client, holderIdOf(place));
        if (recipientWorkflowId && err instanceof ApplicationFailure && err.nonRetryable)
          await leaveRecipient(Context.current().client, recipientWorkflowId, codeRecipient!.member.holderId);
        throw err;
      }
    },

    // The limiter's own, for a worker that serves the limiter on its own task queue.
    ...fleetLimiterActivities(),

    /** `POST /tasks/{id}/instructions`: appends instructions (a one-time code among them), at most once by default. */
    async browserAIAppendInstructions(input: SendInstructionsInput): Promise<TaskExecutionAnswer> {
      return sendInstructions('append', input);
    },

    // A replace restarts the run from the first instruction, so a repeat would run steps again.
    /** `PUT /tasks/{id}/instructions`: replaces the instructions, which restarts the run; at most once by default. */
    async browserAIReplaceInstructions(input: SendInstructionsInput): Promise<TaskExecutionAnswer> {
      return sendInstructions('replace', input);
    },

    /** Sends one stop (`POST /tasks/{id}/command`) and settles a refused one by reading the task's status. */
    async browserAIStopTask(input: StopTaskInput): Promise<StopTaskOutput> {
      return stopTask(client, input);
    },

    /** `GET /tasks/{id}`: the task as the workflow keeps it (masked, cut to size). */
    async browserAIGetTask(executionId: string): Promise<TaskSnapshot> {
      return snapshotOf(await call(() => client.getTask(executionId, { signal: signal() })));
    },

    /** `GET /results/{id}`: the results, masked and cut to `maxBytes`. */
    async browserAIGetResults(input: GetResultsInput): Promise<TaskResultsSummary> {
      return call(() => readResults(client, { ...input, codes: secretCodes(input) }, input.maxBytes, signal()));
    },

    /**
     * Polls `GET /tasks/{id}` in one long, heartbeating activity until the status changes or `maxSpanMs` passes;
     * an end comes back at once, with the results when `resultsMaxBytes` asks for them (else the workflow reads them with
     * browserAIGetResults).
     */
    async browserAIPollTask(input: PollTaskInput): Promise<PollTaskOutput> {
      return pollUntilStatusChanges({ client, durations, secretCodes }, input);
    },

    /**
     * Computes the current TOTP code of the named secret and types it, at most once; returns the time step, never the
     * code. With `waitInWorkflow`, a code not due yet is not waited for: the answer says how long until one is.
     */
    async browserAITypeTotpCode(input: TypeTotpCodeInput): Promise<TotpCodeAnswer | TotpNotDue> {
      return countingAmbiguous(typeTotpCode(client, totp, input));
    },

    /** One attempt at delivering a webhook event to the worker's destination. */
    async browserAIDeliverWebhook(input: WebhookDeliveryInput): Promise<WebhookDeliveryOutput> {
      return webhooks ? webhooks.deliver(input) : noWebhookDestination(input);
    },

    /** `POST /saved_tasks`: creates a saved task. */
    async browserAICreateSavedTask(input: CreateSavedTaskRequest): Promise<CreateSavedTaskResponse> {
      try {
        return await client.createSavedTask(input, { signal: signal() });
      } catch (err) {
        // A retry after a lost answer meets its own earlier create: same name, same content.
        if (Context.current().info.attempt > 1 && isBrowserAIError(err) && err.kind === 'Conflict') {
          const existing = await call(() => client.getSavedTask(input.name, { signal: signal() }));
          if (sameSavedTask(existing, input))
            return { taskId: existing.taskId, message: 'Saved task created (by an earlier attempt)' };
        }
        throw toActivityFailure(err);
      }
    },

    /** `GET /saved_tasks/name/{name}`: a saved task by name; an unknown name fails `SavedTaskNotFound`. */
    async browserAIGetSavedTask(name: string): Promise<SavedTask> {
      return call(() => client.getSavedTask(name, { signal: signal() }));
    },

    /** `GET /saved_tasks`: every saved task of the account. */
    async browserAIListSavedTasks(): Promise<SavedTask[]> {
      return call(() => client.listSavedTasks({ signal: signal() }));
    },
  };
}

/** The activities' types, for `proxyActivities<BrowserAIActivities>()` in workflow code (which imports types only). */
export type BrowserAIActivities = ReturnType<typeof createActivities>;

function sameSavedTask(existing: SavedTask, wanted: CreateSavedTaskRequest): boolean {
  const actions = (list: Array<{ action: string }> | undefined) => JSON.stringify((list ?? []).map((i) => i.action));
  return (
    existing.project === wanted.project &&
    existing.geoLocation?.country?.toUpperCase() === wanted.geoLocation.country.toUpperCase() &&
    actions(existing.instructions) === actions(wanted.instructions)
  );
}

/** Counts the sends that end AmbiguousRequest (browserai_ambiguous_requests_total). */
async function countingAmbiguous<T>(delivery: Promise<T>): Promise<T> {
  try {
    return await delivery;
  } catch (err) {
    if (err instanceof ApplicationFailure && err.type === FailureType.AmbiguousRequest) recordAmbiguousRequest();
    throw err;
  }
}

/**
 * A create answers `queued`, and a task usually leaves the queue within a second. Looking once a
 * second later, inside the create, let the workflow start with `running` and go straight to the
 * poll that waits for the end: one poll activity and one search-attribute upsert fewer per task.
 * But an instruction or code signalled during that second waited for the create to return. A
 * workflow that asks `lookInPoll` (every run since) gets the answer at once and looks with a
 * first poll of a second instead (docs/design/polling.md); this look serves the runs from before.
 * A task still queued, or a look that fails, returns the create's own answer.
 */
async function lookWhenQueued(client: BrowserAIClient, created: TaskExecutionAnswer): Promise<CreatedTask> {
  if (normalizeStatus(created.status) !== 'queued') return created;
  const ctx = Context.current();
  try {
    await ctx.sleep(LOOK_AFTER_CREATE_MS);
    // Short: the create's attempt (1 minute) may already have spent 30 s on the create itself.
    const seen = snapshotOf(
      await client.getTask(created.executionId, { signal: ctx.cancellationSignal, timeoutMs: 5_000 }),
    );
    if (normalizeStatus(seen.status) !== 'running') return created;
    return {
      ...created,
      status: seen.status,
      started: seen.started ?? created.started,
      estimatedCompletion: seen.estimatedCompletion ?? created.estimatedCompletion,
      seen,
    };
  } catch {
    // A shutdown or a failed read: the created task is what matters; the workflow's poll looks again.
    return created;
  }
}

/** The create's answer as it is, marked when the workflow's first poll is to look (it answered `queued`). */
function leaveLookToPoll(created: TaskExecutionAnswer): CreatedTask {
  return normalizeStatus(created.status) === 'queued' ? { ...created, lookInPoll: true } : created;
}
