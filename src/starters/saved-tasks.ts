// Saved tasks and their schedules, for backend services. Saved-task calls go through small
// workflows, so only workers hold the BrowserAI token. Cron lives in Temporal Schedules:
// BrowserAI's own `cron_settings` is to be left empty.
import { randomUUID } from 'node:crypto';
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleHandle,
  type ScheduleOptions,
  type WorkflowHandle,
} from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import type { CreateSavedTaskResponse, SavedTask } from '../contract/browserai-types';
import { startSearchAttributes, withSearchAttributeFallback, type RegisteredOnly } from './search-attributes-fallback';
import { cronProblems, scheduleIdFor, timezoneProblems } from '../schedules/cron';
import { InvalidInputError } from '../contract/input-problems';
import {
  runSavedTaskInputProblems,
  savedTaskNameProblems,
  savedTaskProblems,
  type RunSavedTaskInput,
  type SavedTaskDefinition,
  type SavedTaskOverrides,
} from '../contract/saved-task-input';
import type { runSavedTask } from '../workflows';
import { temporalPriorityOf } from '../workflows/start-options';

/** What a schedule does when a run is due while the previous one still runs; default `skip`. */
export type OverlapPolicy = 'skip' | 'buffer_one' | 'buffer_all' | 'cancel_other' | 'terminate_other' | 'allow_all';

/** A saved task's Temporal Schedule: when it runs, in which time zone, and with what overrides. */
export interface ScheduleSpecInput {
  /** Five-field cron (`0 9 * * MON-FRI`) or `@daily`, `@hourly`, ... */
  cron: string;
  /** IANA zone for the cron; default UTC. */
  timezone?: string;
  /** What to do when a run is due while the previous one still runs; default `skip`. */
  overlap?: OverlapPolicy;
  paused?: boolean;
  note?: string;
  /** Applied to every run the schedule starts. */
  overrides?: SavedTaskOverrides;
}

/** A saved task's schedule as `describeSchedule` reads it: its cron, whether it is paused, its next and recent runs. */
export interface ScheduleSummary {
  scheduleId: string;
  savedTaskName: string;
  cron: string[];
  timezone?: string;
  paused: boolean;
  note?: string;
  nextRunTimes: Date[];
  recentRuns: Array<{ scheduledAt: Date; workflowId: string }>;
}

/**
 * How far back a schedule catches up after Temporal was unavailable: runs missed by more than
 * this are skipped rather than started late in a burst.
 */
export const CATCHUP_WINDOW = '10 minutes';

const OVERLAP: Record<OverlapPolicy, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  buffer_all: ScheduleOverlapPolicy.BUFFER_ALL,
  cancel_other: ScheduleOverlapPolicy.CANCEL_OTHER,
  terminate_other: ScheduleOverlapPolicy.TERMINATE_OTHER,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
};

/** Thrown when the saved task was created but its schedule was not: the message says both. */
export class ScheduleAfterCreateError extends Error {
  override readonly name = 'ScheduleAfterCreateError';
  constructor(
    readonly savedTask: CreateSavedTaskResponse,
    cause: unknown,
  ) {
    super(
      `The saved task was created (taskId ${savedTask.taskId}), but its schedule was not: ${cause instanceof Error ? cause.message : String(cause)}. ` +
        'Fix the cause and run the schedule command again; do not create the saved task again.',
      { cause },
    );
  }
}

/**
 * The client API of BrowserAI's saved tasks and their Temporal Schedules. Every call runs as a small workflow on the
 * workers, so only they hold the BrowserAI token.
 */
export class SavedTasks {
  constructor(
    readonly client: Client,
    readonly taskQueue: string,
  ) {}

  /** Creates the saved task; with `schedule`, also its Temporal Schedule. */
  async create(
    definition: SavedTaskDefinition,
    options: { schedule?: ScheduleSpecInput } = {},
  ): Promise<CreateSavedTaskResponse & { scheduleId?: string }> {
    const problems = [
      ...savedTaskProblems(definition),
      ...(options.schedule ? scheduleProblems(options.schedule) : []),
    ];
    if (problems.length > 0) throw new InvalidInputError(problems);
    const created = await this.#execute<CreateSavedTaskResponse>('savedTaskCreate', [definition]);
    if (!options.schedule) return created;
    try {
      const { scheduleId } = await this.schedule(definition.name, options.schedule, definition.project);
      return { ...created, scheduleId };
    } catch (err) {
      throw new ScheduleAfterCreateError(created, err);
    }
  }

  /** Reads a saved task by name; an unknown name fails `SavedTaskNotFound`. */
  async get(name: string): Promise<SavedTask> {
    checkName(name);
    return this.#execute('savedTaskGet', [name]);
  }

  /** Every saved task of the account. */
  async list(): Promise<SavedTask[]> {
    return this.#execute('savedTaskList', []);
  }

