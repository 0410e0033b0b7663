// The emulated task sessions. Hundreds of tasks may be alive at once (the benchmark), so no task
// owns a timer: a task stores the phase it is in and when that phase ends, and every read or
// command first replays the transitions whose time has passed (`advance`). Log lines and result
// entries of a running phase are written when the phase starts, stamped with the future moment
// they happen at, and hidden from reads until then; a command that cuts the phase short drops
// the ones still in the future.
//
// Instructions sent to an `awaiting` task do not start a run at once: the task keeps reporting
// `awaiting` for the scenario's `awaitingLagMs` (an `awaiting` phase with an end), as BrowserAI's
// own MCP client allows for, so clients learn not to take that stale `awaiting` as "idle again".
// An `awaiting` task that gets no instructions at all is closed after the scenario's
// `idleCloseMs` (an idle `awaiting` phase with an end), as browser sessions are.

import type { GeoLocation, Instruction } from '../contract/browserai-types';
import { connectionLogLines, newBrowserConnection, newCustomerId, type BrowserConnection } from './browser-connection';
import { NAVIGATION_FAILED, sessionClosedIdle, type EngineError } from './engine-errors';
import { largeText } from './large-text';
import { objectId } from './object-id';
import { totpCodeMatches, type EmulatorTotpSecret } from './totp-check';
import {
  CODE_WAIT_MS,
  DEFAULT_AWAITING_IDLE_CLOSE_MS,
  DEFAULT_AWAITING_LAG_MS,
  FAIL_ERROR,
  NEXT_CODE_FORM_LINE,
  extractCodes,
  parseScenario,
  type Scenario,
} from './scenario';

/** The statuses an emulated task goes through, as BrowserAI names them. */
export type TaskStatus = 'queued' | 'running' | 'awaiting' | 'finalized' | 'failed' | 'stopped';

const ENDED: ReadonlySet<TaskStatus> = new Set(['finalized', 'failed', 'stopped']);

export function isEnded(status: TaskStatus): boolean {
  return ENDED.has(status);
}

interface Phase {
  status: TaskStatus;
  start: number;
  /**
   * When the phase ends by itself; null for the end states and for an idle `awaiting` that never
   * closes. An `awaiting` phase with an end is either idle (`closesIdle`: the session closes at its
   * end) or the lag after instructions arrived (a run starts at its end).
   */
  end: number | null;
  /** An `awaiting` phase waiting for instructions, not the lag before a run. */
  closesIdle: boolean;
  /** A running phase that stops at the one-time-code form instead of executing instructions. */
  blockedOnCode: boolean;
  /** Running phases: first instruction index it executes, and where its entries start. */
  fromInstruction: number;
  firstEntry: number;
}

interface LogLine {
  at: number;
  text: string;
  /** A `[big-logs=...]` line: `text` is empty and the line is rendered on read, so stored tasks stay small. */
  bigBytes?: number;
}

/** A result entry as stored: its texts are rendered on read, so stored tasks stay small. */
export interface StoredEntry {
  historyIndex: number;
  /** 1-based instruction number, and the instruction count when it ran. */
  step: number;
  total: number;
  at: number;
  state: 'done' | 'failed';
  /** Carries the `[large=...]` result. */
  large: boolean;
}

/** What a test may inspect about a task, as of the moment it asks. */
export interface EmulatedTask {
  executionId: string;
  scriptId: string;
  scriptType: string;
  project: string;
  geoLocation: GeoLocation;
  scenario: Scenario;
  /** The true lifecycle status (lower-case, not disguised by `[unknown-status]`/`[uppercase-status]`). */
  status: TaskStatus;
  instructions: Instruction[];
  /** Every one-time code received by a `[needs-code]` task, duplicates included, as they arrived. */
  codesReceived: string[];
  /** Each code the task checked, when (epoch ms), and whether it took it (`[reject-codes=...]`, `[needs-totp=...]`). */
  codeChecks: CodeCheck[];
  /** The codes an `[sms-code=…]` or `[email-code=…]` task sent to the inbox, when, and the inbox's answer. */
  codesSent: CodeSent[];
  /**
   * Stop commands the task received, accepted or refused because it had ended; not the ones
   * answered 404 while the task was `[not-visible]`, nor ones a status or hang fault kept from it.
   */
  stopCommands: number;
  createdAt: string;
  /** When it ended (epoch ms), or null while it runs or awaits. */
  endedAt: number | null;
}

