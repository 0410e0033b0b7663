import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { BrowserAIActivities, TaskExecutionAnswer, TaskResultsSummary, TaskSnapshot } from '../activities';
import { categorize, isFailedStatus, type StatusCategory } from '../browserai/status';
import type { Instruction } from '../browserai/types';
import { FailureType, type FailureTypeName } from '../errors';
import { renderDetails } from './details';
import {
  DEFAULTS,
  codeInstruction,
  codeProblems,
  instructionProblems,
  resolvePolling,
  taskInputProblems,
  type BrowserTaskInput,
  type BrowserTaskResult,
  type OutgoingInstructions,
} from './input';
import {
  addInstructionsUpdate,
  appendInstructionsSignal,
  completeSignal,
  replaceInstructionsSignal,
  stateQuery,
  submitCodeSignal,
  type BrowserTaskState,
} from './messages';
import { BrowserAIAwaitingInput, BrowserAIExecutionId, BrowserAIProject, BrowserAIStatus } from './search-attributes';

// Retry policies per call. Non-retryable failures (4xx, AmbiguousRequest) end retries at once;
// the activities set a 429's Retry-After as the next delay.
const { createTask, appendInstructions, replaceInstructions } = proxyActivities<BrowserAIActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});
const { stopTask, getResults } = proxyActivities<BrowserAIActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});
/** Within this of the deadline, it counts as reached: one more poll activity would cost history for nothing. */
const DEADLINE_SLACK_MS = 1_000;

// Polls are idempotent: retried for as long as the workflow's own timeout allows.
const { pollTask } = proxyActivities<BrowserAIActivities>({
  startToCloseTimeout: '2 hours',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '2 minutes' },
});

interface Queued extends OutgoingInstructions {
  id: number;
}
type SendOutcome = { answer: TaskExecutionAnswer } | { error: Error };

/** Builds the calling workflow's own input for its next run, from the resume state. */
export type ContinueAsNewWith = (next: BrowserTaskInput) => Promise<never>;

/**
 * Runs one BrowserAI task durably, inside whichever workflow calls it (browserTask,
 * runSavedTask): create it once, poll it cheaply, pass instructions and one-time codes to it
 * as they arrive, and return its results. It installs the task's signal, update and query
 * handlers. A cancelled workflow stops the task (exactly one stop); a timeout stops it and
 * fails `TaskTimeout`.
 */