  /** Runs a saved task now; the handle takes the same signals, update and query as browserTask. */
  async run(
    name: string,
    overrides?: SavedTaskOverrides,
    options: { workflowId?: string } = {},
  ): Promise<WorkflowHandle<typeof runSavedTask>> {
    const input: RunSavedTaskInput = { name, ...(overrides ? { overrides } : {}) };
    checkRunInput(input);
    const common = {
      taskQueue: this.taskQueue,
      workflowId: options.workflowId ?? `browserai-saved-run-${randomUUID()}`,
      args: [input] as [RunSavedTaskInput],
      ...(overrides ? { priority: temporalPriorityOf(overrides) } : {}),
      staticSummary: `Saved BrowserAI task "${name}"`,
    };
    return withSearchAttributeFallback((registered) =>
      this.client.workflow.start('runSavedTask', {
        ...common,
        typedSearchAttributes: registered(startSearchAttributes()),
      }),
    );
  }

  /**
   * Creates or updates the schedule of a saved task. The schedule ID is derived from the name,
   * so calling this again updates the one schedule instead of adding another.
   */
  async schedule(
    name: string,
    spec: ScheduleSpecInput,
    project?: string,
  ): Promise<{ scheduleId: string; created: boolean }> {
    checkName(name);
    const problems = scheduleProblems(spec);
    if (problems.length > 0) throw new InvalidInputError(problems);
    // Reading it first fails fast (SavedTaskNotFound) instead of scheduling runs that all fail.
    const projectName = project ?? (await this.get(name)).project;
    const scheduleId = scheduleIdFor(name);
    const options = this.#scheduleOptions(scheduleId, name, spec, projectName);
    try {
      await this.#createSchedule(options);
      return { scheduleId, created: true };
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      const update = (action: ScheduleOptions['action']) =>
        this.client.schedule.getHandle(scheduleId).update((previous) => ({
          ...previous,
          spec: options.spec,
          action,
          policies: options.policies,
          state: {
            ...previous.state,
            paused: spec.paused ?? previous.state.paused,
            note: spec.note ?? previous.state.note,
          },
        }));
      await withSearchAttributeFallback((registered) =>
        update(withRegisteredSearchAttributes(registered, options.action)),
      );
      return { scheduleId, created: false };
    }
  }

  /** The schedules of saved tasks, with whether each is paused and its next run times. */
  async listSchedules(): Promise<
    Array<{ scheduleId: string; savedTaskName?: string; paused: boolean; nextRunTimes: Date[] }>
  > {
    const out = [];
    for await (const schedule of this.client.schedule.list()) {
      if (!schedule.scheduleId.startsWith('browserai-saved-')) continue;
      out.push({
        scheduleId: schedule.scheduleId,
        savedTaskName: schedule.memo?.savedTaskName as string | undefined,
        paused: schedule.state.paused,
        nextRunTimes: schedule.info.nextActionTimes,
      });
    }
    return out;
  }

  /** A saved task's schedule: cron, paused, next run times, recent runs. */
  async describeSchedule(name: string): Promise<ScheduleSummary> {
    return summarize(name, await this.#onSchedule(name, (handle) => handle.describe()));
  }

  /** Pauses a saved task's schedule, with an optional note. */
  async pause(name: string, note?: string): Promise<void> {
    await this.#onSchedule(name, (handle) => handle.pause(note ?? 'Paused with browserai-temporal'));
  }

  /** Unpauses a saved task's schedule. */
  async unpause(name: string, note?: string): Promise<void> {
    await this.#onSchedule(name, (handle) => handle.unpause(note ?? 'Unpaused with browserai-temporal'));
  }

  /** Starts a run now, outside the cron (the overlap policy still applies). */
  async trigger(name: string): Promise<void> {
    await this.#onSchedule(name, (handle) => handle.trigger());
  }

  /** Changes when a saved task's schedule runs. */
  async updateCron(name: string, cron: string, timezone?: string): Promise<void> {
    const problems = [...cronProblems(cron), ...timezoneProblems(timezone)];
    if (problems.length > 0) throw new InvalidInputError(problems);
    await this.#onSchedule(name, (handle) =>
      handle.update((previous) => {
        const zone = timezone ?? previous.spec.timezone;
        const action =
          previous.action.type === 'startWorkflow'
            ? { ...previous.action, memo: scheduleMemo(name, cron, zone) }
            : previous.action;
        return { ...previous, action, spec: { cronExpressions: [cron], timezone: zone } };
      }),
    );
  }

  /** Deletes a saved task's schedule (the saved task stays at BrowserAI). */
  async deleteSchedule(name: string): Promise<void> {
    await this.#onSchedule(name, (handle) => handle.delete());
  }

