// One BrowserAI task session inside a workflow: its state, and one method per thing that can
// happen to it (created, polled, input sent, waiting for input, stopped, results read). The
// workflow function (browser-task.ts) tells the story in order; ending.ts decides how it ends.
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { PollTaskOutput, TaskExecutionAnswer, TaskResultsSummary, TaskSnapshot } from '../../activities/types';
import { categorize, type StatusCategory } from '../../browserai/status';
import type { Instruction } from '../../browserai/types';
import { FailureType } from '../../errors';
import {
  DEFAULTS,
  codeInstruction,
  codeProblems,
  instructionProblems,
  resolvePolling,
  type BrowserTaskInput,
  type BrowserTaskResult,
  type OutgoingInstructions,
} from '../input';
import {
  addInstructionsUpdate,
  appendInstructionsSignal,
  browserTaskAwaitingInputSignal,
  completeSignal,
  executionIdUpdate,
  replaceInstructionsSignal,
  stateQuery,
  submitCodeSignal,
  type BrowserTaskState,
} from '../messages';
import { sessionActivities, type SessionActivities } from './activities';
import { failureType, rootFailure } from './failures';
import { Outbox, type SendOutcome } from './outbox';
import { Publisher } from './publisher';
import { recordAwaitingInput, recordCodeTyped, recordStopEnded, recordStopSent } from './metrics';

/** What continue-as-new hands to the next run. Never part of the public input: the workflow trusts only itself. */
export interface CarriedState {
  executionId: string;
  createdAtMs: number;
  status: string;
  started: string | null;
  estimatedCompletion: string | null;
  pending: OutgoingInstructions[];
  startedAtMs: number;
  completeRequested: boolean;
  awaitingSinceMs?: number;
  codesReceived: string[];
  codesTyped: string[];
  unconfirmedInput: UnconfirmedInput | null;
  kind?: string | null;
  phaseStartedAtMs?: number;
  /** Polls of the task so far (for the polls-per-task metric). */
  polls?: number;
}

/** Input was sent; until BrowserAI shows it took it, an `awaiting` may be the state from before. */
interface UnconfirmedInput {
  trustedFromMs: number;
}

/** Within this of the deadline, it counts as reached: one more poll activity would cost history for nothing. */
const DEADLINE_SLACK_MS = 1_000;
/**
 * For this long after a create, "task not found" means "not visible yet" (a poll keeps polling, a
 * stop is retried). A guess: BrowserAI documents nothing about consistency.
 */
export const NOT_FOUND_GRACE_MS = 30_000;

export class TaskSession {
  readonly polling;
  readonly delivery;
  readonly timeoutMs: number;
  readonly awaitingInputTimeoutMs: number;
  readonly stopRetryWindowMs: number;
  readonly startedAtMs: number;
  readonly outbox: Outbox;
  readonly #publisher: Publisher;
  readonly #activities: SessionActivities;

  executionId: string | null;
  createdAtMs: number | null;
  /** BrowserAI's status as last seen; the category (running, awaiting, ended) is derived from it. */
  status: string;
  #snapshot: Omit<TaskSnapshot, 'executionId' | 'status' | 'category'>;
  #awaitingSinceMs: number | undefined;
  #unconfirmedInput: UnconfirmedInput | null;
  #completeRequested: boolean;
  /** Codes received (masked wherever the session shows text) and codes typed (never typed twice). */
  readonly #codesReceived: string[];
  readonly #codesTyped: string[];
  stopSent = false;
  stopConfirmed: boolean | null = null;
  /** `GET /tasks/{id}` polls of the task, over all runs. */
  polls = 0;
  outcome: BrowserTaskResult | null = null;
  #latestResults: TaskResultsSummary | null = null;
  readonly #unknownStatusesLogged = new Set<string>();
  /** A send whose delivery is unknown (AmbiguousRequest): the session cannot know what BrowserAI has, so it ends. */
  #ambiguousSend: ApplicationFailure | null = null;
  /** The poll in flight, cancelled when the session must end without waiting for it. */
  #pollScope: CancellationScope | null = null;
  /**
   * The task's kind while its run says something about the kind: from the create until input is
   * sent or the task awaits (a wait for a person is no part of how long the kind runs).
   */
  #kind: string | null;
  /** When the task was created or last got input: where the poll expects its end to lie on the clock. */
  #phaseStartedAtMs: number | null;
  /** The results the poll read when it saw the task end. */
  #resultsAtEnd: TaskResultsSummary | null = null;
  /** Why there is no task, once the create has failed (answers the executionId update). */
  #notCreated: ApplicationFailure | null = null;

