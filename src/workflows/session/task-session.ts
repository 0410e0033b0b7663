// One BrowserAI task session inside a workflow: its state, and one method per thing that can
// happen to it (created, input accepted, input sent, polled, waiting for input, stopped, results
// read). The workflow function (browser-task.ts) tells the story in order and wires the messages
// to these methods; ending.ts decides how it ends.
//
// The record (record.ts) is carried across continue-as-new; the rest belongs to this run. Sending
// (sender.ts), the fleet slot (fleet-slot.ts) and the parent's notice (parent-notice.ts) live beside it.
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  allHandlersFinished,
  condition,
  isCancellation,
  log,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  PollTaskOutput,
  TaskExecutionAnswer,
  CreatedTask,
  TaskResultsSummary,
  TaskSnapshot,
  TotpMask,
} from '../../contract/activity-types';
import { categorize, type StatusCategory } from '../../contract/status';
import { FailureType } from '../../contract/errors';
import { MAX_INPUT_BYTES, MAX_QUEUED_BYTES, type BrowserTaskInput, type BrowserTaskResult } from '../../contract/input';
import { jsonBytes } from '../../contract/text';
import type { BrowserTaskState, InputRequestWait, TaskFinished } from '../../contract/messages';
import { sessionActivities, type SessionActivities } from './activities';
import { failureType, rootFailure } from './failures';
import { FleetSlotHolder } from './fleet-slot';
import { InputRequests, newInputRequestRecord } from './input-requests';
import { createTask, createdDespiteFailure } from './create-task';
import { Intake } from './intake';
import { Inbox, newInboxRecord } from './inbox';
import { InputWaiters } from './input-waiters';
import { recordAwaitingInput, recordStopEnded, recordStopSent } from './metrics';
import { OneTimeCodes } from './one-time-codes';
import { Outbox } from './outbox';
import { notifyWaitingWorkflow } from './parent-notice';
import { pollRequest } from './poll-request';
import { Publisher } from './publisher';
import { newRecord, type CarriedState, type SessionRecord } from './record';
import { Sender, secretsToMask, type SendReport, type SendTarget } from './sender';
import { sessionSettings, type SessionSettings } from './settings';
import { Webhooks } from './webhooks';

export type { CarriedState, SessionRecord } from './record';

/** The most continue-as-new carries (input and record, as JSON): Temporal refuses payloads over 2 MB. */
const MAX_CARRIED_BYTES = 1536 * 1024;
/** Within this of the deadline, it counts as reached: one more poll activity would cost history for nothing. */
const DEADLINE_SLACK_MS = 1_000;

export class TaskSession implements SendTarget {
  readonly #settings: SessionSettings;
  /** Instructions and codes on their way to BrowserAI. */
  readonly outbox: Outbox;
  /** What callers send, checked and queued (wired in browser-task.ts). */
  readonly intake: Intake;
  /** The codes the inbox brings a task with a codeRecipient (wired in browser-task.ts; left by the ending). */
  readonly inbox: Inbox;
  readonly #record: SessionRecord;
  readonly #codes: OneTimeCodes;
  readonly #publisher: Publisher;
  readonly #activities: SessionActivities;
  readonly #requests: InputRequests;
  readonly #webhooks: Webhooks;
  readonly #waiters = new InputWaiters();
  /** The fleet slot, under a worker's fleet limit: granted by the limiter, released by the ending. */
  readonly fleetSlot: FleetSlotHolder;

  // ---- This run's own state ----
  /** What BrowserAI showed last, beyond the status and the result: progress and the error. */
  #shown: Pick<TaskSnapshot, 'progress' | 'error'> = { progress: { logs: [] }, error: null };
  /** The stop: sent at most once; confirmed, or given up after the stop window. */
  #stop: { sent: boolean; confirmed: boolean | null } = { sent: false, confirmed: null };
  /** The latest results read, shown in the UI. */
  #latestResults: TaskResultsSummary | null = null;
  #outcome: BrowserTaskResult | null = null;
  /** Why there is no task, once the create has failed (answers the executionId update). */
  #notCreated: ApplicationFailure | null = null;
  /**
   * A send the session cannot go on after: one whose delivery is unknown (AmbiguousRequest: the
   * session cannot know what BrowserAI has), or a TOTP code the worker could not type.
   */
  #endingSend: ApplicationFailure | null = null;
  /** The poll in flight, cancelled when the session must end without waiting for it. */
  #pollScope: CancellationScope | null = null;
  readonly #unknownStatusesLogged = new Set<string>();
  /**
   * The create answered `queued` and left the look to the first poll (CreatedTask.lookInPoll):
   * until that poll returns, the search attributes wait, so the look's news goes out in the same
   * upsert as the create's.
   */
  #lookPending = false;
  /** The results the poll read when it saw the end: no activity of their own is needed. */
  #resultsWithEnd: TaskResultsSummary | null = null;
  /** How the task finished, once the ending knows (answers the waiting nextInputRequest updates). */
  #finished: TaskFinished | null = null;