/** A code a task sent through the inbox, as a site does: when, and the HTTP status the inbox answered (0 until it answers, -1: unreachable). */
export interface CodeSent {
  code: string;
  at: number;
  status: number;
}

/** A one-time code an emulated task received: when, and whether it took it. */
export interface CodeCheck {
  code: string;
  at: number;
  accepted: boolean;
}

export interface NewTask {
  instructions: Instruction[];
  geoLocation: GeoLocation;
  project: string;
  type: string;
  awaitable?: boolean;
}

/** What a task needs from its store besides the create request. */
export interface TaskSettings {
  queueMs: number;
  /** The browser the task will connect to; its URL carries a password of the task's own. */
  connection: BrowserConnection;
  /** Whether the engine's connection lines (with that password) are logged when the browser opens. */
  logConnection: boolean;
  /** The emulator's TOTP secrets by name, for `[needs-totp=NAME]` tasks. */
  totpSecrets: Readonly<Record<string, EmulatorTotpSecret>>;
}

export type CommandOutcome = 'ok' | 'ended';

export class Task {
  readonly executionId: string;
  readonly scriptId: string;
  readonly scriptType: string;
  readonly project: string;
  readonly geoLocation: GeoLocation;
  readonly scenario: Scenario;
  readonly createdAt: number;
  readonly codesReceived: string[] = [];
  readonly codeChecks: CodeCheck[] = [];
  readonly codesSent: CodeSent[] = [];
  stopCommands = 0;
  instructions: Instruction[];
  /** Why the task failed; the API sends it whole or only its message, depending on the mode. */
  error: EngineError | null = null;
  endedAt: number | null = null;
  readonly connection: BrowserConnection;

  private nextInstruction = 0;
  private codeSatisfied = false;
  private readonly totpSecret: EmulatorTotpSecret | undefined;
  private phase: Phase;
  private readonly logs: LogLine[] = [];
  private readonly entries: StoredEntry[] = [];

  /** Until then, reads and stop commands answer 404 (`[not-visible=...]`). */
  readonly visibleFrom: number;

  private readonly logConnection: boolean;

  constructor(input: NewTask, scenario: Scenario, settings: TaskSettings, now: number) {
    this.executionId = objectId(now);
    this.scriptId = objectId(now);
    this.connection = { ...settings.connection };
    this.logConnection = settings.logConnection;
    const totpName = scenario.totpSecretName?.toLowerCase();
    this.totpSecret = Object.entries(settings.totpSecrets).find(([name]) => name.toLowerCase() === totpName)?.[1];
    this.scriptType = input.type;
    this.project = input.project;
    this.geoLocation = { ...input.geoLocation };
    this.instructions = input.instructions.map(copyInstruction);
    this.scenario = scenario;
    this.createdAt = now;
    this.visibleFrom = now + scenario.notVisibleMs;
    this.phase = this.newPhase('queued', now, now + settings.queueMs);
    this.log(now, 'Task queued');
  }

  /** The status at `now`, after replaying the transitions that have happened since the last call. */
  status(now: number): TaskStatus {
    this.advance(now);
    return this.phase.status;
  }

  /** Whether the API shows the task yet (see `Scenario.notVisibleMs`). */
  isVisible(now: number): boolean {
    return now >= this.visibleFrom;
  }

