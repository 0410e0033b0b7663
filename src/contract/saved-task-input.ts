// The contract of saved tasks and of `runSavedTask`. Pure: the workflow bundle and the
// starters both import it, so bad input is refused before anything is sent.
import type { CreateSavedTaskRequest, GeoLocation, Instruction, SavedTask } from './browserai-types';
import { TASK_INPUT_FIELDS, type BrowserTaskInput, type OverrideField } from './input';
import {
  geoLocationProblems,
  instructionProblems,
  projectProblems,
  taskInputProblems,
  unknownFieldProblems,
} from './input-problems';
import { isPlainObject } from './text';

/** A saved task to create: its name, natural-language instructions, project and location. */
export interface SavedTaskDefinition {
  name: string;
  instructions: Instruction[];
  /**
   * At most 512 characters. It becomes the `BrowserAIProject` search attribute (over 255
   * characters, as its beginning, a mark and a hash).
   * @maxLength 512
   */
  project: string;
  geoLocation: GeoLocation;
  /** Only `natural_language` is accepted by BrowserAI for saved tasks. */
  type?: 'natural_language';
}

// The fields TASK_INPUT_FIELDS marks `override`.
/** What a run of a saved task may change; everything else comes from the saved task. */
export type SavedTaskOverrides = Partial<Pick<BrowserTaskInput, OverrideField>>;

/** The input of `runSavedTask`: the saved task's name and what this run changes. */
export interface RunSavedTaskInput {
  /**
   * The saved task's name, as given when it was created.
   * @pattern \S
   * @maxLength 200
   * @not { "pattern": "^\\s*\\.\\.?\\s*$" }
   */
  name: string;
  overrides?: SavedTaskOverrides;
}

const MAX_NAME_LENGTH = 200;

export function savedTaskNameProblems(name: unknown): string[] {
  if (typeof name !== 'string' || name.trim() === '') return ['name must be a non-empty string'];
  if ([...name].length > MAX_NAME_LENGTH) return [`name must be at most ${MAX_NAME_LENGTH} characters`];
  // They would turn GET /saved_tasks/name/{name} into another URL (the list).
  if (name.trim() === '.' || name.trim() === '..') return ['name must not be "." or ".."'];
  return [];
}

export function savedTaskProblems(definition: SavedTaskDefinition | null | undefined): string[] {
  if (!definition || typeof definition !== 'object')
    return ['the saved task must be an object with name, instructions, project and geoLocation'];
  return [
    ...savedTaskNameProblems(definition.name),
    ...instructionProblems(definition.instructions),
    ...(definition.type === undefined || definition.type === 'natural_language'
      ? []
      : [`type must be "natural_language" for saved tasks (got ${JSON.stringify(definition.type)})`]),
    ...projectProblems(definition.project),
    ...geoLocationProblems(definition.geoLocation),
  ];
}

/** The request body: instructions reduced to their actions, the country upper-cased, cron left empty as the API asks. */
export function savedTaskRequest(definition: SavedTaskDefinition): CreateSavedTaskRequest {
  return {
    name: definition.name,
    instructions: definition.instructions.map(({ action }) => ({ action })),
    type: 'natural_language',
    project: definition.project,
    geoLocation: { ...definition.geoLocation, country: definition.geoLocation.country.toUpperCase() },
    cron_settings: '',
  };
}

/** A saved task's natural-language instructions run on the crawler engine, with the run's overrides on top. */
export function browserTaskInputFor(saved: SavedTask, overrides: SavedTaskOverrides = {}): BrowserTaskInput {
  return {
    ...overrides,
    instructions: (saved.instructions ?? []).map(({ action }) => ({ action })),
    type: 'crawler_automation',
    project: saved.project,
    geoLocation: overrides.geoLocation ?? saved.geoLocation,
  };
}

const RUN_SAVED_TASK_FIELDS: Record<keyof RunSavedTaskInput, true> = { name: true, overrides: true };
const OVERRIDE_FIELDS = Object.fromEntries(
  Object.entries(TASK_INPUT_FIELDS).filter(([, field]) => field.override),
) as Record<OverrideField, unknown>;
/** A task whose own fields are all valid: checked with the overrides on top, every problem is an override's. */
const VALID_SAVED_TASK: SavedTask = {
  taskId: 'saved-task',
  name: 'saved task',
  instructions: [{ action: 'instructions of the saved task' }],
  type: 'natural_language',
  project: 'project of the saved task',
  geoLocation: { country: 'US' },
};

/** Every problem of a `runSavedTask` input, before the saved task is read: its overrides are checked as browserTask checks them. */
export function runSavedTaskInputProblems(input: RunSavedTaskInput | null | undefined): string[] {
  if (!isPlainObject(input)) return ["input must be an object with the saved task's name (and overrides)"];
  const problems = [
    ...savedTaskNameProblems(input.name),
    ...unknownFieldProblems(input, RUN_SAVED_TASK_FIELDS, 'input'),
  ];
  const { overrides } = input;
  if (overrides === undefined) return problems;
  if (!isPlainObject(overrides)) return [...problems, 'overrides must be an object'];
  const known = Object.fromEntries(Object.entries(overrides).filter(([key]) => Object.hasOwn(OVERRIDE_FIELDS, key)));
  return [
    ...problems,
    ...unknownFieldProblems(overrides, OVERRIDE_FIELDS, 'overrides'),
    // A null one would fall back to the saved task's.
    ...(overrides.geoLocation === null ? ['overrides.geoLocation must be an object'] : []),
    ...taskInputProblems(browserTaskInputFor(VALID_SAVED_TASK, known)).map((problem) => `overrides.${problem}`),
  ];
}
