// One BrowserAI task session inside a workflow: its state, and one method per thing that can
// happen to it (created, input accepted, input sent, polled, waiting for input, stopped, results
// read). The workflow function (browser-task.ts) tells the story in order and wires the messages
// to these methods; ending.ts decides how it ends.
//
// The state is grouped by how long it lives: `SessionRecord` is what a later run needs and is
// carried whole across continue-as-new; the rest belongs to this run (what BrowserAI showed
// last, the stop, the results) and is rebuilt by the next run's first poll.
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  patched,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  PollTaskOutput,
  TaskExecutionAnswer,
  CreatedTask,
  TaskResultsSummary,
  TaskSnapshot,
  TotpCodeAnswer,
  TotpMask,
  TypeTotpCodeInput,
  SlotPlace,
  WaitingForSlot,
} from '../../contract/activity-types';
import { categorize, type StatusCategory } from '../../contract/status';
import type { Instruction } from '../../contract/browserai-types';
import { FailureType } from '../../contract/errors';
import {
  MAX_INPUT_BYTES,
  MAX_QUEUED_BYTES,
  codeInstruction,
  codeProblems,
  fairnessKeyOf,
  instructionProblems,
  priorityOf,
  jsonBytes,
  passedOldCodeCheck,
  type BrowserTaskInput,
  type BrowserTaskResult,
  type OutgoingInstructions,
} from '../../contract/input';
import {
  browserTaskAwaitingInputSignal,
  type BrowserTaskState,
  type InputRequest,
  type InputRequestWait,
  type TaskFinished,
} from '../../contract/messages';
import { TOTP_WAIT_IN_WORKFLOW } from '../patches';
import { releaseSlotSignal } from '../../contract/fleet-messages';
import { TOTP_SEND_TIMEOUT_MS, sessionActivities, type SessionActivities } from './activities';
import { failureType, rootFailure } from './failures';
import { InputRequests, newInputRequestRecord, type InputRequestRecord } from './input-requests';
import { InputWaiters } from './input-waiters';
import { recordAwaitingInput, recordCodeTyped, recordStopEnded, recordStopSent } from './metrics';
import { OneTimeCodes, type CodeRecord } from './one-time-codes';
import { Outbox, type SendOutcome } from './outbox';
import { Publisher } from './publisher';
import { sessionSettings, type SessionSettings } from './settings';
import { Webhooks } from './webhooks';

/**
 * What a later run of the session needs, carried whole across continue-as-new. Never part of the
 * public input: the workflow trusts only itself (browser-task.ts `trusted`).
 */
export interface SessionRecord {
  /** BrowserAI's task: null until the create answers. */
  executionId: string | null;
  createdAtMs: number | null;
  /** BrowserAI's status as last seen; the category (running, awaiting, ended) is derived from it. */
  status: string;
  started: string | null;
  estimatedCompletion: string | null;
  /** When the first run started: the overall timeout counts from here across runs. */
  startedAtMs: number;
  /** Instructions and codes not sent yet, in arrival order (the outbox's queue at hand-over). */
  pending: OutgoingInstructions[];
  completeRequested: boolean;
  /** When the current wait for input began: the awaiting timeout counts from here across runs. */
  awaitingSinceMs: number | null;
  unconfirmedInput: UnconfirmedInput | null;
  /**
   * The last `result` BrowserAI showed (cut to the result budget): a task stopped by `complete` may
   * have nothing in its results, so its outcome reports this. Carried, since a continued run that
   * awaits input does not poll before `complete` stops the task.
   */
  result?: unknown;
  /**
   * The task's kind while its run says something about the kind: from the create until input is
   * sent or the task awaits (a wait for a person is no part of how long the kind runs).
   */
  kind: string | null;
  /** When the task was created or last got input: where the poll expects its end to lie on the clock. */
  phaseStartedAtMs: number | null;
  /** `GET /tasks/{id}` polls of the task, over all runs (the polls-per-task metric). */
  polls: number;
  codes: CodeRecord;
  /** The input requests so far, the codes BrowserAI refused in a row, the TOTP steps typed. */
  requests: InputRequestRecord;
  /** The task's fleet slot, under a fleet limit: waited for, then held until the ending releases it. */
  slot?: FleetSlot | null;
}

/** A fleet slot: the limiter that keeps it, and the wait for it while it is not held yet. */
export interface FleetSlot {
  limiterId: string;
  held: boolean;
  /** While waiting: when the wait began, and the place in line the limiter gave then. */
  waitingSinceMs: number | null;
  position: number | null;
}