  constructor(
    private readonly input: BrowserTaskInput,
    carried?: CarriedState,
  ) {
    this.#settings = sessionSettings(input);
    this.#record = carried ?? newRecord(Date.now());
    this.#record.requests ??= newInputRequestRecord(); // a run continued from before input requests existed
    this.outbox = new Outbox(this.#record.pending);
    this.#codes = new OneTimeCodes(this.#record.codes);
    this.intake = new Intake(this.outbox, this.#codes, input.codeInstructionTemplate, this);
    this.inbox = new Inbox(input, (this.#record.inbox ??= newInboxRecord()), {
      acceptCode: (code) => this.intake.acceptCode(code, false, 'inbox message'),
      publish: () => this.publish(),
    });
    this.#publisher = new Publisher(input.project);
    this.#activities = sessionActivities(input);
    this.#requests = new InputRequests(this.#record.requests, {
      awaitable: input.awaitable === true,
      totpSecretName: input.totpSecretName,
      maxCodeAttempts: this.#settings.maxCodeAttempts,
      codeRecipient: this.inbox.recipient,
    });
    this.#webhooks = new Webhooks(input.webhook, () => this.#requests.nextWebhookEvent());
    this.fleetSlot = new FleetSlotHolder(input, this.#record, () => this.publish());
  }

  get executionId(): string | null {
    return this.#record.executionId;
  }

  /** `GET /tasks/{id}` polls of the task so far, over all runs. */
  get polls(): number {
    return this.#record.polls;
  }

  /** BrowserAI's status as last seen. */
  get status(): string {
    return this.#record.status;
  }

  /** This workflow sent the task a stop (complete, or an ending). */
  get stopSent(): boolean {
    return this.#stop.sent;
  }

  get category(): StatusCategory {
    return categorize(this.#record.status);
  }

  /** Nothing more will happen to the task from here: it ended, or this workflow stopped it. */
  get ended(): boolean {
    return this.category === 'ended' || this.#stop.sent;
  }

  /** Awaiting, and BrowserAI has shown that it took everything sent so far. */
  get awaitsInput(): boolean {
    return this.category === 'awaiting' && this.#record.unconfirmedInput === null && !this.ended;
  }

  /** A task exists that nobody has seen end and nobody has stopped yet. */
  get #mayStillRun(): boolean {
    return this.#record.executionId !== null && this.category !== 'ended' && !this.#stop.sent;
  }

  get #deadlineMs(): number {
    return this.#record.startedAtMs + this.#settings.timeoutMs;
  }

