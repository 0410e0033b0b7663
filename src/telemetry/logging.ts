// The worker's log lines: the SDK's DefaultLogger format (`text`, on stderr, as the SDK writes
// it) or one JSON object per line on stdout (`json`, for log shippers), at a chosen level. Both
// mask secrets before anything is written: the API token (and any secret named to them), URL
// credentials and token-like query parameters, with the same masker as BrowserAI's output
// (browserai/redact.ts). One-time codes are never handed to a logger by this project's code;
// the masking is the second line of defence for what the SDK, the core or an error message
// might carry.
//
// A JSON line: `time` (ISO-8601, from the SDK's timestamp when it has one), `level`, `message`,
// then the SDK's log attributes as they are (sdkComponent, namespace, taskQueue, workflowId,
// runId, workflowType, activityId, activityType, attempt, ...; for the core's logs target and
// its fields) and ours. Values JSON cannot hold are made readable rather than dropped or
// thrown on: an Error is {name, message, stack} (with its cause and own fields), a bigint its
// digits as a string, a reference back up the same object `[Circular]`, bytes their length.
import { formatWithOptions } from 'node:util';
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { MASK, redactSecrets, redactSecretsDeep } from '../browserai/redact';

/**
 * @temporalio/worker's LogTimestamp (a registered symbol): the time, in nanoseconds, the SDK and
 * the core give a line. Not imported from there, so the configuration (which the starters load
 * too) does not load the worker's native module.
 */
const LogTimestamp: unique symbol = Symbol.for('log_timestamp');

export type { LogLevel };
export type LogFormat = 'text' | 'json';

export const LOG_FORMATS: readonly LogFormat[] = ['text', 'json'];
/** From the most verbose to the least, as the SDK orders them. */
export const LOG_LEVELS: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

export interface WorkerLogOptions {
  /** Default `text`. */
  format?: LogFormat;
  /** Default `INFO`. */
  level?: LogLevel;
  /** Masked in every line, whatever its spelling (as is, percent-encoded, JSON-escaped): the API token. */
  secrets?: readonly string[];
}

/** `WORKER_LOG_LEVEL`'s value as a level (any case), or undefined when it is none. */
export function parseLogLevel(raw: string): LogLevel | undefined {
  const upper = raw.trim().toUpperCase();
  return (LOG_LEVELS as readonly string[]).includes(upper) ? (upper as LogLevel) : undefined;
}

/** `WORKER_LOG_FORMAT`'s value as a format (any case), or undefined when it is none. */
export function parseLogFormat(raw: string): LogFormat | undefined {
  const lower = raw.trim().toLowerCase();
  return (LOG_FORMATS as readonly string[]).includes(lower) ? (lower as LogFormat) : undefined;
}

/** Whether a line at `level` is written by a logger set to `threshold`. */
export function isLevelEnabled(level: LogLevel, threshold: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);
}

/** A logger that also masks secrets learned after it was made (the emulator's token in `npm start`). */
export interface WorkerLogger extends Logger {
  readonly format: LogFormat;
  readonly level: LogLevel;
  /** Masks these too from now on. */
  addSecrets(...secrets: string[]): void;
  /** `text` with what this logger masks masked. */
  mask(text: string): string;
}

type Write = (line: string) => void;

abstract class MaskingLogger implements WorkerLogger {
  abstract readonly format: LogFormat;
  protected readonly secrets: string[];

  constructor(
    readonly level: LogLevel,
    secrets: readonly string[],
    protected readonly write: Write,
  ) {
    this.secrets = secrets.filter((s) => typeof s === 'string' && s !== '');
  }

  addSecrets(...secrets: string[]): void {
    for (const secret of secrets) if (secret && !this.secrets.includes(secret)) this.secrets.push(secret);
  }

  mask(text: string): string {
    return redactSecrets(text, this.secrets);
  }

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    if (!isLevelEnabled(level, this.level)) return;
    const { [LogTimestamp]: timestampNanos, ...attributes } = (meta ?? {}) as LogMetadata & { [LogTimestamp]?: bigint };
    const time = typeof timestampNanos === 'bigint' ? new Date(Number(timestampNanos / 1_000_000n)) : new Date();
    message = String(message);
    if (attributes.sdkComponent === 'core') {
      // The core's lines are flat: a message and fields of text (Rust's Debug output) or numbers.
      message = maskCorePayloads(message);
      for (const key of Object.keys(attributes))
        if (typeof attributes[key] === 'string') attributes[key] = maskCorePayloads(attributes[key]);
    }
    let line: string;
    try {
      line = this.line(time, level, message, attributes);
    } catch (err) {
      // Never lose a line, nor let a log call throw: say what could not be written.
      line = this.line(time, level, String(message), { logError: `attributes could not be written: ${String(err)}` });
    }
    this.write(line);
  }

  protected abstract line(time: Date, level: LogLevel, message: string, attributes: Record<string, unknown>): string;

  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/** One JSON object per line: time, level, message, then the attributes, every string masked. */
