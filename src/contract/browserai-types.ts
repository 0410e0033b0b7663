// Wire types of the BrowserAI HTTP API (docs/browserai.md), plus the fields
// its real clients show beyond the description. Every response
// type is open: BrowserAI may add fields, and we must not break when it does.

/** The execution engines `POST /tasks` accepts. `natural_language` is an older spelling some clients send. */
export type TaskType = 'crawler_automation' | 'script_automation';

/** One step of a task: what the browser should do. */
export interface Instruction {
  /**
   * Natural language for `crawler_automation` and saved tasks; TypeScript for `script_automation`.
   * @pattern \S
   */
  action: string;
  /** Only in add/replace bodies; real clients omit it. */
  type?: string;
}

/** Where BrowserAI's browser appears to be: the country (required) and optionally a city and ZIP code. */
export interface GeoLocation {
  /** ISO 3166-1 alpha-2 country code, e.g. `US`. */
  country: string;
  city?: string;
  zipcode?: string;
}

/** The body of `POST /tasks`, which creates a task. */
export interface CreateTaskRequest {
  instructions: Instruction[];
  geoLocation: GeoLocation;
  project: string;
  type: TaskType;
  inspect?: boolean;
  /** Keeps the browser session open in `awaiting` after its instructions, so more can follow. */
  awaitable?: boolean;
}

/** The body of `POST` (append) and `PUT` (replace) `/tasks/{id}/instructions`. */
export interface InstructionsRequest {
  instructions: Instruction[];
  awaitable?: boolean;
}

/** The fields the answers of create, add instructions and replace instructions share. */
export interface TaskExecutionBase {
  executionId: string;
  scriptType?: string;
  geoLocation?: GeoLocation;
  started?: string | null;
  estimatedCompletion?: string | null;
  [extra: string]: unknown;
}

/** Answer of create: always carries a usable `executionId` and a non-empty `status` (the client checks). */
export interface TaskExecution extends TaskExecutionBase {
  status: string;
}

/**
 * Answer of add instructions and replace instructions. A 2xx means the instructions were
 * accepted, even when the answer carries no status: `status` is then `null` (ask
 * `GET /tasks/{id}` for it). `executionId` is the ID the instructions were sent to when the
 * answer has none.
 */
export interface InstructionsAnswer extends TaskExecutionBase {
  status: string | null;
}

/** What `GET /tasks/{id}` says of a running task: its progress status and log lines (masked by the client). */
export interface TaskProgress {
  status?: string;
  logs?: string[];
  [extra: string]: unknown;
}

/**
 * Answer of `GET /tasks/{id}`. `result` and `error` are not documented but real answers carry them.
 * The client guarantees a non-empty `status`; `progress.logs`, when `progress` is present, is an
 * array of strings; `error` is a string (an error object becomes its `message`, or its JSON).
 */
export interface TaskMetadata {
  executionId: string;
  scriptId?: string;
  scriptType?: string;
  status: string;
  progress?: TaskProgress;
  started?: string | null;
  estimatedCompletion?: string | null;
  result?: unknown;
  error?: string | null;
  [extra: string]: unknown;
}

/**
 * One entry of `GET /results/{id}`: a step's output, state and links to its screenshot, HTML and console log. Open:
 * BrowserAI may add fields.
 */
export interface ResultEntry {
  model_output?: string;
  result?: string;
  state?: string;
  metadata?: Record<string, unknown>;
  history_index?: number;
  screenshot_url?: string;
  html_url?: string;
  console_url?: string;
  insert_ts?: string;
  [extra: string]: unknown;
}

/** Answer of `GET /results/{id}`. `status` is `null` when the answer has no non-empty string status. */
export interface TaskResults {
  executionId: string;
  status: string | null;
  started?: string | null;
  completed?: string | null;
  results: ResultEntry[];
  [extra: string]: unknown;
}

/** The answer of a stop (`POST /tasks/{id}/command`), e.g. `{message: "Task stopped successfully"}`. */
export interface StopResponse {
  message?: string;
  [extra: string]: unknown;
}

/** The only task type BrowserAI accepts for saved tasks. */
export type SavedTaskType = 'natural_language';

/** The body of `POST /saved_tasks`, which creates a saved task. */
export interface CreateSavedTaskRequest {
  name: string;
  instructions: Instruction[];
  type: SavedTaskType;
  project: string;
  geoLocation: GeoLocation;
  /** The API says to leave this empty for now; schedules are Temporal's job here. */
  cron_settings: string;
}

/** The answer of `POST /saved_tasks`: the new saved task's ID. */
export interface CreateSavedTaskResponse {
  taskId: string;
  message?: string;
  [extra: string]: unknown;
}

/** A saved task as `GET /saved_tasks` and `GET /saved_tasks/name/{name}` answer it. */
export interface SavedTask {
  taskId: string;
  name: string;
  instructions: Instruction[];
  type: string;
  project: string;
  geoLocation: GeoLocation;
  cron_settings?: string | null;
  [extra: string]: unknown;
}