  constructor(
    readonly input: BrowserTaskInput,
    carried?: CarriedState,
  ) {
    this.polling = resolvePolling(input.polling);
    this.delivery = input.delivery ?? DEFAULTS.delivery;
    this.timeoutMs = input.timeoutMs ?? DEFAULTS.timeoutMs;
    this.awaitingInputTimeoutMs = input.awaitingInputTimeoutMs ?? DEFAULTS.awaitingInputTimeoutMs;
    this.stopRetryWindowMs = input.stopRetryWindowMs ?? DEFAULTS.stopRetryWindowMs;
    this.startedAtMs = carried?.startedAtMs ?? Date.now();
    this.outbox = new Outbox(carried?.pending);
    this.#publisher = new Publisher(input.project);
    this.#activities = sessionActivities(input);
    this.executionId = carried?.executionId ?? null;
    this.createdAtMs = carried?.createdAtMs ?? null;
    this.status = carried?.status ?? 'starting';
    this.#snapshot = {
      progress: { logs: [] },
      started: carried?.started ?? null,
      estimatedCompletion: carried?.estimatedCompletion ?? null,
      error: null,
    };
    this.#awaitingSinceMs = carried?.awaitingSinceMs;
    this.#unconfirmedInput = carried?.unconfirmedInput ?? null;
    this.#completeRequested = carried?.completeRequested ?? false;
    this.#codesReceived = [...(carried?.codesReceived ?? [])];
    this.#codesTyped = [...(carried?.codesTyped ?? [])];
    this.#kind = carried?.kind ?? null;
    this.#phaseStartedAtMs = carried?.phaseStartedAtMs ?? this.createdAtMs;
    this.polls = carried?.polls ?? 0;
  }

  get category(): StatusCategory {
    return categorize(this.status);
  }

  /** Nothing more will happen to the task from here: it ended, or this workflow stopped it. */
  get ended(): boolean {
    return this.category === 'ended' || this.stopSent;
  }

  /** Awaiting, and BrowserAI has shown that it took everything sent so far. */
  get awaitsInput(): boolean {
    return this.category === 'awaiting' && this.#unconfirmedInput === null && !this.ended;
  }

  /** A task exists that nobody has seen end and nobody has stopped yet. */
  get mayStillRun(): boolean {
    return this.executionId !== null && this.category !== 'ended' && !this.stopSent;
  }

  get deadlineMs(): number {
    return this.startedAtMs + this.timeoutMs;
  }

  view(): BrowserTaskState {
    return {
      executionId: this.executionId,
      status: this.status,
      awaitingInput: this.awaitsInput,
      progress: { status: this.#snapshot.progress.status, logs: this.#snapshot.progress.logs },
      started: this.#snapshot.started ?? null,
      estimatedCompletion: this.#snapshot.estimatedCompletion ?? null,
      pendingInstructions: this.outbox.size,
      error: this.#snapshot.error ?? null,
      outcome: this.outcome,
      stopConfirmed: this.stopConfirmed,
    };
  }

  publish(): void {
    this.#publisher.publish(this.view(), this.#latestResults, this.#codesReceived);
  }

  // ---- Messages from callers -------------------------------------------------------------

  installHandlers(): void {
    setHandler(appendInstructionsSignal, ({ instructions }) =>
      this.#acceptSignal('appendInstructions', { kind: 'append', instructions }),
    );
    setHandler(replaceInstructionsSignal, ({ instructions }) =>
      this.#acceptSignal('replaceInstructions', { kind: 'replace', instructions }),
    );
    setHandler(submitCodeSignal, ({ code, force }) => this.#acceptCode(code, force === true));
    setHandler(completeSignal, () => {
      this.#completeRequested = true;
    });
    setHandler(
      addInstructionsUpdate,
      ({ instructions }) => this.outbox.outcomeOf(this.#enqueue({ kind: 'append', instructions })),
      {
        validator: ({ instructions }) => {
          const bad = instructionProblems(instructions);
          if (bad.length > 0)
            throw ApplicationFailure.nonRetryable(`Invalid instructions: ${bad.join('; ')}`, FailureType.InvalidInput);
          if (this.ended) throw this.taskEnded();
        },
      },
    );
    setHandler(stateQuery, () => this.view());
    setHandler(executionIdUpdate, async () => {
      await condition(() => this.executionId !== null || this.#notCreated !== null);
      if (this.executionId === null) throw this.#notCreated!;
      return this.executionId;
    });
  }

  #acceptSignal(signal: string, item: OutgoingInstructions): void {
    const bad = instructionProblems(item.instructions);
    if (bad.length > 0) return log.warn(`Ignored ${signal} signal with invalid instructions`, { problems: bad });
    if (this.ended) return log.warn(`Ignored ${signal} signal: the task has ended`);
    this.#enqueue(item);
  }

  #acceptCode(code: string, force: boolean): void {
    if (codeProblems(code).length > 0)
      return log.warn('Ignored submitCode signal: the code is not 1-64 letters, digits or dashes');
    if (this.ended) return log.warn('Ignored submitCode signal: the task has ended');
    if (!force && (this.#codesTyped.includes(code) || this.outbox.codesInHand.includes(code))) {
      return log.warn(
        'Ignored submitCode signal: this task already typed (or queued) this code. Send it with force: true to type it again.',
      );
    }
    if (!this.#codesReceived.includes(code)) this.#codesReceived.push(code);
    this.#enqueue({ kind: 'append', instructions: [codeInstruction(this.input.codeInstructionTemplate, code)], code });
  }

  #enqueue(item: OutgoingInstructions): number {
    const id = this.outbox.enqueue(item);
    this.publish();
    return id;
  }

  taskEnded(): ApplicationFailure {
    return ApplicationFailure.nonRetryable(
      `BrowserAI task ${this.executionId ?? '(not created)'} has ended (${this.status}); it takes no more instructions.`,
      FailureType.TaskEnded,
    );
  }

  // ---- The task's life ---------------------------------------------------------------------

  /** Creates the task, once: a run continued as new already has it. */
  async create(): Promise<void> {
    if (this.executionId) return;
    // A cancel that arrived with the start (before the first workflow task) creates nothing.
    if (CancellationScope.current().consideredCancelled) {
      this.#notCreated = ApplicationFailure.nonRetryable(
        'The workflow was cancelled before its task was created.',
        FailureType.TaskNotCreated,
      );
      throw new CancelledFailure(
        'The workflow was cancelled before its task was created; nothing was sent to BrowserAI.',
      );
    }
    const { input } = this;
    let created: TaskExecutionAnswer;
    try {
      // Not cancellable: if the workflow is cancelled mid-create, we still learn the execution
      // ID, and so can stop the task that the create may have started.
      created = await CancellationScope.nonCancellable(() =>
        this.#activities.createTask.executeWithOptions(
          { summary: `Create ${input.type} task in project ${input.project}` },
          [
            {
              instructions: input.instructions as Instruction[],
              type: input.type,
              project: input.project,
              geoLocation: { ...input.geoLocation, country: input.geoLocation.country.toUpperCase() },
              inspect: input.inspect,
              awaitable: input.awaitable,
              delivery: this.delivery,
            },
          ],
        ),
      );
    } catch (err) {
      // A malformed answer that named its task: the task exists, so the ending can stop it.
      const named = createdDespiteFailure(err);
      if (named) this.#recordCreated(named);
      else
        this.#notCreated = ApplicationFailure.nonRetryable(
          `The BrowserAI task was not created: ${rootFailure(err).message}`,
          FailureType.TaskNotCreated,
        );
      throw err;
    }
    this.#recordCreated(created.executionId);
    this.#kind = created.kind ?? null;
    this.#applyAnswer(created);
  }

  #recordCreated(executionId: string): void {
    this.executionId = executionId;
    this.createdAtMs = Date.now();
    this.#phaseStartedAtMs = this.createdAtMs;
    log.info('BrowserAI task created', { executionId });
    this.publish();
  }

  /** Sends queued instructions and codes, in order, for as long as the session runs. */
  startSending(): void {
    const executionId = this.executionId!;
    const sender = this.outbox.sendForever(
      (item) => {
        const what = item.code
          ? 'Send one-time code'
          : item.kind === 'replace'
            ? 'Replace instructions'
            : 'Append instructions';
        const request = {
          executionId,
          instructions: item.instructions,
          awaitable: this.input.awaitable,
          delivery: this.delivery,
          ...this.#codesToMask,
        };
        return item.kind === 'replace'
          ? this.#activities.replaceInstructions.executeWithOptions({ summary: `${what} of ${executionId}` }, [request])
          : this.#activities.appendInstructions.executeWithOptions({ summary: `${what} to ${executionId}` }, [request]);
      },
      (item, outcome) => this.#onSent(item, outcome),
      () => (this.ended ? this.taskEnded() : null),
    );
    sender.catch(() => undefined); // ends with the workflow's scope; its failures are outcomes
  }

  #onSent(item: OutgoingInstructions, outcome: SendOutcome): void {
    const type = 'error' in outcome ? failureType(outcome.error) : undefined;
    const ambiguous = type === FailureType.AmbiguousRequest;
    const reached = 'answer' in outcome || ambiguous;
    if (item.code && reached) {
      this.#codesTyped.push(item.code);
      recordCodeTyped();
    }
    if (ambiguous) {
      // Repeating it could type a code twice; going on would wait for input BrowserAI may never
      // get. End now (the ending stops the task): the failure says what to check.
      this.#ambiguousSend = (outcome as { error: ApplicationFailure }).error;
      this.#pollScope?.cancel();
    }
    if ('error' in outcome) {
      if (type !== FailureType.TaskEnded) {
        log.warn('Sending instructions to BrowserAI failed', {
          executionId: this.executionId,
          failure: outcome.error.message,
        });
        this.#snapshot.error = outcome.error.message;
      }
    } else {
      this.#applyAnswer(outcome.answer);
    }
    // Input arrived: a task still awaiting gets a fresh awaiting deadline.
    this.#awaitingSinceMs = undefined;
    this.#kind = null;
    this.#phaseStartedAtMs = Date.now();
    // BrowserAI may report the state from before it took the input for a moment: `awaiting` is
    // trusted again once it shows otherwise. A refused send changed nothing, but its refusal may
    // mean the task ended (no 409 is documented): look at once.
    const answered = 'answer' in outcome ? outcome.answer.status : null;
    if (answered !== null && categorize(answered) !== 'awaiting') this.#unconfirmedInput = null;
    else this.#unconfirmedInput = { trustedFromMs: Date.now() + (reached ? this.polling.inputSettleMs : 0) };
    this.publish();
  }

  /** Polls until BrowserAI reports a status the session does not know yet (or the span ends). */
  async pollUntilStatusChanges(): Promise<void> {
    await this.#poll(false);
  }

  /** Waits for input (a code, instructions, `complete`) while the task awaits it. */
  async waitForInput(): Promise<void> {
    recordAwaitingInput('entered');
    try {
      await this.#waitForInput();
    } finally {
      recordAwaitingInput('left');
    }
  }

  async #waitForInput(): Promise<void> {
    if (this.#awaitingSinceMs === undefined) {
      this.#awaitingSinceMs = Date.now();
      await this.#notifyAwaitingInput();
    }
    const settledBefore = this.outbox.settled;
    const completeReady = () => this.#completeRequested && this.outbox.idle;
    if (completeReady()) return this.stop('complete signal');
    const left = Math.max(
      0,
      Math.min(this.#awaitingSinceMs + this.awaitingInputTimeoutMs - Date.now(), this.#untilDeadline()),
    );
    const woke = await condition(
      () => this.outbox.settled > settledBefore || completeReady() || workflowInfo().continueAsNewSuggested,
      left,
      {
        summary: 'Wait for input: submitCode, appendInstructions or complete',
      },
    );
    if (woke) return;
    // The awaiting timeout never fires while input is on its way.
    if (!this.outbox.idle) {
      await condition(() => this.outbox.settled > settledBefore);
      return;
    }
    this.failIfItMustEnd();
    // Nothing is polled while waiting for input (it would cost history): before giving up, look
    // once in case BrowserAI moved on by itself.
    await this.#poll(true);
    if (this.category !== 'awaiting') return;
    throw ApplicationFailure.nonRetryable(
      `BrowserAI task ${this.executionId} waited ${this.awaitingInputTimeoutMs} ms for input (submitCode, appendInstructions or complete) ` +
        'and was stopped. Send the input sooner, or raise awaitingInputTimeoutMs.',
      FailureType.AwaitingInputTimeout,
    );
  }

  /**
   * Tells the parent workflow (or `notifyWorkflowId`) that the task now awaits input, once per
   * wait, so it learns without polling. A workflow that is gone changes nothing here.
   */
  async #notifyAwaitingInput(): Promise<void> {
    const { notifyWorkflowId } = this.input;
    const target = notifyWorkflowId === false ? undefined : (notifyWorkflowId ?? workflowInfo().parent?.workflowId);
    if (!target) return;
    const since = this.#awaitingSinceMs!;
    try {
      await getExternalWorkflowHandle(target).signal(browserTaskAwaitingInputSignal, {
        workflowId: workflowInfo().workflowId,
        executionId: this.executionId!,
        status: this.status,
        since: new Date(since).toISOString(),
        timesOutAt: new Date(Math.min(since + this.awaitingInputTimeoutMs, this.deadlineMs)).toISOString(),
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('Could not tell the waiting workflow that the task awaits input', {
        workflowId: target,
        failure: rootFailure(err).message,
      });
    }
  }

  async #poll(lookOnce: boolean): Promise<void> {
    const executionId = this.executionId!;
    const spanMs = lookOnce ? 1 : Math.max(1, Math.min(this.polling.maxSpanMs, this.#untilDeadline()));
    const settledBefore = this.outbox.settled;
    const unconfirmed = this.#unconfirmedInput;
    let out: PollTaskOutput;
    this.#pollScope = new CancellationScope();
    try {
      out = await this.#pollScope.run(() =>
        this.#activities.pollTask.executeWithOptions(
          {
            summary: lookOnce
              ? `Look at ${executionId} once`
              : `Poll ${executionId} until it is no longer "${this.status}"`,
            heartbeatTimeout: this.polling.heartbeatTimeoutMs,
            startToCloseTimeout: spanMs + 2 * this.polling.maxIntervalMs + 60_000,
            // Retries of a failing poll (BrowserAI down) must not outlive the task's deadline.
            scheduleToCloseTimeout: Math.max(this.#untilDeadline(), 0) + 2 * this.polling.maxIntervalMs + 60_000,
          },
          [
            {
              executionId,
              knownStatus: this.status,
              estimatedCompletion: this.#snapshot.estimatedCompletion,
              initialIntervalMs: this.polling.initialIntervalMs,
              maxIntervalMs: this.polling.maxIntervalMs,
              targetDetectionMs: this.polling.targetDetectionMs,
              ...(this.#kind ? { kind: this.#kind } : {}),
              ...(this.#phaseStartedAtMs !== null ? { phaseStartedAtMs: this.#phaseStartedAtMs } : {}),
              resultBytes: this.#resultBytes,
              ...this.#codesToMask,
              maxSpanMs: spanMs,
              sleepFirst: !lookOnce,
              notFoundRetryUntilMs: (this.createdAtMs ?? 0) + NOT_FOUND_GRACE_MS,
              awaitingTrustedFromMs: unconfirmed?.trustedFromMs,
            },
          ],
        ),
      );
    } catch (err) {
      if (!isCancellation(err) || this.#ambiguousSend) this.failIfItMustEnd();
      throw err;
    } finally {
      this.#pollScope = null;
    }
    for (const status of out.unknownStatuses) {
      if (this.#unknownStatusesLogged.has(status)) continue;
      this.#unknownStatusesLogged.add(status);
      log.warn('BrowserAI reported an unknown status; treating it as running', { executionId, status });
    }
    this.polls += out.polls;
    this.#applySnapshot(out.snapshot);
    if (out.results) this.#resultsAtEnd = out.results;
    // The poll judged BrowserAI's `awaiting` against the input unconfirmed when it started; a send
    // that settled meanwhile left a newer unconfirmed input, which only a later poll can judge.
    if (this.outbox.settled === settledBefore && (out.snapshot.category !== 'awaiting' || out.changed))
      this.#unconfirmedInput = null;
    this.publish();
  }

  #applyAnswer(answer: TaskExecutionAnswer): void {
    if (answer.status !== null) this.status = answer.status;
    if (answer.started !== undefined) this.#snapshot.started = answer.started ?? this.#snapshot.started;
    this.#snapshot.estimatedCompletion = answer.estimatedCompletion ?? null;
    this.publish();
  }

  #applySnapshot(snapshot: TaskSnapshot): void {
    this.status = snapshot.status;
    const { started, estimatedCompletion, error, progress, result } = snapshot;
    this.#snapshot = {
      ...this.#snapshot,
      progress,
      estimatedCompletion: estimatedCompletion ?? null,
      error: error ?? this.#snapshot.error,
    };
    if (started) this.#snapshot.started = started;
    if (result !== undefined) this.#snapshot.result = result;
    if (this.category !== 'awaiting') this.#awaitingSinceMs = undefined;
    else this.#kind = null;
  }

  /** Fails once the session must end early: a send of unknown delivery, or the overall deadline (`TaskTimeout`). The ending stops the task. */
  failIfItMustEnd(): void {
    if (this.#ambiguousSend) throw this.#ambiguousSend;
    if (this.#untilDeadline() > DEADLINE_SLACK_MS) return;
    throw ApplicationFailure.nonRetryable(
      `BrowserAI task ${this.executionId ?? '(not created)'} did not end within timeoutMs=${this.timeoutMs} ms and was stopped. Raise timeoutMs for longer tasks.`,
      FailureType.TaskTimeout,
    );
  }

  // The overall timeout needs no timer of its own (two history events per task): the polling
  // activity's span ends at the deadline, and the awaiting wait is bounded by it too.
  #untilDeadline(): number {
    return this.deadlineMs - Date.now();
  }

  /**
   * Sends the stop, once, and retries it for the stop window. The only place a stop is sent;
   * it runs even when the workflow is being cancelled.
   */
  async stop(reason: string): Promise<void> {
    if (!this.mayStillRun) return;
    const executionId = this.executionId!;
    this.stopSent = true;
    recordStopSent();
    this.publish();
    log.info('Stopping the BrowserAI task', { executionId, reason });
    try {
      const stopped = await CancellationScope.nonCancellable(() =>
        this.#activities.stopTask.executeWithOptions(
          { summary: `Stop ${executionId} (${reason})`, scheduleToCloseTimeout: this.stopRetryWindowMs },
          [{ executionId, notFoundRetryUntilMs: (this.createdAtMs ?? 0) + NOT_FOUND_GRACE_MS }],
        ),
      );
      this.stopConfirmed = true;
      recordStopEnded(true);
      if (stopped.status) this.status = stopped.status;
    } catch (err) {
      this.stopConfirmed = false;
      recordStopEnded(false);
      log.error(
        `Could not stop BrowserAI task ${executionId} within stopRetryWindowMs=${this.stopRetryWindowMs} ms (${rootFailure(err).message}). ` +
          `It may still be running and costing money: stop it from the BrowserAI dashboard (project ${this.input.project}), ` +
          'and check BROWSERAI_API_TOKEN and the network between the worker and BrowserAI.',
        { executionId },
      );
    }
    this.publish();
  }

  /** The codes an activity must mask in what BrowserAI shows (a log line may echo a typed code). */
  get #codesToMask(): { codes?: string[] } {
    return this.#codesReceived.length > 0 ? { codes: this.#codesReceived } : {};
  }

  get #resultBytes(): number {
    return this.input.maxResultBytes ?? DEFAULTS.maxResultBytes;
  }

  /** Records the outcome with the task's results: those the poll read at the end, or read now (after a stop, they are fresher). */
  async collectResults(): Promise<BrowserTaskResult> {
    const executionId = this.executionId!;
    const summary =
      this.#resultsAtEnd && !this.stopSent
        ? this.#resultsAtEnd
        : await this.#activities.getResults.executeWithOptions({ summary: `Fetch results of ${executionId}` }, [
            { executionId, maxBytes: this.#resultBytes, ...this.#codesToMask },
          ]);
    this.#latestResults = summary;
    // After our own stop, the results answer is the freshest word on the status.
    if (summary.status && (this.stopSent || categorize(summary.status) === 'ended')) this.status = summary.status;
    return this.#recordOutcome(summary);
  }

  /** The outcome so far, with the results if BrowserAI gives them: what an ending reports. */
  async resultsSoFar(): Promise<BrowserTaskResult | null> {
    if (!this.executionId) return null;
    try {
      return await this.collectResults();
    } catch (err) {
      log.warn('Could not fetch the results of the task', {
        executionId: this.executionId,
        failure: rootFailure(err).message,
      });
      return this.#recordOutcome(null);
    }
  }

  #recordOutcome(summary: TaskResultsSummary | null): BrowserTaskResult {
    this.outcome = {
      executionId: this.executionId!,
      status: this.status,
      started: summary?.started ?? this.#snapshot.started ?? null,
      completed: summary?.completed ?? null,
      result: this.#snapshot.result ?? null,
      error: this.#snapshot.error ?? null,
      results: summary?.results ?? [],
      ...(summary?.trimmed ? { trimmed: summary.trimmed } : {}),
      ...(this.stopSent ? { stopConfirmed: this.stopConfirmed === true } : {}),
    };
    this.publish();
    return this.outcome;
  }

  /** Hands the session to a new run once nothing is in flight: the new run must know exactly what BrowserAI received. */
  async continueAsNew(
    continueAsNewWith: (input: BrowserTaskInput, carried: CarriedState) => Promise<never>,
  ): Promise<never> {
    // Signals arriving faster than they are sent must not put the hand-over off forever.
    this.outbox.handOver();
    await condition(() => allHandlersFinished() && !this.outbox.sending);
    log.info('Continuing as new to keep the history small', { executionId: this.executionId });
    return continueAsNewWith(this.input, {
      executionId: this.executionId!,
      createdAtMs: this.createdAtMs ?? Date.now(),
      status: this.status,
      started: this.#snapshot.started ?? null,
      estimatedCompletion: this.#snapshot.estimatedCompletion ?? null,
      pending: this.outbox.pending(),
      startedAtMs: this.startedAtMs,
      completeRequested: this.#completeRequested,
      awaitingSinceMs: this.#awaitingSinceMs,
      codesReceived: this.#codesReceived,
      codesTyped: this.#codesTyped,
      unconfirmedInput: this.#unconfirmedInput,
      kind: this.#kind,
      phaseStartedAtMs: this.#phaseStartedAtMs ?? undefined,
      polls: this.polls,
    });
  }
}

/** The executionId a failed create still named (a malformed answer that carried one). */
function createdDespiteFailure(err: unknown): string | undefined {
  const root = rootFailure(err);
  const details =
    root instanceof ApplicationFailure ? (root.details?.[0] as { executionId?: unknown } | undefined) : undefined;
  return typeof details?.executionId === 'string' ? details.executionId : undefined;
}