export class JsonLogger extends MaskingLogger {
  readonly format = 'json';

  constructor(level: LogLevel = 'INFO', options: { secrets?: readonly string[]; write?: Write } = {}) {
    super(level, options.secrets ?? [], options.write ?? ((line) => process.stdout.write(line)));
  }

  protected line(time: Date, level: LogLevel, message: string, attributes: Record<string, unknown>): string {
    return jsonLogLine(time, level, message, attributes, this.secrets);
  }
}

/**
 * The SDK's DefaultLogger format (`<time> [LEVEL] message { attributes }`, coloured when stderr
 * is a colour terminal) on stderr, the whole line masked.
 */
export class TextLogger extends MaskingLogger {
  readonly format = 'text';
  readonly #inspect: (...args: unknown[]) => string;

  constructor(
    level: LogLevel = 'INFO',
    options: { secrets?: readonly string[]; write?: Write; colors?: boolean } = {},
  ) {
    super(level, options.secrets ?? [], options.write ?? ((line) => process.stderr.write(line)));
    const colors =
      options.colors ?? (options.write === undefined && Boolean(process.stderr.isTTY && process.stderr.hasColors?.()));
    this.#inspect = formatWithOptions.bind(undefined, { colors });
  }

  protected line(time: Date, level: LogLevel, message: string, attributes: Record<string, unknown>): string {
    const text =
      Object.keys(attributes).length === 0
        ? `${this.#inspect(time)} [${level}] ${message}`
        : `${this.#inspect(time)} [${level}] ${message} ${this.#inspect(attributes)}`;
    return `${redactSecrets(text, this.secrets)}\n`;
  }
}

export function createWorkerLogger({
  format = 'text',
  level = 'INFO',
  secrets = [],
}: WorkerLogOptions = {}): WorkerLogger {
  return format === 'json' ? new JsonLogger(level, { secrets }) : new TextLogger(level, { secrets });
}

/**
 * How the core writes a payload in its lines (its Debug of Payload): the data in base64, whole
 * (`[eyJjb2RlIjoiMTIzNDU2In0=]`) or its first and last 32 bytes (`[…..…]`). At TRACE it writes
 * history events and activations, signal arguments among them (a one-time code), and a WARN
 * about a late activity completion carries its result: the data never reaches a line.
 */