export async function runBrowserTask(input: BrowserTaskInput, continueAsNewWith: ContinueAsNewWith): Promise<BrowserTaskResult> {
  const problems = taskInputProblems(input);
  if (problems.length > 0) {
    throw ApplicationFailure.create({
      type: FailureType.InvalidInput,
      nonRetryable: true,
      message: `Invalid browserTask input: ${problems.join('; ')}. Nothing was sent to BrowserAI.`,
      details: [{ problems }],
    });
  }
  const polling = resolvePolling(input.polling);
  const delivery = input.delivery ?? DEFAULTS.delivery;
  const resume = input.resume;
  const startedAtMs = resume?.startedAtMs ?? Date.now();
  const timeoutMs = input.timeoutMs ?? DEFAULTS.timeoutMs;
  const awaitingInputTimeoutMs = input.awaitingInputTimeoutMs ?? DEFAULTS.awaitingInputTimeoutMs;
  const maxResultBytes = input.maxResultBytes ?? DEFAULTS.maxResultBytes;

  const state: BrowserTaskState = {
    executionId: resume?.executionId ?? null,
    status: resume?.status ?? 'starting',
    // A run continued as new while awaiting is still awaiting: applySnapshot won't run before the wait.
    awaitingInput: resume ? categorize(resume.status) === 'awaiting' : false,
    progress: { logs: [] },
    started: resume?.started ?? null,
    estimatedCompletion: resume?.estimatedCompletion ?? null,
    pendingInstructions: 0,
    error: null,
    outcome: null,
  };
  let category: StatusCategory = resume ? categorize(resume.status) : 'running';
  let nextId = 0;
  const queue: Queued[] = (resume?.pending ?? []).map((item) => ({ ...item, id: nextId++ }));
  const outcomes = new Map<number, SendOutcome>();
  let sending = false;
  let sendsSettled = 0;
  let completeRequested = resume?.completeRequested ?? false;
  let awaitingSinceMs = resume?.awaitingSinceMs;
  let stopSent = false;
  let latestResults: TaskResultsSummary | null = null;
  const unknownStatusesLogged = new Set<string>();
  const codesSeen: string[] = [...(resume?.codes ?? [])];
  let lastSnapshot: TaskSnapshot | null = null;

  // Search attributes exist only where the namespace registered them; the starters set
  // BrowserAIStatus at start exactly when they do, so its presence says upserts are safe.
  const searchAttributesOn = workflowInfo().typedSearchAttributes.get(BrowserAIStatus) !== undefined;
  // What the starter (or the previous run) already set needs no upsert of its own.
  const published = new Map<string, unknown>(
    [BrowserAIStatus, BrowserAIAwaitingInput, BrowserAIExecutionId, BrowserAIProject].map((key) => [key.name, workflowInfo().typedSearchAttributes.get(key)]),
  );

  let upsertQueued = false;

  function upsertChangedSearchAttributes(): void {
    upsertQueued = false;
    const wanted: SearchAttributeUpdatePair[] = [
      { key: BrowserAIStatus, value: state.status },
      { key: BrowserAIAwaitingInput, value: state.awaitingInput },
      { key: BrowserAIProject, value: input.project },
    ];
    if (state.executionId) wanted.push({ key: BrowserAIExecutionId, value: state.executionId });
    const changed = wanted.filter((pair) => published.get(pair.key.name) !== pair.value);
    if (changed.length === 0) return;
    upsertSearchAttributes(changed);
    for (const pair of changed) published.set(pair.key.name, pair.value);
  }

  function publish(): void {
    state.pendingInstructions = queue.length;
    setCurrentDetails(renderDetails(state, latestResults, codesSeen));
    // Every upsert is a history event: changes made in one activation are sent as one upsert,
    // from a microtask that runs after them but before the activation completes.
    if (searchAttributesOn && !upsertQueued) {
      upsertQueued = true;
      void Promise.resolve().then(upsertChangedSearchAttributes);
    }
  }

  function applySnapshot(snapshot: TaskSnapshot | TaskExecutionAnswer): void {
    state.status = snapshot.status;
    category = categorize(snapshot.status);
    if (snapshot.started !== undefined) state.started = snapshot.started ?? state.started;
    state.estimatedCompletion = snapshot.estimatedCompletion ?? null;
    // Derived here, with the status, so both reach the search attributes in one upsert.
    state.awaitingInput = category === 'awaiting';
    if (state.awaitingInput) awaitingSinceMs ??= Date.now();
    else awaitingSinceMs = undefined;
    if ('progress' in snapshot) {
      state.progress = snapshot.progress;
      state.error = snapshot.error ?? state.error;
    }
    publish();
  }

  function enqueue(item: OutgoingInstructions): number {
    const id = nextId++;
    queue.push({ ...item, id });
    publish();
    return id;
  }

  const acceptsInstructions = () => category !== 'ended' && !stopSent;
  const taskEnded = () =>
    ApplicationFailure.nonRetryable(`BrowserAI task ${state.executionId} has ended (${state.status}); it takes no more instructions.`, FailureType.TaskEnded);

  setHandler(appendInstructionsSignal, ({ instructions }) => {
    const bad = instructionProblems(instructions);
    if (bad.length > 0) return log.warn('Ignored appendInstructions signal with invalid instructions', { problems: bad });
    if (!acceptsInstructions()) return log.warn('Ignored appendInstructions signal: the task has ended');
    enqueue({ kind: 'append', instructions });
  });
  setHandler(replaceInstructionsSignal, ({ instructions }) => {
    const bad = instructionProblems(instructions);
    if (bad.length > 0) return log.warn('Ignored replaceInstructions signal with invalid instructions', { problems: bad });
    if (!acceptsInstructions()) return log.warn('Ignored replaceInstructions signal: the task has ended');
    enqueue({ kind: 'replace', instructions });
  });
  setHandler(submitCodeSignal, ({ code }) => {
    if (codeProblems(code).length > 0) return log.warn('Ignored submitCode signal: the code is not 1-64 letters, digits or dashes');
    if (!acceptsInstructions()) return log.warn('Ignored submitCode signal: the task has ended');
    codesSeen.push(code);
    enqueue({ kind: 'append', instructions: [codeInstruction(input.codeInstructionTemplate, code)], isCode: true });
  });
  setHandler(completeSignal, () => {
    completeRequested = true;
  });
  setHandler(
    addInstructionsUpdate,
    async ({ instructions }) => {
      const id = enqueue({ kind: 'append', instructions });
      await condition(() => outcomes.has(id));
      const outcome = outcomes.get(id)!;
      outcomes.delete(id);
      if ('error' in outcome) throw outcome.error;
      return outcome.answer;
    },
    {
      validator: ({ instructions }) => {
        const bad = instructionProblems(instructions);
        if (bad.length > 0) throw ApplicationFailure.nonRetryable(`Invalid instructions: ${bad.join('; ')}`, FailureType.InvalidInput);
        if (!acceptsInstructions()) throw taskEnded();
      },
    },
  );
  setHandler(stateQuery, () => ({ ...state, pendingInstructions: queue.length }));

  const withSummary = (summary: string): ActivityOptions => ({ summary });

  // Sends queued instructions one at a time, in arrival order, for as long as the task runs.
  async function sendLoop(executionId: string): Promise<never> {
    for (;;) {
      await condition(() => queue.length > 0);
      const item = queue[0]!;
      if (!acceptsInstructions()) {
        // Queued before the task ended: BrowserAI would only refuse it (409), so don't ask.
        outcomes.set(item.id, { error: taskEnded() });
        queue.shift();
        sendsSettled++;
        continue;
      }
      sending = true;
      try {
        const request = { executionId, instructions: item.instructions, awaitable: input.awaitable, delivery };
        const what = item.isCode ? 'Send one-time code' : item.kind === 'replace' ? 'Replace instructions' : 'Append instructions';
        // Once sent, an instruction is not taken back: let it finish so we know what BrowserAI got.
        const answer = await CancellationScope.nonCancellable(() =>
          item.kind === 'replace'
            ? replaceInstructions.executeWithOptions(withSummary(`${what} of ${executionId}`), [request])
            : appendInstructions.executeWithOptions(withSummary(`${what} to ${executionId}`), [request]),
        );
        outcomes.set(item.id, { answer });
        awaitingSinceMs = undefined; // input arrived: a task still awaiting gets a fresh deadline
        applySnapshot(answer);
      } catch (err) {
        const failure = rootFailure(err);
        log.warn('Sending instructions to BrowserAI failed', { executionId, failure: failure.message });
        state.error = failure.message;
        outcomes.set(item.id, { error: failure });
      } finally {
        queue.shift();
        sending = false;
        sendsSettled++;
        publish();
      }
    }
  }

  async function waitForSendsToSettle(): Promise<void> {
    await condition(() => queue.length === 0 && !sending);
  }

  async function stopOnce(reason: string): Promise<void> {
    if (stopSent || !state.executionId || category === 'ended') return;
    stopSent = true;
    log.info('Stopping the BrowserAI task', { executionId: state.executionId, reason });
    const executionId = state.executionId;
    try {
      // Once decided, the stop is sent even if a cancellation arrives meanwhile: stopSent is already true.
      await CancellationScope.nonCancellable(() => stopTask.executeWithOptions(withSummary(`Stop ${executionId} (${reason})`), [executionId]));
    } catch (err) {
      // Conflict / not found: it ended on its own meanwhile, which is what a stop wants.
      log.warn('The stop command was not accepted', { executionId: state.executionId, failure: failureMessage(err) });
    }
  }

  async function collectResults(): Promise<BrowserTaskResult> {
    const executionId = state.executionId!;
    const summary = await getResults.executeWithOptions(withSummary(`Fetch results of ${executionId}`), [
      { executionId, maxBytes: maxResultBytes },
    ]);
    latestResults = summary;
    // After our own stop, the results answer is the freshest word on the status.
    if (stopSent || categorize(summary.status) === 'ended') {
      state.status = summary.status;
      category = categorize(summary.status);
    }
    state.awaitingInput = false;
    const outcome: BrowserTaskResult = {
      executionId,
      status: state.status,
      started: summary.started ?? state.started,
      completed: summary.completed ?? null,
      result: lastSnapshot?.result ?? null,
      error: state.error,
      results: summary.results,
      ...(summary.trimmed ? { trimmed: summary.trimmed } : {}),
    };
    state.outcome = outcome;
    publish();
    return outcome;
  }

  async function stopAndCollect(reason: string): Promise<BrowserTaskResult | null> {
    if (!state.executionId) return null;
    await stopOnce(reason);
    try {
      return await collectResults();
    } catch (err) {
      log.warn('Could not fetch the results after stopping', { executionId: state.executionId, failure: failureMessage(err) });
      return null;
    }
  }

  // The overall timeout needs no timer of its own (two history events per task): the polling
  // activity's span ends at the deadline, and the awaiting wait is bounded by it too.
  const deadlineMs = startedAtMs + timeoutMs;
  const untilDeadline = () => deadlineMs - Date.now();

  /** Stops the task, keeps what it produced, and fails with `type`: the timeouts' common ending. */
  async function stopAndFail(reason: string, type: FailureTypeName, message: string): Promise<never> {
    const soFar = await CancellationScope.nonCancellable(() => stopAndCollect(reason));
    throw ApplicationFailure.create({ type, nonRetryable: true, message, details: [soFar] });
  }

  const failTimedOut = () =>
    stopAndFail(
      'task timeout',
      FailureType.TaskTimeout,
      `BrowserAI task ${state.executionId ?? '(not created)'} did not end within timeoutMs=${timeoutMs} ms and was stopped. Raise timeoutMs for longer tasks.`,
    );

  /**
   * Polls until the task leaves `knownCategory`. `lookOnce`: one `GET` at once, whatever it says,
   * because what the workflow last saw may not be true any more.
   */
  async function pollOnce(knownCategory: StatusCategory, lookOnce = false): Promise<void> {
    const executionId = state.executionId!;
    const spanMs = lookOnce ? 1 : Math.max(1, Math.min(polling.maxSpanMs, untilDeadline()));
    const settledBefore = sendsSettled;
    let out;
    try {
      out = await pollTask.executeWithOptions(
        {
          summary: lookOnce ? `Look at ${executionId} once` : `Poll ${executionId} until it leaves "${knownCategory}"`,
          heartbeatTimeout: polling.heartbeatTimeoutMs,
          startToCloseTimeout: spanMs + 2 * polling.maxIntervalMs + 60_000,
          // Retries of a failing poll (BrowserAI down) must not outlive the task's deadline.
          scheduleToCloseTimeout: Math.max(untilDeadline(), 0) + 2 * polling.maxIntervalMs + 60_000,
        },
        [
          {
            executionId,
            knownCategory,
            estimatedCompletion: state.estimatedCompletion,
            initialIntervalMs: polling.initialIntervalMs,
            maxIntervalMs: polling.maxIntervalMs,
            maxSpanMs: spanMs,
            sleepFirst: !lookOnce,
          },
        ],
      );
    } catch (err) {
      if (!isCancellation(err) && untilDeadline() <= DEADLINE_SLACK_MS) await failTimedOut();
      throw err;
    }
    if (sendsSettled !== settledBefore && out.snapshot.category === 'awaiting') {
      // The poll may have read the task before an instruction sent meanwhile reached it: its
      // `awaiting` is older than the send's answer. Look again rather than wait for input.
      return pollOnce('running', true);
    }
    for (const status of out.unknownStatuses) {
      if (!unknownStatusesLogged.has(status)) {
        unknownStatusesLogged.add(status);
        log.warn('BrowserAI reported an unknown status; treating it as running', { executionId, status });
      }
    }
    lastSnapshot = out.snapshot;
    applySnapshot(out.snapshot);
  }

  async function continueAsNewWhenSafe(): Promise<void> {
    // Handlers finish first (an update's caller is waiting for its answer), and nothing may be
    // in flight: the new run must know exactly what BrowserAI has already received.
    await condition(() => allHandlersFinished() && !sending);
    log.info('Continuing as new to keep the history small', { executionId: state.executionId });
    await continueAsNewWith({
      ...input,
      resume: {
        executionId: state.executionId!,
        status: state.status,
        started: state.started,
        estimatedCompletion: state.estimatedCompletion,
        pending: queue.map(({ kind, instructions, isCode }) => ({ kind, instructions, ...(isCode ? { isCode } : {}) })),
        startedAtMs,
        completeRequested,
        awaitingSinceMs,
        codes: codesSeen,
      },
    });
  }

  async function runUntilEnded(): Promise<BrowserTaskResult> {
    if (!state.executionId) {
      // Not cancellable: if the workflow is cancelled mid-create, we still learn the
      // execution ID, and so can stop the task that the create may have started.
      const created = await CancellationScope.nonCancellable(() =>
        createTask.executeWithOptions(withSummary(`Create ${input.type} task in project ${input.project}`), [
          {
            instructions: input.instructions as Instruction[],
            type: input.type,
            project: input.project,
            geoLocation: { ...input.geoLocation, country: input.geoLocation.country.toUpperCase() },
            inspect: input.inspect,
            awaitable: input.awaitable,
            delivery,
          },
        ]),
      );
      state.executionId = created.executionId;
      log.info('BrowserAI task created', { executionId: created.executionId });
      applySnapshot(created);
    }
    const sender = sendLoop(state.executionId);
    sender.catch(() => undefined); // ends with the scope; its failures are handled inside

    for (;;) {
      if (category === 'ended') break;
      if (workflowInfo().continueAsNewSuggested) await continueAsNewWhenSafe();
      if (untilDeadline() <= DEADLINE_SLACK_MS) await failTimedOut();
      if (category === 'awaiting') {
        const ready = () => completeRequested && queue.length === 0 && !sending;
        if (ready()) {
          await stopOnce('complete signal');
          break;
        }
        const settledBefore = sendsSettled;
        const awaitingLeft = (awaitingSinceMs ?? Date.now()) + awaitingInputTimeoutMs - Date.now();
        const remaining = Math.max(0, Math.min(awaitingLeft, untilDeadline()));
        const woke = await condition(() => sendsSettled > settledBefore || ready() || workflowInfo().continueAsNewSuggested, remaining, {
          summary: 'Wait for input: submitCode, appendInstructions or complete',
        });
        if (!woke && untilDeadline() <= DEADLINE_SLACK_MS) await failTimedOut();
        if (!woke) {
          // Nothing is polled while waiting for input (it would cost history): before giving
          // up, look once in case BrowserAI moved on by itself.
          await pollOnce('awaiting', true);
          if (category !== 'awaiting') continue;
          await stopAndFail(
            'awaiting-input timeout',
            FailureType.AwaitingInputTimeout,
            `BrowserAI task ${state.executionId} waited ${awaitingInputTimeoutMs} ms for input (submitCode, appendInstructions or complete) ` +
              'and was stopped. Send the input sooner, or raise awaitingInputTimeoutMs.',
          );
        }
        // A send that left the task awaiting (or failed) leaves us unsure what BrowserAI is
        // doing: look once before waiting again.
        if (sendsSettled > settledBefore && category === 'awaiting') await pollOnce('running', true);
        continue;
      }
      await pollOnce('running');
    }
    await waitForSendsToSettle().catch(() => undefined);
    return collectResults();
  }

  publish();
  try {
    const outcome = await runUntilEnded();
    // Updates still waiting for a send that will never happen are answered before we return.
    for (const item of queue.splice(0)) outcomes.set(item.id, { error: taskEnded() });
    await condition(allHandlersFinished);
    if (isFailedStatus(outcome.status)) {
      throw ApplicationFailure.create({
        type: FailureType.BrowserAITaskFailed,
        nonRetryable: true,
        message: `BrowserAI task ${outcome.executionId} failed: ${outcome.error ?? 'BrowserAI gave no error message'}`,
        details: [outcome],
      });
    }
    return outcome;
  } catch (err) {
    // Updates waiting for a send that will now never happen get a clear answer.
    for (const item of queue.splice(0)) outcomes.set(item.id, { error: taskEnded() });
    if (!isCancellation(err)) throw surfaceActivityFailure(err);
    // The workflow itself was cancelled: stop the task, keep what it produced, end cancelled.
    await CancellationScope.nonCancellable(() => stopAndCollect('workflow cancelled'));
    throw err;
  }
}

/**
 * An activity's typed failure (AmbiguousRequest, Unauthorized, ...) becomes the workflow's
 * own failure, so callers read its stable `type` at `WorkflowFailedError.cause.type`.
 */
export function surfaceActivityFailure(err: unknown): unknown {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) {
    const { type, message, details } = err.cause;
    return ApplicationFailure.create({ type: type ?? undefined, message, details: details ?? undefined, nonRetryable: true, cause: err });
  }
  return err;
}

/** An activity failure's own error (the ApplicationFailure under the ActivityFailure). */
function rootFailure(err: unknown): Error {
  if (err instanceof Error && err.cause instanceof Error) return err.cause;
  return err instanceof Error ? err : new Error(String(err));
}

function failureMessage(err: unknown): string {
  return rootFailure(err).message;
}