  /**
   * End of the current running phase, or of the run that follows a queued phase or an awaiting
   * lag (a run is already due there); null otherwise.
   */
  estimatedCompletion(now: number): number | null {
    this.advance(now);
    if (this.scenario.noEta) return null;
    if (this.phase.status === 'running') return this.phase.end;
    if (this.phase.status === 'queued' || this.phase.status === 'awaiting') {
      return this.phase.end === null || this.phase.closesIdle ? null : this.phase.end + this.runLength();
    }
    return null;
  }

  visibleLogs(now: number): string[] {
    this.advance(now);
    return this.logs
      .filter((line) => line.at <= now)
      .map((line) => (line.bigBytes === undefined ? line.text : largeText(line.bigBytes, 'log')));
  }

  visibleEntries(now: number): StoredEntry[] {
    this.advance(now);
    return this.entries.filter((entry) => entry.at <= now);
  }

  entry(historyIndex: number, now: number): StoredEntry | undefined {
    return this.visibleEntries(now).find((entry) => entry.historyIndex === historyIndex);
  }

  /**
   * POST /tasks/{id}/instructions: the new instructions run at once if the task is running,
   * after the awaiting lag if it is awaiting, and with the first run if it is still queued.
   */
  append(instructions: Instruction[], now: number): CommandOutcome {
    this.advance(now);
    if (isEnded(this.phase.status)) return 'ended';
    this.cutRunningPhase(now);
    this.instructions.push(...instructions.map(copyInstruction));
    this.log(now, `Received ${plural(instructions.length, 'new instruction')}`);
    this.receiveCodes(instructions, now);
    this.runNewInstructions(now);
    return 'ok';
  }

  /** PUT /tasks/{id}/instructions: the new list runs from its first instruction, when `append` would run it. */
  replace(instructions: Instruction[], now: number): CommandOutcome {
    this.advance(now);
    if (isEnded(this.phase.status)) return 'ended';
    this.cutRunningPhase(now);
    this.instructions = instructions.map(copyInstruction);
    this.nextInstruction = 0;
    this.log(now, `Instructions replaced (${plural(instructions.length, 'instruction')})`);
    this.receiveCodes(instructions, now);
    this.runNewInstructions(now);
    return 'ok';
  }

  stop(now: number): CommandOutcome {
    this.advance(now);
    this.stopCommands += 1;
    if (isEnded(this.phase.status)) return 'ended';
    this.cutRunningPhase(now);
    this.log(now, 'Stopped by command');
    this.finish('stopped', now);
    return 'ok';
  }

  view(now: number): EmulatedTask {
    return {
      executionId: this.executionId,
      scriptId: this.scriptId,
      scriptType: this.scriptType,
      project: this.project,
      geoLocation: { ...this.geoLocation },
      scenario: { ...this.scenario },
      status: this.status(now),
      instructions: this.instructions.map(copyInstruction),
      codesReceived: [...this.codesReceived],
      codeChecks: this.codeChecks.map((check) => ({ ...check })),
      codesSent: this.codesSent.map((sent) => ({ ...sent })),
      stopCommands: this.stopCommands,
      createdAt: new Date(this.createdAt).toISOString(),
      endedAt: this.endedAt, // after status(now), which plays the transitions up to now
    };
  }

  /** When the code form the task waits at now began to show; null when it waits at none. */
  codeFormSince(now: number): number | null {
    this.advance(now);
    const { phase } = this;
    return phase.status === 'awaiting' && phase.closesIdle && this.waitingForCode() ? phase.start : null;
  }

  /** When the task next changes by itself (a phase ends); null when it never does. */
  nextChangeAt(now: number): number | null {
    this.advance(now);
    return this.phase.end;
  }

  private advance(now: number): void {
    while (this.phase.end !== null && this.phase.end <= now) {
      const at = this.phase.end;
      if (this.phase.status === 'queued') {
        this.log(at, 'Opening browser');
        if (this.logConnection) for (const line of connectionLogLines(this.connection)) this.log(at, line);
        if (this.scenario.bigLogBytes !== null) this.logs.push({ at, text: '', bigBytes: this.scenario.bigLogBytes });
        this.startRun(at);
      } else if (this.phase.status === 'awaiting' && this.phase.closesIdle) {
        this.closeIdleSession(at);
      } else if (this.phase.status === 'awaiting') {
        this.startRun(at); // the awaiting lag is over
      } else {
        this.finishRun(at);
      }
    }
  }