  /** Runs `fn` on the saved task's schedule; a missing one is reported by the task's name. */
  async #onSchedule<T>(name: string, fn: (handle: ScheduleHandle) => Promise<T>): Promise<T> {
    checkName(name);
    const scheduleId = scheduleIdFor(name);
    try {
      return await fn(this.client.schedule.getHandle(scheduleId));
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
      throw new ScheduleNotFoundError(
        `Saved task "${name}" has no schedule (schedule ID ${scheduleId}); create one with \`schedule create\``,
        scheduleId,
      );
    }
  }

  #scheduleOptions(scheduleId: string, name: string, spec: ScheduleSpecInput, project: string): ScheduleOptions {
    const input: RunSavedTaskInput = { name, ...(spec.overrides ? { overrides: spec.overrides } : {}) };
    checkRunInput(input);
    return {
      scheduleId,
      spec: { cronExpressions: [spec.cron], timezone: spec.timezone },
      action: {
        type: 'startWorkflow',
        workflowType: 'runSavedTask',
        args: [input],
        taskQueue: this.taskQueue,
        workflowId: `${scheduleId}-run`,
        staticSummary: `Saved BrowserAI task "${name}" (scheduled)`,
        typedSearchAttributes: startSearchAttributes(project),
        // Describe answers the cron as calendars; the memo keeps it as the user wrote it.
        memo: scheduleMemo(name, spec.cron, spec.timezone),
      },
      policies: { overlap: OVERLAP[spec.overlap ?? 'skip'], catchupWindow: CATCHUP_WINDOW },
      state: { paused: spec.paused ?? false, note: spec.note },
      // The schedule's own memo is fixed at creation; the name never changes for one ID.
      memo: { savedTaskName: name },
    };
  }

  async #createSchedule(options: ScheduleOptions): Promise<void> {
    await withSearchAttributeFallback((registered) =>
      this.client.schedule.create({ ...options, action: withRegisteredSearchAttributes(registered, options.action) }),
    );
  }

  async #execute<T>(workflowType: string, args: unknown[]): Promise<T> {
    return this.client.workflow.execute(workflowType, {
      taskQueue: this.taskQueue,
      workflowId: `browserai-${workflowType}-${randomUUID()}`,
      args,
    });
  }
}

export { ScheduleNotFoundError };

/** What the runSavedTask workflow refuses, refused before anything reaches Temporal. */
function checkRunInput(input: RunSavedTaskInput): void {
  const problems = runSavedTaskInputProblems(input);
  if (problems.length > 0) throw new InvalidInputError(problems);
}

function checkName(name: string): void {
  const problems = savedTaskNameProblems(name);
  if (problems.length > 0) throw new InvalidInputError(problems);
}

/** What a schedule's spec gets wrong (cron, time zone, overlap policy); empty when nothing. */
export function scheduleProblems(spec: ScheduleSpecInput): string[] {
  return [
    ...cronProblems(spec?.cron),
    ...timezoneProblems(spec?.timezone),
    ...(spec?.overlap === undefined || spec.overlap in OVERLAP
      ? []
      : [`overlap must be one of ${Object.keys(OVERLAP).join(', ')}`]),
  ];
}

/** The schedule's action with only the search attributes the namespace has. */
function withRegisteredSearchAttributes(
  registered: RegisteredOnly,
  action: ScheduleOptions['action'],
): ScheduleOptions['action'] {
  const attributes = action.type === 'startWorkflow' ? action.typedSearchAttributes : undefined;
  if (attributes === undefined) return action;
  const all = attributes instanceof TypedSearchAttributes ? attributes : new TypedSearchAttributes(attributes);
  return { ...action, typedSearchAttributes: registered(all) };
}

function scheduleMemo(savedTaskName: string, cron: string, timezone?: string): Record<string, unknown> {
  return { savedTaskName, cron, ...(timezone ? { timezone } : {}) };
}

function summarize(name: string, description: ScheduleDescription): ScheduleSummary {
  const memo =
    description.action.type === 'startWorkflow'
      ? (description.action.memo as { cron?: string } | undefined)
      : undefined;
  return {
    scheduleId: description.scheduleId,
    savedTaskName: name,
    cron: memo?.cron ? [memo.cron] : [],
    timezone: description.spec.timezone,
    paused: description.state.paused,
    note: description.state.note,
    nextRunTimes: description.info.nextActionTimes,
    recentRuns: description.info.recentActions.map((action) => ({
      scheduledAt: action.scheduledAt,
      workflowId: action.action.type === 'startWorkflow' ? action.action.workflow.workflowId : '',
    })),
  };
}

/**
 * The types of `SavedTasks`' options and answers, by name: `SavedTasks.ScheduleSpecInput`,
 * `SavedTasks.ScheduleSummary`, ... (the client's namespace, so the package's root stays short).
 */
export declare namespace SavedTasks {
  export {
    type ScheduleSpecInput as ScheduleSpecInput,
    type ScheduleSummary as ScheduleSummary,
    type OverlapPolicy as OverlapPolicy,
    type SavedTaskOverrides as SavedTaskOverrides,
    type RunSavedTaskInput as RunSavedTaskInput,
  };
}