const CORE_PAYLOAD =
  /\[(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?(?:\.\.(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)?\]/g;

/**
 * A list of one Rust enum variant (`[ScheduleActivity]`, `[TriggerWFTaskStarted]`) may read as
 * base64 too: kept. (A payload is JSON: an object's base64 starts with `e`, and text of letters
 * only with no padding is rare; a one-time code's payload has digits and padding.)
 */
const VARIANT_LIST = /^\[[A-Z][A-Za-z]*\]$/;

/** A core line's text with every payload's data replaced by the mask (`[•••]`); `[]` and `[SomeVariant]` stay. */
export function maskCorePayloads(text: string): string {
  if (!text.includes('[')) return text;
  return text.replace(CORE_PAYLOAD, (payload) =>
    payload === '[]' || VARIANT_LIST.test(payload) ? payload : `[${MASK}]`,
  );
}

/** The fields every JSON line starts with; an attribute of the same name is written as `attributes.<name>`. */
const RESERVED = new Set(['time', 'level', 'message']);

/** One JSON line (with its newline): time, level, message, then the attributes as JSON can hold them, every string masked. */
export function jsonLogLine(
  time: Date,
  level: LogLevel,
  message: string,
  attributes: Record<string, unknown>,
  secrets: readonly string[] = [],
): string {
  const record: Record<string, unknown> = { time: time.toISOString(), level, message };
  const safe = toLoggable(attributes) as Record<string, unknown>;
  for (const key of Object.keys(safe)) setField(record, RESERVED.has(key) ? `attributes.${key}` : key, safe[key]);
  return `${JSON.stringify(redactSecretsDeep(record, secrets))}\n`;
}

/** How deep attributes are written; deeper objects become `[Object]` (an SDK proto can nest far). */
const MAX_DEPTH = 10;

/**
 * A copy of a value that JSON.stringify writes without throwing and without losing what matters:
 * Errors as {name, message, stack, ...own fields, cause}, bigints and 64-bit Longs as strings,
 * Dates as ISO strings, Maps as objects, Sets as arrays, bytes as `[N bytes]` (a payload's bytes
 * may hold anything, a one-time code among them: never written, protobuf messages included),
 * functions and symbols by name, a reference back up the same path as
 * `[Circular]`, non-finite numbers as strings. Nothing it reads may throw out of it (a getter
 * that throws is written as `[unreadable: ...]`).
 */
export function toLoggable(value: unknown): unknown {
  return loggable(value, [], 0);
}

function loggable(value: unknown, ancestors: object[], depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return value.toString();
    case 'undefined':
      return undefined;
    case 'symbol':
      return value.toString();
    case 'function':
      return `[Function ${value.name || 'anonymous'}]`;
  }
  if (value === null) return null;
  const object = value as object;
  if (ancestors.includes(object)) return '[Circular]';
  if (object instanceof Date) return Number.isNaN(object.getTime()) ? 'Invalid Date' : object.toISOString();
  if (ArrayBuffer.isView(object) || object instanceof ArrayBuffer) return `[${object.byteLength} bytes]`;
  if (depth >= MAX_DEPTH) return Array.isArray(object) ? '[Array]' : '[Object]';
  ancestors.push(object);
  try {
    const inner = (item: unknown) => loggable(item, ancestors, depth + 1);
    if (object instanceof Error) return errorFields(object, inner);
    if (Array.isArray(object)) return object.map((item) => (item === undefined ? null : inner(item)));
    if (object instanceof Set) return [...object].map(inner);
    if (object instanceof Map) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of object)
        setField(out, typeof key === 'string' ? key : String(loggable(key, ancestors, depth + 1)), inner(item));
      return out;
    }
    // A protobuf message (an activation, an activity task): its own fields, so its payloads' bytes
    // stay `[N bytes]` (its toJSON would write them in base64) and its 64-bit numbers are digits.
    if ((object as { __isLong__?: unknown }).__isLong__ === true) return String(object);
    const type = (object as { constructor?: { encode?: unknown; decode?: unknown } }).constructor;
    const isMessage = typeof type?.encode === 'function' && typeof type?.decode === 'function';
    const toJSON = (object as { toJSON?: unknown }).toJSON;
    if (!isMessage && typeof toJSON === 'function') return inner(read(() => toJSON.call(object)));
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(object))
      setField(out, key, inner(read(() => (object as Record<string, unknown>)[key])));
    return out;
  } finally {
    ancestors.pop();
  }
}

function errorFields(error: Error, inner: (item: unknown) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: read(() => String(error.name)),
    message: read(() => String(error.message)),
    stack: read(() => error.stack),
  };
  for (const key of Object.keys(error)) {
    if (key in out || key === 'cause') continue;
    setField(out, key, inner(read(() => (error as unknown as Record<string, unknown>)[key])));
  }
  const cause = read(() => error.cause);
  if (cause !== undefined) out.cause = inner(cause);
  return out;
}

function read(get: () => unknown): unknown {
  try {
    return get();
  } catch (err) {
    return `[unreadable: ${err instanceof Error ? err.message : String(err)}]`;
  }
}

function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  if (value === undefined) return;
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * For an entry point's last words (it is about to exit): the error in the format the worker
 * logs in, masked, on stderr. The format and the token are read from `env` as they are, as the
 * configuration itself may be what failed. In text, a configuration error (and, with
 * `messageOnly`, any error) is its message alone; anything else as console.error shows it.
 */
export function logFatal(
  error: unknown,
  env: Record<string, string | undefined> = process.env,
  options: { messageOnly?: boolean } = {},
): void {
  const format = parseLogFormat(env.WORKER_LOG_FORMAT ?? '') ?? 'text';
  const secrets = [env.BROWSERAI_API_TOKEN?.trim() ?? ''];
  const message =
    error instanceof Error && error.name === 'ConfigError'
      ? error.message
      : error instanceof Error
        ? `${error.name}: ${error.message}`
        : String(error);
  const write = (line: string) => process.stderr.write(line);
  if (format === 'json') {
    new JsonLogger('ERROR', { secrets, write }).error(
      message,
      error instanceof Error && error.name !== 'ConfigError' ? { error } : {},
    );
  } else {
    // As before: the message of a configuration error, anything else as Node shows it.
    const text =
      error instanceof Error && (error.name === 'ConfigError' || options.messageOnly)
        ? error.message
        : formatWithOptions({ colors: false }, error);
    write(`${redactSecrets(text, secrets)}\n`);
  }
}