  /**
   * A queued task runs new instructions with its first run; an awaiting one after the lag (a
   * second batch within the lag joins the run already due, it does not push it back).
   */
  private runNewInstructions(now: number): void {
    if (this.phase.status === 'queued') return;
    if (this.phase.status === 'awaiting') {
      // Instructions end the idle wait (the session no longer closes); a second batch within
      // the lag finds the lag already running and leaves it as it is.
      if (this.phase.closesIdle) {
        this.phase.closesIdle = false;
        this.phase.end = now + this.scenario.awaitingLagMs;
      }
      this.advance(now); // a zero lag runs at once
      return;
    }
    this.startRun(now);
  }

  /** A run is blocked on the code form until a code arrives; otherwise it executes every pending instruction. */
  private runLength(): number {
    return this.waitingForCode() ? Math.min(CODE_WAIT_MS, this.scenario.durationMs) : this.scenario.durationMs;
  }

  private waitingForCode(): boolean {
    return this.scenario.needsCode && !this.codeSatisfied;
  }

  private startRun(at: number): void {
    const length = this.runLength();
    const from = this.nextInstruction;
    const total = this.instructions.length;
    this.phase = this.newPhase('running', at, at + length);
    if (this.waitingForCode()) {
      this.phase.blockedOnCode = true;
      this.log(at, `Executing instruction ${Math.min(from + 1, total)}/${total}`);
      return;
    }
    const count = total - from;
    for (let k = 0; k < count; k++) {
      const last = k === count - 1;
      this.log(at + Math.round((length * k) / count), `Executing instruction ${from + k + 1}/${total}`);
      this.entries.push({
        historyIndex: this.entries.length,
        step: from + k + 1,
        total,
        at: at + Math.round((length * (k + 1)) / count),
        state: last && this.scenario.fail ? 'failed' : 'done',
        large: last && this.scenario.largeResultBytes !== null,
      });
    }
    this.nextInstruction = total;
  }

  private finishRun(at: number): void {
    if (this.phase.blockedOnCode) {
      const refused = this.codeChecks.at(-1)?.accepted === false;
      this.log(
        at,
        refused ? 'The one-time code was not accepted. Waiting for a new one-time code' : 'Waiting for a one-time code',
      );
      this.waitIdle(at);
    } else if (this.scenario.needsCode && this.codesAccepted() < this.scenario.codeForms) {
      // The next code form (`[code-forms=N]`): it waits for a code of its own.
      this.codeSatisfied = false;
      this.log(at, NEXT_CODE_FORM_LINE);
      this.waitIdle(at);
    } else if (this.scenario.fail) {
      const big = this.scenario.bigErrorBytes;
      // The cached text is shared between tasks, so a task keeps a reference, not a copy.
      this.error = { ...NAVIGATION_FAILED, message: big === null ? FAIL_ERROR : largeText(big, 'error') };
      this.log(at, FAIL_ERROR);
      this.finish('failed', at);
    } else if (this.scenario.awaitable) {
      this.log(at, 'Waiting for more instructions');
      this.waitIdle(at);
    } else {
      this.log(at, 'Task finalized');
      this.finish('finalized', at);
    }
  }

  /** `awaiting` with nothing to do: the session closes after `idleCloseMs` unless instructions arrive first. */
  private waitIdle(at: number): void {
    const idle = this.scenario.idleCloseMs;
    this.phase = this.newPhase('awaiting', at, idle > 0 ? at + idle : null);
    this.phase.closesIdle = true;
  }