/** The status a task shows (state, `BrowserAIStatus`, the UI) while it waits for a fleet slot. */
export const WAITING_FOR_SLOT = 'waiting_for_slot';

/** The record a continued run starts from: the task exists by then. */
export type CarriedState = SessionRecord & { executionId: string };

/** Input was sent; until BrowserAI shows it took it, an `awaiting` may be the state from before. */
interface UnconfirmedInput {
  trustedFromMs: number;
}

/** The most continue-as-new carries (input and record, as JSON): Temporal refuses payloads over 2 MB. */
const MAX_CARRIED_BYTES = 1536 * 1024;
/** Within this of the deadline, it counts as reached: one more poll activity would cost history for nothing. */
const DEADLINE_SLACK_MS = 1_000;
/** The patch behind which codes of fewer than MIN_CODE_CHARS letters or digits are refused (input.ts). */
const SHORT_CODES_REFUSED = 'short-codes-refused';

export class TaskSession {
  readonly #settings: SessionSettings;
  /** Instructions and codes on their way to BrowserAI. */
  readonly outbox: Outbox;
  readonly #record: SessionRecord;
  readonly #codes: OneTimeCodes;
  readonly #publisher: Publisher;
  readonly #activities: SessionActivities;
  readonly #requests: InputRequests;
  readonly #webhooks: Webhooks;
  readonly #waiters = new InputWaiters();

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
  /** How the task finished, once the ending knows (answers the waiting nextInputRequest updates). */
  #finished: TaskFinished | null = null;
  /** The limiter signalled that a slot is held for this task. */
  #slotGranted = false;