  /** The `state` query's answer. */
  view(): BrowserTaskState {
    const record = this.#record;
    return {
      executionId: record.executionId,
      status: record.status,
      awaitingInput: this.awaitsInput,
      progress: { status: this.#shown.progress.status, logs: this.#shown.progress.logs },
      started: record.started,
      estimatedCompletion: record.estimatedCompletion,
      pendingInstructions: this.outbox.size,
      error: this.#shown.error ?? null,
      outcome: this.#outcome,
      stopConfirmed: this.#stop.confirmed,
      inputRequest: this.#requests.open,
      ...this.fleetSlot.view(),
      ...this.inbox.view(),
    };
  }

  publish(): void {
    // The wait begins in the activation that saw `awaiting` (the workflow's clock stands still
    // within one), so its start is known here already and goes out in the same upsert.
    const awaitingSinceMs = this.awaitsInput ? (this.#record.awaitingSinceMs ?? Date.now()) : null;
    this.#publisher.publish(this.view(), this.#latestResults, this.#codes.secrets, awaitingSinceMs, this.#lookPending);
  }

  /** What the activities mask in BrowserAI's text: the codes received, and the TOTP codes (computed by them). */
  get #toMask(): { codes?: string[]; totp?: TotpMask } {
    return secretsToMask(this.input, this.#codes, this.#requests);
  }

  // ---- Messages from callers (wired in browser-task.ts; instructions and codes: intake.ts) ----

  /** complete: once the instructions are done, one stop, then the results. */
  requestComplete(): void {
    this.#record.completeRequested = true;
  }

  /** The nextInputRequest update's validator: a valid message, and room for one more waiter. */
  checkNextInputRequest(message: unknown): void {
    this.#waiters.check(message);
  }

  /**
   * The nextInputRequest update: the latest input request after `after`, once there is one, or how
   * the task finished. A hand-over to a new run, or the end of the wait's bound, answers
   * `continued`, so the caller asks again.
   */
  async nextInputRequest(after: number, waitMs: number | undefined): Promise<InputRequestWait> {
    const newer = () => {
      const latest = this.#requests.latest;
      return latest !== null && latest.sequence > after ? latest : null;
    };
    await this.#waiters.wait(() => newer() !== null || this.#finished !== null || this.outbox.handingOver, waitMs);
    const request = newer();
    if (request) return { kind: 'input-requested', request, open: this.#requests.open === request };
    if (this.#finished) return { kind: 'finished', finished: this.#finished };
    return { kind: 'continued' };
  }

  /** The executionId update: answers once the task exists, or fails TaskNotCreated. */
  async executionIdOnceCreated(): Promise<string> {
    await condition(() => this.#record.executionId !== null || this.#notCreated !== null);
    if (this.#record.executionId === null) throw this.#notCreated!;
    return this.#record.executionId;
  }

  taskEnded(): ApplicationFailure {
    return ApplicationFailure.nonRetryable(
      `BrowserAI task ${this.#record.executionId ?? '(not created)'} has ended (${this.#record.status}); it takes no more instructions.`,
      FailureType.TaskEnded,
    );
  }

  // ---- The task's life ---------------------------------------------------------------------

  /** Creates the task, once: a run continued as new already has it. */
  async create(): Promise<void> {
    if (this.#record.executionId) return;
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
    let created: CreatedTask;
    try {
      created = await createTask(this.#activities, this.input, this.#settings, this.fleetSlot);
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
    if (created.slot) this.fleetSlot.held(created.slot.limiterId);
    if (created.recipientWorkflowId) this.inbox.joined(created.recipientWorkflowId);
    this.#lookPending = created.lookInPoll === true;
    this.#recordCreated(created.executionId);
    this.#record.kind = created.kind ?? null;
    // Running already when the create looked again: what it saw stands in for the first poll's return.
    if (created.seen) this.#applySnapshot(created.seen);
    this.#applyAnswer(created);
  }

  #recordCreated(executionId: string): void {
    this.#record.executionId = executionId;
    this.#record.createdAtMs = Date.now();
    this.#record.phaseStartedAtMs = this.#record.createdAtMs;
    log.info('BrowserAI task created', { executionId });
    this.publish();
  }

  /** Sends queued instructions and codes, in order, for as long as the session runs. */
  startSending(): void {
    const sender = new Sender(
      this.#record.executionId!,
      this.input,
      this.#settings,
      this.#activities,
      this.#codes,
      this.#requests,
      this,
    );
    this.outbox.sendForever(sender).catch(() => undefined); // ends with the workflow's scope; its failures are outcomes
  }

  /**
   * An instruction or code was answered, refused or may have arrived (SendTarget, called by the
   * sender once per item): the task got input, or the session must end.
   */
  inputSettled({ outcome, reached, endsSession }: SendReport): void {
    const record = this.#record;
    if (endsSession) {
      // Repeating it could type a code twice; going on would wait for input BrowserAI may never
      // get (a TOTP code nobody else can type). End now (the ending stops the task): the failure
      // says what to check.
      this.#endingSend = endsSession;
      this.#pollScope?.cancel();
    }
    if ('error' in outcome) {
      if (failureType(outcome.error) !== FailureType.TaskEnded) this.#shown.error = outcome.error.message;
    } else {
      this.#applyAnswer(outcome.answer);
    }
    // Input arrived: a task still awaiting gets a fresh awaiting deadline (and a new request).
    record.awaitingSinceMs = null;
    this.#requests.close();
    record.kind = null;
    record.phaseStartedAtMs = Date.now();
    // BrowserAI may report the state from before it took the input for a moment: `awaiting` is
    // trusted again once it shows otherwise. A refused send changed nothing, but its refusal may
    // mean the task ended (no 409 is documented): look at once.
    const answered = 'answer' in outcome ? outcome.answer.status : null;
    if (answered !== null && categorize(answered) !== 'awaiting') record.unconfirmedInput = null;
    else
      record.unconfirmedInput = {
        trustedFromMs: Date.now() + (reached ? this.#settings.polling.inputSettleMs : 0),
      };
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
    const record = this.#record;
    if (record.awaitingSinceMs === null) {
      record.awaitingSinceMs = Date.now();
      await this.#beginInputRequest();
    }
    const settledBefore = this.outbox.settled;
    const completeReady = () => record.completeRequested && this.outbox.idle;
    if (completeReady()) return this.stop('complete signal');
    const left = Math.max(
      0,
      Math.min(record.awaitingSinceMs + this.#settings.awaitingInputTimeoutMs - Date.now(), this.#untilDeadline()),
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
      `BrowserAI task ${record.executionId} waited ${this.#settings.awaitingInputTimeoutMs} ms for input (submitCode, appendInstructions or complete) ` +
        'and was stopped. Send the input sooner, or raise awaitingInputTimeoutMs.',
      FailureType.AwaitingInputTimeout,
    );
  }

  /**
   * A wait began: a new input request, told through every channel (waiting updates wake by
   * themselves). A code request right after a code means BrowserAI refused it: that code is never
   * typed again, and after `maxCodeAttempts` refusals in a row the session ends `CodesRefused`.
   * A TOTP task's code request is answered by the worker.
   */
  async #beginInputRequest(): Promise<void> {
    const record = this.#record;
    const since = record.awaitingSinceMs!;
    const begun = this.#requests.begin({
      workflowId: workflowInfo().workflowId,
      executionId: record.executionId!,
      project: this.input.project,
      sinceMs: since,
      timesOutAtMs: Math.min(since + this.#settings.awaitingInputTimeoutMs, this.#deadlineMs),
      progress: this.#shown.progress,
      output: record.result,
      secrets: this.#codes.secrets,
    });
    if (begun.refusedCode === 'code') this.#codes.lastTypedRefused();
    if ('tooManyRefused' in begun) {
      throw ApplicationFailure.nonRetryable(
        `BrowserAI refused ${begun.tooManyRefused} one-time codes in a row for task ${record.executionId} and asked again; ` +
          `the task was stopped. Check where the codes come from${this.input.totpSecretName ? ` (the TOTP secret ${this.input.totpSecretName} and the worker's clock)` : ''}, ` +
          'or raise maxCodeAttempts (at most 10).',
        FailureType.CodesRefused,
      );
    }
    const { request } = begun;
    this.publish();
    if (request.answeredBy === 'worker' && !this.outbox.holdsTotp)
      this.intake.enqueue({ kind: 'append', instructions: [], totp: true });
    this.#webhooks.send({ type: 'input.requested', data: request });
    await notifyWaitingWorkflow(this.input, request, this.#record.status);
  }

  async #poll(lookOnce: boolean): Promise<void> {
    const record = this.#record;
    const settledBefore = this.outbox.settled;
    const executionId = record.executionId!;
    const [options, request] = pollRequest(record, this.#settings, {
      lookOnce,
      lookAfterCreate: this.#lookPending,
      resultsMaxBytes: this.#settings.resultBytes,
      untilDeadlineMs: this.#untilDeadline(),
      notFoundRetryUntilMs: this.#notFoundRetryUntilMs,
      toMask: this.#toMask,
    });
    let out: PollTaskOutput;
    this.#pollScope = new CancellationScope();
    try {
      out = await this.#pollScope.run(() => this.#activities.pollTask.executeWithOptions(options, [request]));
    } catch (err) {
      if (!isCancellation(err) || this.#endingSend) this.failIfItMustEnd();
      throw err;
    } finally {
      this.#pollScope = null;
      this.#lookPending = false;
    }
    if (out.results) this.#resultsWithEnd = out.results;
    for (const status of out.unknownStatuses) {
      if (this.#unknownStatusesLogged.has(status)) continue;
      this.#unknownStatusesLogged.add(status);
      log.warn('BrowserAI reported an unknown status; treating it as running', { executionId, status });
    }
    record.polls += out.polls;
    if (out.learnedEndMs !== undefined && record.kind) this.#publisher.learned(record.kind, out.learnedEndMs);
    this.#applySnapshot(out.snapshot);
    // The poll judged BrowserAI's `awaiting` against the input unconfirmed when it started; a send
    // that settled meanwhile left a newer unconfirmed input, which only a later poll can judge.
    if (this.outbox.settled === settledBefore && (out.snapshot.category !== 'awaiting' || out.changed)) {
      record.unconfirmedInput = null;
    }
    this.publish();
  }

  #applyAnswer(answer: TaskExecutionAnswer): void {
    const record = this.#record;
    if (answer.status !== null) record.status = answer.status;
    if (answer.started !== undefined) record.started = answer.started ?? record.started;
    record.estimatedCompletion = answer.estimatedCompletion ?? null;
    this.publish();
  }

  #applySnapshot(snapshot: TaskSnapshot): void {
    const record = this.#record;
    record.status = snapshot.status;
    const { started, estimatedCompletion, error, progress, result } = snapshot;
    record.estimatedCompletion = estimatedCompletion ?? null;
    if (started) record.started = started;
    this.#shown = { progress, error: error ?? this.#shown.error };
    // Kept until BrowserAI shows another: a later answer without one does not erase it.
    if (result !== undefined && result !== null) record.result = result;
    if (this.category !== 'awaiting') {
      record.awaitingSinceMs = null;
      this.#requests.close();
    } else record.kind = null;
  }

  /** Fails once the session must end early: a send of unknown delivery, or the overall deadline (`TaskTimeout`). The ending stops the task. */
  failIfItMustEnd(): void {
    if (this.#endingSend) throw this.#endingSend;
    if (this.#untilDeadline() > DEADLINE_SLACK_MS) return;
    throw ApplicationFailure.nonRetryable(
      `BrowserAI task ${this.#record.executionId ?? '(not created)'} did not end within timeoutMs=${this.#settings.timeoutMs} ms and was stopped. Raise timeoutMs for longer tasks.`,
      FailureType.TaskTimeout,
    );
  }

  // The overall timeout needs no timer of its own (two history events per task): the polling
  // activity's span ends at the deadline, and the awaiting wait is bounded by it too.
  #untilDeadline(): number {
    return this.#deadlineMs - Date.now();
  }

  /** Until then "task not found" means "not visible yet" (`polling.notFoundGraceMs`: BrowserAI documents nothing about consistency). */
  get #notFoundRetryUntilMs(): number {
    return (this.#record.createdAtMs ?? 0) + this.#settings.polling.notFoundGraceMs;
  }

  /**
   * Sends the stop, once, and retries it for the stop window. The only place a stop is sent;
   * it runs even when the workflow is being cancelled.
   */
  async stop(reason: string): Promise<void> {
    if (!this.#mayStillRun) return;
    const executionId = this.#record.executionId!;
    const { stopRetryWindowMs } = this.#settings;
    this.#stop.sent = true;
    recordStopSent();
    this.publish();
    log.info('Stopping the BrowserAI task', { executionId, reason });
    try {
      const stopped = await CancellationScope.nonCancellable(() =>
        this.#activities.stopTask.executeWithOptions(
          { summary: `Stop ${executionId} (${reason})`, scheduleToCloseTimeout: stopRetryWindowMs },
          [{ executionId, notFoundRetryUntilMs: this.#notFoundRetryUntilMs }],
        ),
      );
      if (stopped.outcome === 'not-found') {
        // Not stopped, and never seen ended: only BrowserAI's word that it does not know the task.
        throw ApplicationFailure.nonRetryable(
          `BrowserAI answers that it does not know ${executionId} (404 after the not-found grace period) and never showed it ended`,
          FailureType.TaskNotFound,
        );
      }
      this.#stop.confirmed = true;
      recordStopEnded(true);
      if (stopped.status) this.#record.status = stopped.status;
    } catch (err) {
      this.#stop.confirmed = false;
      recordStopEnded(false);
      // Only an ending stops the task: the run is about to close, so a child delivers the event.
      this.#webhooks.send(
        { type: 'task.stop_not_confirmed', data: { workflowId: workflowInfo().workflowId, executionId } },
        { outlivesRun: true },
      );
      log.error(
        `Could not stop BrowserAI task ${executionId} within stopRetryWindowMs=${stopRetryWindowMs} ms (${rootFailure(err).message}). ` +
          `It may still be running and costing money: stop it from the BrowserAI dashboard (project ${this.input.project}), ` +
          'and check BROWSERAI_API_TOKEN and the network between the worker and BrowserAI.',
        { executionId },
      );
    }
    this.publish();
  }

  /** Reads the task's results and records the outcome with them. */
  async collectResults(): Promise<BrowserTaskResult> {
    const record = this.#record;
    const executionId = record.executionId!;
    // Read by the poll that saw the end, when its worker could (runs from before read them here).
    const summary =
      this.#resultsWithEnd ??
      (await this.#activities.getResults.executeWithOptions({ summary: `Fetch results of ${executionId}` }, [
        { executionId, maxBytes: this.#settings.resultBytes, ...this.#toMask },
      ]));
    this.#latestResults = summary;
    // After our own stop, the results answer is the freshest word on the status.
    if (summary.status && (this.#stop.sent || categorize(summary.status) === 'ended')) record.status = summary.status;
    return this.#recordOutcome(summary);
  }

  /** The outcome so far, with the results if BrowserAI gives them: what an ending reports. */
  async resultsSoFar(): Promise<BrowserTaskResult | null> {
    if (!this.#record.executionId) return null;
    try {
      return await this.collectResults();
    } catch (err) {
      log.warn('Could not fetch the results of the task', {
        executionId: this.#record.executionId,
        failure: rootFailure(err).message,
      });
      return this.#recordOutcome(null);
    }
  }

  #recordOutcome(summary: TaskResultsSummary | null): BrowserTaskResult {
    const record = this.#record;
    this.#lookPending = false; // the ending's upsert is never held
    this.#outcome = {
      executionId: record.executionId!,
      status: record.status,
      started: summary?.started ?? record.started ?? null,
      completed: summary?.completed ?? null,
      result: record.result ?? null,
      error: this.#shown.error ?? null,
      results: summary?.results ?? [],
      ...(summary?.trimmed ? { trimmed: summary.trimmed } : {}),
      ...(this.#stop.sent ? { stopConfirmed: this.#stop.confirmed === true } : {}),
    };
    this.publish();
    return this.#outcome;
  }

  /**
   * The task has finished (ending.ts decides how): waiting nextInputRequest updates are answered,
   * the `task.finished` webhook goes out, and the workflow closes only once its delivery started.
   */
  async finish(finished: Omit<TaskFinished, 'workflowId' | 'executionId'>): Promise<void> {
    this.#finished = {
      workflowId: workflowInfo().workflowId,
      executionId: this.#record.executionId,
      ...finished,
      ...(this.#stop.sent ? { stopConfirmed: this.#stop.confirmed === true } : {}),
    };
    this.#requests.close();
    this.#webhooks.send({ type: 'task.finished', data: this.#finished }, { outlivesRun: true });
    await this.#webhooks.handOver();
  }

  /** Hands the session to a new run once nothing is in flight: the new run must know exactly what BrowserAI received. */
  async continueAsNew(
    continueAsNewWith: (input: BrowserTaskInput, carried: CarriedState) => Promise<never>,
  ): Promise<never> {
    // Signals arriving faster than they are sent must not put the hand-over off forever.
    this.outbox.handOver();
    await condition(() => allHandlersFinished() && !this.outbox.sending);
    await this.#webhooks.handOver();
    const carried: CarriedState = {
      ...this.#record,
      executionId: this.#record.executionId!,
      pending: this.outbox.pending(),
    };
    // The input and the queue are bounded at the door, so this never happens; if it did, the new
    // run's start would be refused again and again with no timer left to stop the task. Ending here
    // stops it instead.
    const bytes = jsonBytes([this.input, carried]);
    if (bytes > MAX_CARRIED_BYTES) {
      throw ApplicationFailure.nonRetryable(
        `The state continue-as-new would carry is ${bytes} bytes, over the ${MAX_CARRIED_BYTES} Temporal takes; the task was stopped. ` +
          `Keep the input under ${MAX_INPUT_BYTES} bytes and the queued instructions under ${MAX_QUEUED_BYTES}, and report this.`,
        FailureType.UnexpectedError,
      );
    }
    log.info('Continuing as new to keep the history small', { executionId: this.#record.executionId });
    return continueAsNewWith(this.input, carried);
  }
}