  /**
   * The engine closed the idle browser. The task ends `failed`: of the statuses known to exist
   * (queued, running, awaiting, finalized, failed, stopped), `stopped` means ended by a stop
   * command and `finalized` means done, while a session closed under a client still waiting to
   * send instructions (a one-time code, the next step) is a failure from the client's side, and a
   * poller that knows only the documented values treats `failed` as the end with an `error`.
   */
  private closeIdleSession(at: number): void {
    this.error = sessionClosedIdle(this.scenario.idleCloseMs);
    this.log(at, this.error.message);
    this.finish('failed', at);
  }

  /** Drops what the current run would have done after `now`; its unfinished instructions become pending again. */
  private cutRunningPhase(now: number): void {
    if (this.phase.status !== 'running') return;
    removeWhere(this.logs, (line) => line.at > now);
    removeWhere(this.entries, (entry) => entry.at > now);
    if (!this.phase.blockedOnCode) {
      this.nextInstruction = this.phase.fromInstruction + (this.entries.length - this.phase.firstEntry);
    }
    this.phase.end = now;
  }

  private receiveCodes(instructions: Instruction[], now: number): void {
    if (!this.scenario.needsCode) return;
    const codes = extractCodes(instructions.map((instruction) => instruction.action));
    if (codes.length === 0) return;
    this.codesReceived.push(...codes);
    // Never the code itself: logs end up in workflow histories and dashboards.
    this.log(now, 'One-time code received');
    if (this.codeSatisfied) return;
    // A site checks the code typed last; a refused one sends the run back to the code form.
    const code = codes.at(-1)!;
    const accepted = this.accepts(code, now);
    this.codeChecks.push({ code, at: now, accepted });
    this.codeSatisfied = accepted;
  }

  private codesAccepted(): number {
    return this.codeChecks.filter((check) => check.accepted).length;
  }

  /** `[reject-codes=N]` refuses the first N codes; `[needs-totp=NAME]` takes only the current code of its secret. */
  private accepts(code: string, now: number): boolean {
    if (this.codeChecks.length < this.scenario.rejectCodes) return false;
    // A site that sent a code takes only that one: the last it sent.
    if (this.scenario.codeTo !== null) return code === this.codesSent.at(-1)?.code;
    if (this.scenario.totpSecretName === null) return true;
    return this.totpSecret !== undefined && totpCodeMatches(this.totpSecret, code, now);
  }

  private finish(status: TaskStatus, at: number): void {
    this.phase = this.newPhase(status, at, null);
    this.endedAt = at;
  }

  private newPhase(status: TaskStatus, start: number, end: number | null): Phase {
    return {
      status,
      start,
      end,
      closesIdle: false,
      blockedOnCode: false,
      fromInstruction: this.nextInstruction,
      firstEntry: this.entries.length,
    };
  }

  private log(at: number, text: string): void {
    this.logs.push({ at, text });
  }
}

/** Chooses a task's running duration from its create request; see `EmulatorOptions.durationFor`. */
export type DurationChooser = (task: { project: string; instructions: string[] }) => number | undefined;

export interface TaskStoreOptions {
  queueMs: number;
  defaultDurationMs: number;
  /** Default awaiting lag of tasks without an `[awaiting-lag=...]` marker; default {@link DEFAULT_AWAITING_LAG_MS}. */
  awaitingLagMs?: number;
  /** Default idle close of tasks without an `[idle-close=...]` marker (0: never); default {@link DEFAULT_AWAITING_IDLE_CLOSE_MS}. */
  awaitingIdleCloseMs?: number;
  /** Overrides the running duration of a task when it returns a number; see `EmulatorOptions.durationFor`. */
  durationFor?: DurationChooser;
  /** Whether tasks log their browser connection URL (with its password); default true. */
  logBrowserConnection?: boolean;
  /** The emulator's TOTP secrets by name (see `EmulatorOptions.totpSecrets`). */
  totpSecrets?: Record<string, EmulatorTotpSecret>;
  /** The account's limit on tasks not ended (see `EmulatorOptions.maxRunningTasks`); 0: none. */
  maxRunningTasks?: number;
}