  constructor(
    private readonly input: BrowserTaskInput,
    carried?: CarriedState,
  ) {
    this.#settings = sessionSettings(input);
    this.#record = carried ?? newRecord(Date.now());
    this.#record.requests ??= newInputRequestRecord(); // a run continued from before input requests existed
    this.outbox = new Outbox(this.#record.pending);
    this.#codes = new OneTimeCodes(this.#record.codes);
    this.#publisher = new Publisher(input.project);
    this.#activities = sessionActivities(input);
    this.#requests = new InputRequests(this.#record.requests, {
      awaitable: input.awaitable === true,
      totpSecretName: input.totpSecretName,
      maxCodeAttempts: this.#settings.maxCodeAttempts,
    });
    this.#webhooks = new Webhooks(input.webhook, () => this.#requests.nextWebhookEvent());
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
      ...(record.slot ? { fleetSlot: slotView(record.slot) } : {}),
    };
  }

  publish(): void {
    // The wait begins in the activation that saw `awaiting` (the workflow's clock stands still
    // within one), so its start is known here already and goes out in the same upsert.
    const awaitingSinceMs = this.awaitsInput ? (this.#record.awaitingSinceMs ?? Date.now()) : null;
    this.#publisher.publish(this.view(), this.#latestResults, this.#codes.secrets, awaitingSinceMs);
  }

  /** What the activities mask in BrowserAI's text: the codes received, and the TOTP codes (computed by them). */
  get #toMask(): { codes?: string[]; totp?: TotpMask } {
    const totp = this.input.totpSecretName
      ? { totp: { secretName: this.input.totpSecretName, steps: [...this.#requests.totpSteps] } }
      : {};
    return { ...this.#codes.toMask, ...totp };
  }

  // ---- Messages from callers (wired in browser-task.ts) ------------------------------------

  /** appendInstructions and replaceInstructions: never fail the caller; invalid or late ones are logged and dropped. */
  acceptInstructions(signal: string, kind: OutgoingInstructions['kind'], instructions: unknown): void {
    const bad = instructionProblems(instructions);
    if (bad.length > 0) return log.warn(`Ignored ${signal} signal with invalid instructions`, { problems: bad });
    if (this.ended) return log.warn(`Ignored ${signal} signal: the task has ended`);
    const item: OutgoingInstructions = { kind, instructions: instructions as Instruction[] };
    const full = this.#queueRefusal(item);
    if (full) return log.warn(`Ignored ${signal} signal: ${full}`);
    this.#enqueue(item);
  }

  /** submitCode: queued once, whatever retries or repeats the caller sends. */
  acceptCode(code: unknown, force: boolean): void {
    const problems = codeProblems(code);
    // A code of 1 to 3 characters was typed before 0.2.0: a history that typed one replays as it ran.
    if (
      typeof code !== 'string' ||
      (problems.length > 0 && !(passedOldCodeCheck(code) && !patched(SHORT_CODES_REFUSED)))
    )
      return log.warn(`Ignored submitCode signal: ${problems.join('; ')}`);
    if (this.ended) return log.warn('Ignored submitCode signal: the task has ended');
    const refusal = this.#codes.refusal(code, force, this.outbox.codesInHand);
    if (refusal) return log.warn(`Ignored submitCode signal: ${refusal}`);
    const item: OutgoingInstructions = {
      kind: 'append',
      instructions: [codeInstruction(this.input.codeInstructionTemplate, code)],
      code,
    };
    const full = this.#queueRefusal(item);
    if (full) return log.warn(`Ignored submitCode signal: ${full}`);
    this.#codes.received(code);
    this.#enqueue(item);
  }

  /** complete: once the instructions are done, one stop, then the results. */
  requestComplete(): void {
    this.#record.completeRequested = true;
  }

  /** The addInstructions update's validator: refuses before anything is sent. */
  checkAddInstructions(instructions: unknown): void {
    const bad = instructionProblems(instructions);
    if (bad.length > 0) {
      throw ApplicationFailure.nonRetryable(`Invalid instructions: ${bad.join('; ')}`, FailureType.InvalidInput);
    }
    if (this.ended) throw this.taskEnded();
    const full = this.#queueRefusal({ kind: 'append', instructions: instructions as Instruction[] });
    if (full) throw ApplicationFailure.nonRetryable(`Instructions refused: ${full}`, FailureType.InvalidInput);
  }

  /**
   * Why `item` cannot be queued: the instructions waiting to be sent would exceed MAX_QUEUED_BYTES,
   * so continue-as-new could no longer carry them (input.ts). Null when it can.
   */
  #queueRefusal(item: OutgoingInstructions): string | null {
    const bytes = this.outbox.bytes + jsonBytes(item);
    return bytes <= MAX_QUEUED_BYTES
      ? null
      : `the instructions waiting to be sent would be ${bytes} bytes of JSON, over the ${MAX_QUEUED_BYTES} a task holds. ` +
          'Send fewer or shorter instructions, or wait until those queued are sent.';
  }

  /** The addInstructions update: BrowserAI's answer to this append, or why it was not sent. */
  addInstructions(instructions: Instruction[]): Promise<TaskExecutionAnswer> {
    return this.outbox.outcomeOf(this.#enqueue({ kind: 'append', instructions }));
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

  #enqueue(item: OutgoingInstructions): number {
    const id = this.outbox.enqueue(item);
    this.publish();
    return id;
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
    const { input } = this;
    let created: CreatedTask;
    try {
      for (;;) {
        // Not cancellable: if the workflow is cancelled mid-create, we still learn the execution
        // ID, and so can stop the task that the create may have started.
        const answer = await CancellationScope.nonCancellable(() =>
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
                delivery: this.#settings.delivery,
                stopRetryWindowMs: this.#settings.stopRetryWindowMs,
                place: this.#place(),
              },
            ],
          ),
        );
        // Under a fleet limit with no slot free, the create sent nothing: wait for the slot, then create.
        if ('waitingForSlot' in answer) await this.#waitForSlot(answer.waitingForSlot);
        else {
          created = answer;
          break;
        }
      }
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
    if (created.slot)
      this.#record.slot = { limiterId: created.slot.limiterId, held: true, waitingSinceMs: null, position: null };
    this.#recordCreated(created.executionId);
    this.#record.kind = created.kind ?? null;
    // Running already when the create looked again: what it saw stands in for the first poll's return.
    if (created.seen) this.#applySnapshot(created.seen);
    this.#applyAnswer(created);
  }

  /** Where the task stands in the fleet's line (used only by a worker with a fleet limit). */
  #place(): SlotPlace {
    const info = workflowInfo();
    const { input } = this;
    return {
      workflowId: info.workflowId,
      firstExecutionRunId: info.firstExecutionRunId,
      runId: info.runId,
      taskQueue: info.taskQueue,
      priority: priorityOf(input),
      fairnessKey: fairnessKeyOf({ project: input.project, fairnessKey: input.fairnessKey }),
      fairnessWeight: input.fairnessWeight ?? 1,
      ...(this.#record.slot?.held ? { heldFrom: this.#record.slot.limiterId } : {}),
    };
  }

  /**
   * Waits (cancellably: nothing was sent) until the limiter grants a slot. The wait is no part of
   * the task's time: the overall timeout starts over from the grant.
   */
  async #waitForSlot(wait: WaitingForSlot['waitingForSlot']): Promise<void> {
    const record = this.#record;
    const began = Date.now();
    record.slot = { limiterId: wait.limiterId, held: false, waitingSinceMs: wait.sinceMs, position: wait.position };
    record.status = WAITING_FOR_SLOT;
    this.publish();
    log.info('Waiting for a fleet slot', { limiterId: wait.limiterId, position: wait.position });
    await condition(() => this.#slotGranted);
    record.slot = { limiterId: wait.limiterId, held: true, waitingSinceMs: null, position: null };
    record.startedAtMs += Date.now() - began;
    record.status = 'starting';
    this.publish();
  }

  /** The limiter's `browserAISlotGranted`: a slot is held for this task now. */
  slotGranted(): void {
    this.#slotGranted = true;
  }

  /**
   * Lets go of the fleet slot, once, on every ending (never on continue-as-new: the next run keeps
   * it). A release the limiter never gets is still freed by its check once this workflow has closed.
   */
  async releaseSlot(): Promise<void> {
    const slot = this.#record.slot;
    if (!slot) return;
    this.#record.slot = null;
    const info = workflowInfo();
    try {
      await getExternalWorkflowHandle(slot.limiterId).signal(releaseSlotSignal, {
        holderId: `${info.workflowId}/${info.firstExecutionRunId}`,
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
      log.warn('Could not release the fleet slot; the limiter frees it once this workflow has closed', {
        limiterId: slot.limiterId,
        failure: rootFailure(err).message,
      });
    }
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
    const executionId = this.#record.executionId!;
    const sender = this.outbox.sendForever(
      (item) => {
        if (item.totp) return this.#typeTotpCode(executionId);
        const what = item.code
          ? 'Send one-time code'
          : item.kind === 'replace'
            ? 'Replace instructions'
            : 'Append instructions';
        const request = {
          executionId,
          instructions: item.instructions,
          awaitable: this.input.awaitable,
          delivery: this.#settings.delivery,
          ...this.#toMask,
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

  /**
   * Types the TOTP code once one is due. The activity only computes and sends: when no code is due
   * (too little left of the step, or the step was typed), it answers how long until one is and
   * this workflow waits with a timer, so a deploy or a crash during the wait loses nothing
   * (docs/design/totp-timing.md). Workflows that ran before keep the activity that waits itself.
   */
  async #typeTotpCode(executionId: string): Promise<TotpCodeAnswer> {
    const summary = `Type the TOTP code of secret ${this.input.totpSecretName} into ${executionId}`;
    const request = (): TypeTotpCodeInput => ({
      executionId,
      secretName: this.input.totpSecretName!,
      codeInstructionTemplate: this.input.codeInstructionTemplate,
      afterStep: Math.max(-1, ...this.#requests.totpSteps),
      awaitable: this.input.awaitable,
      delivery: this.#settings.delivery,
      ...this.#codes.toMask,
    });
    if (!patched(TOTP_WAIT_IN_WORKFLOW)) {
      return (await this.#activities.typeTotpCode.executeWithOptions({ summary }, [request()])) as TotpCodeAnswer;
    }
    for (;;) {
      const answer = await this.#activities.typeTotpCode.executeWithOptions(
        // The attempt never waits for a step: it gets a send's time, whatever the period.
        { summary, startToCloseTimeout: TOTP_SEND_TIMEOUT_MS },
        [{ ...request(), waitInWorkflow: true }],
      );
      if (!('notDueForMs' in answer)) return answer;
      await sleep(answer.notDueForMs, {
        summary: `Wait for the next time step of TOTP secret ${this.input.totpSecretName}`,
      });
      // The task may have ended during the wait (a code typed now would go nowhere).
      if (this.ended) throw this.taskEnded();
    }
  }

  #onSent(item: OutgoingInstructions, outcome: SendOutcome): void {
    const record = this.#record;
    const type = 'error' in outcome ? failureType(outcome.error) : undefined;
    const ambiguous = type === FailureType.AmbiguousRequest;
    const reached = 'answer' in outcome || ambiguous;
    if (item.code && reached) {
      this.#codes.typed(item.code);
      recordCodeTyped();
    }
    if (item.totp && 'answer' in outcome && 'totpStep' in outcome.answer) {
      this.#requests.totpTyped(outcome.answer.totpStep as number);
      recordCodeTyped();
    }
    if (reached) this.#requests.sent(item.totp ? 'totp' : item.code ? 'code' : 'instructions');
    if (ambiguous || (item.totp && 'error' in outcome && type !== FailureType.TaskEnded)) {
      // Repeating it could type a code twice; going on would wait for input BrowserAI may never
      // get (a TOTP code nobody else can type). End now (the ending stops the task): the failure
      // says what to check.
      this.#endingSend = (outcome as { error: ApplicationFailure }).error;
      this.#pollScope?.cancel();
    }
    if ('error' in outcome) {
      if (type !== FailureType.TaskEnded) {
        log.warn('Sending instructions to BrowserAI failed', {
          executionId: record.executionId,
          failure: outcome.error.message,
        });
        this.#shown.error = outcome.error.message;
      }
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
      this.#enqueue({ kind: 'append', instructions: [], totp: true });
    this.#webhooks.send({ type: 'input.requested', data: request });
    await this.#notifyParent(request);
  }

  /**
   * Tells the parent workflow (or `notifyWorkflowId`) of the input request, once per wait, so it
   * learns without polling. A workflow that is gone changes nothing here.
   */
  async #notifyParent(request: InputRequest): Promise<void> {
    const { notifyWorkflowId } = this.input;
    const target = notifyWorkflowId === false ? undefined : (notifyWorkflowId ?? workflowInfo().parent?.workflowId);
    if (!target) return;
    try {
      await getExternalWorkflowHandle(target).signal(browserTaskAwaitingInputSignal, {
        ...request,
        status: this.#record.status,
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
    const record = this.#record;
    const { polling } = this.#settings;
    const executionId = record.executionId!;
    const spanMs = lookOnce ? 1 : Math.max(1, Math.min(polling.maxSpanMs, this.#untilDeadline()));
    const settledBefore = this.outbox.settled;
    const unconfirmed = record.unconfirmedInput;
    let out: PollTaskOutput;
    this.#pollScope = new CancellationScope();
    try {
      out = await this.#pollScope.run(() =>
        this.#activities.pollTask.executeWithOptions(
          {
            summary: lookOnce
              ? `Look at ${executionId} once`
              : `Poll ${executionId} until it is no longer "${record.status}"`,
            heartbeatTimeout: polling.heartbeatTimeoutMs,
            startToCloseTimeout: spanMs + 2 * polling.maxIntervalMs + 60_000,
            // Retries of a failing poll (BrowserAI down) must not outlive the task's deadline.
            scheduleToCloseTimeout: Math.max(this.#untilDeadline(), 0) + 2 * polling.maxIntervalMs + 60_000,
          },
          [
            {
              executionId,
              knownStatus: record.status,
              estimatedCompletion: record.estimatedCompletion,
              initialIntervalMs: polling.initialIntervalMs,
              maxIntervalMs: polling.maxIntervalMs,
              targetDetectionMs: polling.targetDetectionMs,
              ...(record.kind ? { kind: record.kind } : {}),
              ...(record.phaseStartedAtMs !== null ? { phaseStartedAtMs: record.phaseStartedAtMs } : {}),
              ...this.#toMask,
              maxSpanMs: spanMs,
              sleepFirst: !lookOnce,
              notFoundRetryUntilMs: this.#notFoundRetryUntilMs,
              awaitingTrustedFromMs: unconfirmed?.trustedFromMs,
            },
          ],
        ),
      );
    } catch (err) {
      if (!isCancellation(err) || this.#endingSend) this.failIfItMustEnd();
      throw err;
    } finally {
      this.#pollScope = null;
    }
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
    const summary = await this.#activities.getResults.executeWithOptions(
      { summary: `Fetch results of ${executionId}` },
      [{ executionId, maxBytes: this.#settings.resultBytes, ...this.#toMask }],
    );
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

/** A session's record before anything happened: the workflow's first run. */
function newRecord(startedAtMs: number): SessionRecord {
  return {
    executionId: null,
    createdAtMs: null,
    status: 'starting',
    started: null,
    estimatedCompletion: null,
    startedAtMs,
    pending: [],
    completeRequested: false,
    awaitingSinceMs: null,
    unconfirmedInput: null,
    kind: null,
    phaseStartedAtMs: null,
    polls: 0,
    codes: { received: [], typed: [] },
    requests: newInputRequestRecord(),
  };
}

/** The executionId a failed create still named (a malformed answer that carried one). */
function createdDespiteFailure(err: unknown): string | undefined {
  const root = rootFailure(err);
  const details =
    root instanceof ApplicationFailure ? (root.details?.[0] as { executionId?: unknown } | undefined) : undefined;
  return typeof details?.executionId === 'string' ? details.executionId : undefined;
}

/** What `state` shows of the fleet slot. */
function slotView(slot: FleetSlot): NonNullable<BrowserTaskState['fleetSlot']> {
  return slot.held
    ? { held: true }
    : {
        held: false,
        waitingSince: new Date(slot.waitingSinceMs!).toISOString(),
        ...(slot.position !== null ? { positionWhenQueued: slot.position } : {}),
      };
}
