// The names of our own metrics, shared by the activities (worker side) and the workflows (this
// file is bundled into workflow code: constants only, no imports).
//
// They read as Prometheus users expect once scraped from the worker's endpoint: the Rust core
// exporter the Temporal Runtime serves them through adds no prefix to custom metrics (its
// `temporal_` prefix is for the SDK's own), no `_total` and no unit suffix by default
// (`countersTotalSuffix`, `unitSuffix` are off). So counters carry `_total` in their name and
// durations are recorded in seconds with `_seconds` in theirs.
//
// Labels are bounded and secret-free: an endpoint's route template (`GET /tasks/{id}`), a status
// class, an outcome. Never an instruction, a code, an executionId, a workflow ID or a project.

/** BrowserAI HTTP requests, by `endpoint` (route template) and `status_class` (2xx, 3xx, 4xx, 5xx, network, timeout, aborted). */
export const REQUESTS = 'browserai_requests_total';
/** Seconds from sending a request to its answer (or failure), by `endpoint` and `status_class`. */
export const REQUEST_DURATION = 'browserai_request_duration_seconds';
/** 429 answers, by `endpoint`. */
export const RATE_LIMITED = 'browserai_rate_limited_total';
/** The Retry-After of 429 answers that had one, in seconds, by `endpoint`. */
export const RETRY_AFTER = 'browserai_rate_limit_retry_after_seconds';
/** Sends that failed with AmbiguousRequest (the answer was lost after the request may have arrived), by `activityType` (the SDK's tag). */
export const AMBIGUOUS_REQUESTS = 'browserai_ambiguous_requests_total';
/** `GET /tasks/{id}` polls a task needed in one workflow run, recorded when the task ends. */
export const TASK_POLLS = 'browserai_task_polls';
/** Tasks ended, by `outcome` (completed, failed, stopped, cancelled, timed_out, error). */
export const TASKS_ENDED = 'browserai_tasks_ended_total';
/**
 * Waits for input (a code, instructions, complete) begun and ended: tasks awaiting input now are
 * `sum(browserai_awaiting_input_entered_total) - sum(browserai_awaiting_input_left_total)`.
 * Two counters, not an up/down counter or gauge: the workflow metric meter of @temporalio/workflow
 * 1.24 has no up/down counter, and a gauge set by one workflow would overwrite another's.
 */
export const AWAITING_INPUT_ENTERED = 'browserai_awaiting_input_entered_total';
export const AWAITING_INPUT_LEFT = 'browserai_awaiting_input_left_total';
/** One-time codes typed into tasks. */
export const CODES_TYPED = 'browserai_codes_typed_total';
/** Stop commands sent (one per task at most). */
export const STOPS_SENT = 'browserai_stops_sent_total';
/** Stop commands that ended, by `result`: confirmed (BrowserAI answered) or unconfirmed (gave up after stopRetryWindowMs). */
export const STOPS_ENDED = 'browserai_stops_ended_total';

/**
 * Histogram buckets for our histograms (the exporter's defaults, 50 to 10,000, suit milliseconds,
 * not seconds or counts). Pass them as `histogramBucketOverrides` when installing the Runtime yourself.
 */
export const HISTOGRAM_BUCKETS: Record<string, number[]> = {
  [REQUEST_DURATION]: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  [RETRY_AFTER]: [1, 2, 5, 10, 30, 60, 120, 300, 900],
  [TASK_POLLS]: [1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 5000],
};