/** A create the account's limit on running tasks refused (EmulatorOptions.maxRunningTasks: a GUESS). */
export class TooManyRunningTasks extends Error {}

export class TaskStore {
  private readonly tasks = new Map<string, Task>();
  /** One account for every task of this store, as one API token is one Bright Data customer. */
  private readonly customerId = newCustomerId();

  /** The most tasks not ended at once so far (queued, running or awaiting), as of each create. */
  peakRunning = 0;

  /** The account's limit on tasks not ended; 0: none. */
  maxRunningTasks: number;

  /** Sends the codes of `[sms-code=…]` and `[email-code=…]` tasks to the inbox (see `EmulatorOptions.inbox`). */
  codeSender: { watch(task: Task): void } | undefined;

  constructor(private readonly options: TaskStoreOptions) {
    this.maxRunningTasks = options.maxRunningTasks ?? 0;
  }

  /** Tasks not seen ended yet: an ended task never runs again, so each is looked at until it ends. */
  private readonly live = new Set<Task>();

  /** Tasks not ended now: what the account's limit counts. */
  countRunning(now: number): number {
    for (const task of this.live) if (isEnded(task.status(now))) this.live.delete(task);
    return this.live.size;
  }

  /**
   * Throws a RangeError when `durationFor` returns something other than a non-negative finite number or undefined,
   * and TooManyRunningTasks past the account's limit on running tasks.
   */
  create(input: NewTask, now: number): Task {
    const running = this.countRunning(now);
    const limit = this.maxRunningTasks;
    if (limit > 0 && running >= limit) throw new TooManyRunningTasks(`${running} tasks run, the limit is ${limit}`);
    const scenario = parseScenario(
      input,
      this.options.defaultDurationMs,
      this.options.awaitingLagMs ?? DEFAULT_AWAITING_LAG_MS,
      this.options.awaitingIdleCloseMs ?? DEFAULT_AWAITING_IDLE_CLOSE_MS,
    );
    const chosen = this.options.durationFor?.({
      project: input.project,
      instructions: input.instructions.map((instruction) => instruction.action),
    });
    if (chosen !== undefined) {
      if (typeof chosen !== 'number' || !Number.isFinite(chosen) || chosen < 0) {
        throw new RangeError(`durationFor returned ${String(chosen)}, not a duration in milliseconds`);
      }
      scenario.durationMs = chosen;
    }
    const task = new Task(
      input,
      scenario,
      {
        queueMs: this.options.queueMs,
        connection: newBrowserConnection(this.customerId),
        logConnection: this.options.logBrowserConnection ?? true,
        totpSecrets: this.options.totpSecrets ?? {},
      },
      now,
    );
    this.tasks.set(task.executionId, task);
    this.live.add(task);
    this.changed(task);
    this.peakRunning = Math.max(this.peakRunning, running + 1);
    return task;
  }

  /** A task got new instructions (or was created): a site that sends codes looks at it again. */
  changed(task: Task): void {
    this.codeSender?.watch(task);
  }

  get(executionId: string): Task | undefined {
    return this.tasks.get(executionId);
  }

  list(now: number): EmulatedTask[] {
    return [...this.tasks.values()].map((task) => task.view(now));
  }

  /** Tasks not ended yet (queued, running or awaiting), as `list` shows them. */
  listNotEnded(now: number): EmulatedTask[] {
    return [...this.tasks.values()].filter((task) => !isEnded(task.status(now))).map((task) => task.view(now));
  }

  get size(): number {
    return this.tasks.size;
  }
}

function copyInstruction(instruction: Instruction): Instruction {
  return instruction.type === undefined
    ? { action: instruction.action }
    : { action: instruction.action, type: instruction.type };
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function removeWhere<T>(items: T[], predicate: (item: T) => boolean): void {
  let kept = 0;
  for (const item of items) if (!predicate(item)) items[kept++] = item;
  items.length = kept;
}
