#!/usr/bin/env node
// The starter CLI: `browserai-temporal <command>` once the package is installed (its `bin`), or
// `npm run starter -- <command>` in this repository. The programmatic API (starters/tasks.ts) from a shell.
// Exit codes: 0 done, 1 the task or workflow failed, 2 bad usage or input, 3 Temporal unreachable,
// 4 no such workflow, 130 cancelled.
//
// Only node: modules are imported at the top: `--help`, `-h` and no arguments print the usage
// without loading the Temporal SDK (about a quarter of a second); every command loads it on first use.
// Every command checks its arguments before it connects: bad input is exit 2 with nothing sent,
// whether or not Temporal is up (a connection that cannot be made takes 10 s to give up).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { TaskType } from '../browserai';
import type { BrowserTaskInput, BrowserTaskResult } from '../contract/input';
import { ConfigError } from '../contract/errors';
import { stopSentence } from './stop-sentence';

/** The modules a command needs, loaded (synchronously, as `require`) only when a command runs. */
/* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use, so `--help` loads no Temporal code */
const load = {
  tasks: () => require('../starters/tasks') as typeof import('../starters/tasks'),
  inputProblems: () => require('../contract/input-problems') as typeof import('../contract/input-problems'),
  codes: () => require('../contract/one-time-codes') as typeof import('../contract/one-time-codes'),
  savedTaskCommands: () => require('./saved-task-commands') as typeof import('./saved-task-commands'),
  replayCommand: () => require('./replay-command') as typeof import('./replay-command'),
  mcpCommand: () => require('./mcp-command') as typeof import('./mcp-command'),
  inboxCommand: () => require('./inbox-command') as typeof import('./inbox-command'),
  batchCommand: () => require('./batch-command') as typeof import('./batch-command'),
  savedTasks: () => require('../starters/saved-tasks') as typeof import('../starters/saved-tasks'),
  browserai: () => require('../browserai') as typeof import('../browserai'),
  config: () => require('../config/temporal') as typeof import('../config/temporal'),
  temporalClient: () => require('@temporalio/client') as typeof import('@temporalio/client'),
  temporalCommon: () => require('@temporalio/common') as typeof import('@temporalio/common'),
  tracing: () => require('../telemetry/tracing') as typeof import('../telemetry/tracing'),
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** Tracing, when OTEL_* turns it on: installed by the first connection, flushed before the process exits. */
let tracing: import('../telemetry/tracing').Tracing | undefined;

let connected: Promise<import('../starters/tasks').BrowserTasks> | undefined;
/** The task client, connected as the worker is (starters/tasks.ts), traced when OTEL_* says so: the start call opens the task's trace. */
function connect() {
  tracing ??= load.tracing().tracingFromEnv(process.env, 'browserai-temporal-cli');
  connected ??= load.tasks().BrowserTasks.fromEnv(process.env, { plugins: tracing ? [tracing.plugin] : [] });
  return connected;
}

/** Every command, so an unknown one is a usage error before anything connects. */
const COMMANDS = new Set([
  'start',
  'submit-code',
  'append',
  'wait-input',
  'waiting',
  'complete',
  'state',
  'cancel',
  'result',
  'saved-task',
  'schedule',
  'replay',
  'batch',
]);

/** How the user ran us, for the usage and the follow-up hints. */
const CLI = process.env.npm_lifecycle_event === 'starter' ? 'npm run starter --' : 'browserai-temporal';

/** The `mcp` lines (here: mcp-command.ts loads the MCP SDK). */
const MCP_USAGE = `
  mcp [--http [--host ADDR] [--port N] [--allow-origin ORIGIN ...] [--max-sessions N]]
      [--id-prefix PREFIX] [--allow-totp-secret NAME ...] [--allow-code-templates]
      [--allow-webhooks] [--allow-webhook-reference PREFIX ...] [--allow-notify PREFIX ...]
      [--allow-task-queue NAME ...] [--allow-code-recipient ADDRESS ...] [--allow-priority]
      [--max-timeout-ms MS]
                                  an MCP server of BrowserAI tasks (docs/mcp.md): stdio by default;
                                  --http serves http://127.0.0.1:8765/mcp (any other --host needs
                                  BROWSERAI_MCP_TOKEN); MCP clients reach only tasks whose workflow
                                  ID is PREFIX and a UUID (default mcp-, or BROWSERAI_MCP_ID_PREFIX)`;

/** The `saved-task` and `schedule` lines (here, not in saved-task-commands.ts, which loads the Temporal client: `--help` must not). */
const SAVED_TASK_USAGE = `
  saved-task create --name NAME --instruction TEXT [...] --project P --country CC [--city] [--zipcode]
                    [--cron CRON [--timezone TZ] [--overlap POLICY] [--paused] [--note TEXT]]
                                  create a saved task (with --cron, also its schedule)
  saved-task get NAME | saved-task list
  saved-task run NAME [--country CC] [--awaitable] [--id WORKFLOW_ID] [--wait]
                                  run it now; the workflow takes submit-code, append, cancel...
  schedule create NAME --cron CRON [--timezone TZ] [--overlap skip|buffer_one|buffer_all|cancel_other|terminate_other|allow_all]
                  [--paused] [--note TEXT]       create or update (one schedule per saved task)
  schedule list | describe NAME | pause NAME [--note] | unpause NAME | trigger NAME
  schedule update NAME --cron CRON [--timezone TZ] | schedule delete NAME`;

const USAGE = `Usage: ${CLI} <command> [options]

  start --instruction TEXT [--instruction TEXT ...] --project NAME --country CC
        [--city NAME] [--zipcode CODE] [--type crawler_automation|script_automation]
        [--awaitable] [--inspect] [--timeout-ms N] [--awaiting-timeout-ms N]
        [--code-recipient PHONE|EMAIL] [--input FILE.json] [--id WORKFLOW_ID] [--wait]
                                  start a task (prints the workflow ID; --wait prints the result);
                                  --code-recipient: where its codes arrive, for the inbox to type
  submit-code WORKFLOW_ID [CODE]  type a one-time code (reads it from stdin when CODE is omitted,
                                  so it stays out of your shell history)
  append WORKFLOW_ID --instruction TEXT [...] [--wait]
                                  append instructions (--wait returns BrowserAI's answer)
  wait-input WORKFLOW_ID [--after N]
                                  wait until the task asks for input (a request numbered above N,
                                  default 0) or ends; prints the request (exit 0) or how it ended
                                  (exit 0 completed, 1 otherwise)
  waiting [--project NAME] [--details]
                                  list the tasks waiting for input, longest wait first
  complete WORKFLOW_ID            end an awaitable session
  state WORKFLOW_ID               what the task is doing now
  cancel WORKFLOW_ID [--wait]     stop the task (one stop command) and cancel the workflow
  result WORKFLOW_ID [--full]     wait for and print the result (--full fetches untrimmed
                                  results from BrowserAI; needs BROWSERAI_API_TOKEN)
${SAVED_TASK_USAGE}

  batch run FILE [--name NAME] [--concurrency N] [--max-queued N] [--out results.jsonl]
                                  run every task of FILE (.jsonl: one task input per line, with an
                                  optional "id", else the ID is line-N; .csv: a header row naming the
                                  fields): every line is checked first; the name defaults to the
                                  file's and its content's hash. Shows progress; run it again to resume
  batch status NAME | results NAME [--out FILE] | cancel NAME | retry-failed NAME
                                  counts; every item's outcome in input order (JSON lines); drop the
                                  queued items and stop each running task once; run the failed again
${MCP_USAGE}

  inbox [--host ADDR] [--port N]  the inbox (docs/one-time-codes.md): SMS and email providers post
                                  codes to http://127.0.0.1:8790 (/twilio, /mailgun/mime, /messages),
                                  each typed once into the task waiting at its codeRecipient

  replay FILE.json [FILE.json ...] [--workflows PATH] [--timeout-ms N]
                                  replay histories exported with \`temporal workflow show --output json
                                  -w ID > FILE.json\` against this version's workflows (or the module
                                  at PATH, e.g. your worker's workflows file): before an upgrade, run
                                  it on your running workflows. Exit 1 if any would break, or if one
                                  takes over N ms (default 60000; the replay stops there). Needs no
                                  Temporal connection (TEMPORAL_PAYLOAD_KEY reads encrypted ones)

Environment. The Temporal connection follows Temporal's standard client configuration, as the
Temporal CLI and SDKs read it; a variable overrides the same setting in the profile:
  TEMPORAL_ADDRESS                  host:port of the Temporal frontend (default localhost:7233)
  TEMPORAL_NAMESPACE                namespace (default "default")
  TEMPORAL_API_KEY                  API key (Temporal Cloud); turns TLS on
  TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH
                                    mTLS client certificate and key (PEM files), both or neither
  TEMPORAL_TLS_SERVER_CA_CERT_PATH  CA of the server's certificate, when not a public one
  TEMPORAL_PROFILE                  profile of temporal.toml to use (default "default"); the file is
                                    TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml
                                    (Linux; ~/Library/Application Support/temporalio on macOS)
Our own:
  BROWSERAI_MCP_TOKEN               mcp --http: the bearer token clients must send (required for a
                                    --host other than loopback)
  BROWSERAI_MCP_STATE_KEY           mcp: the key (32 bytes or more) that signs code requests' state;
                                    the same on every instance behind one address
  TEMPORAL_TASK_QUEUE               task queue the workers poll (default browserai)
  TEMPORAL_PAYLOAD_KEY, TEMPORAL_PAYLOAD_KEY_ID
                                    payload encryption, the same as the workers' (default: off)
  BROWSERAI_API_TOKEN, BROWSERAI_BASE_URL
                                    only for result --full
  BROWSERAI_INBOX_TWILIO_AUTH_TOKEN, BROWSERAI_INBOX_MAILGUN_SIGNING_KEY, BROWSERAI_INBOX_SECRET
                                    inbox: the providers it reads, each with its secret (one at least);
                                    BROWSERAI_INBOX_PUBLIC_URL the https:// origin providers call
  BROWSERAI_BATCH_PROGRESS_MS       batch run: how often it looks at the batch (a query each;
                                    default 2000 on a terminal, 5000 otherwise)`;

class UsageError extends Error {}

const OPTIONS = {
  instruction: { type: 'string', multiple: true },
  project: { type: 'string' },
  country: { type: 'string' },
  city: { type: 'string' },
  zipcode: { type: 'string' },
  type: { type: 'string' },
  awaitable: { type: 'boolean' },
  inspect: { type: 'boolean' },
  'timeout-ms': { type: 'string' },
  'awaiting-timeout-ms': { type: 'string' },
  'code-recipient': { type: 'string' },
  input: { type: 'string' },
  id: { type: 'string' },
  wait: { type: 'boolean' },
  full: { type: 'boolean' },
  name: { type: 'string' },
  cron: { type: 'string' },
  timezone: { type: 'string' },
  overlap: { type: 'string' },
  paused: { type: 'boolean' },
  note: { type: 'string' },
  after: { type: 'string' },
  details: { type: 'boolean' },
  workflows: { type: 'string' },
  concurrency: { type: 'string' },
  out: { type: 'string' },
  'max-queued': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'mcp' && !argv.includes('--help') && !argv.includes('-h')) {
    const mcp = load.mcpCommand();
    let args;
    try {
      args = mcp.mcpArguments(argv.slice(1));
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    return mcp.mcpCommand(await connect(), args);
  }
  if (argv[0] === 'inbox' && !argv.includes('--help') && !argv.includes('-h')) {
    const inbox = load.inboxCommand();
    let args;
    try {
      args = inbox.inboxArguments(argv.slice(1));
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    return inbox.inboxCommand(await connect(), args);
  }
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  const [command, workflowId, extra] = positionals;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!command) {
    console.log(USAGE);
    return 2;
  }
  if (!COMMANDS.has(command)) throw new UsageError(`unknown command "${command}"`);
  /** Input the workflow would refuse, refused here before anything is sent. */
  const refuse = (problems: string[]) => {
    if (problems.length > 0) throw new (load.inputProblems().InvalidInputError)(problems);
  };
  const needId = () => {
    if (!workflowId) throw new UsageError(`${command} needs a WORKFLOW_ID`);
    return workflowId;
  };
  const instructions = () => {
    if (!values.instruction?.length) throw new UsageError('give at least one --instruction');
    return values.instruction.map((action) => ({ action }));
  };

  if (command === 'replay') {
    const files = positionals.slice(1);
    if (files.length === 0) throw new UsageError('replay needs one or more history files (FILE.json)');
    const timeoutMs = values['timeout-ms'] === undefined ? undefined : Number(values['timeout-ms']);
    if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0))
      throw new UsageError('--timeout-ms takes a number of milliseconds, e.g. 60000');
    return load.replayCommand().replayCommand(files, values.workflows, timeoutMs);
  }
  if (command === 'batch') {
    const fail = (message: string): never => {
      throw new UsageError(message);
    };
    return load.batchCommand().batchCommand(connect, workflowId, extra, values, fail, CLI);
  }
  if (command === 'saved-task' || command === 'schedule') {
    const fail = (message: string): never => {
      throw new UsageError(message);
    };
    return load.savedTaskCommands().savedTaskCommand(connect, command, workflowId, extra, values, fail, printResult);
  }
  switch (command) {
    case 'start': {
      const input = startInput(values, instructions);
      refuse(load.inputProblems().taskInputProblems(input));
      const handle = await (await connect()).start(input, { workflowId: values.id });
      console.log(`Started workflow ${handle.workflowId}`);
      if (!values.wait) {
        console.log(`Follow it:  ${CLI} state ${handle.workflowId}`);
        return 0;
      }
      watched = handle.workflowId;
      return printResult(await handle.result());
    }
    case 'submit-code': {
      const id = needId();
      const code = (extra ?? readFileSync(0, 'utf8')).trim();
      refuse(load.codes().codeProblems(code));
      await (await connect()).submitCode(id, code);
      console.log('Code sent; it is typed once, as soon as the task is ready for it.');
      return 0;
    }
    case 'append': {
      const [id, given] = [needId(), instructions()];
      refuse(load.inputProblems().instructionProblems(given));
      const tasks = await connect();
      if (values.wait) console.log(JSON.stringify(await tasks.addInstructions(id, given), null, 2));
      else {
        await tasks.append(id, given);
        console.log('Instructions queued; they are sent in order.');
      }
      return 0;
    }
    case 'wait-input': {
      const after = values.after === undefined ? 0 : Number(values.after);
      if (!(Number.isInteger(after) && after >= 0)) throw new UsageError('--after takes a request number (0, 1, 2...)');
      const id = needId();
      const next = await (await connect()).nextInputRequest(id, { after });
      console.log(JSON.stringify(next, null, 2));
      if (next.kind === 'input-requested') {
        const { request } = next;
        if (next.open && request.kind === 'code' && request.answeredBy === 'caller')
          console.error(`Answer it:  ${CLI} submit-code ${request.workflowId}`);
        console.error(`Then wait for the next:  ${CLI} wait-input ${request.workflowId} --after ${request.sequence}`);
        return 0;
      }
      return next.finished.outcome === 'completed' ? 0 : 1;
    }
    case 'waiting': {
      const waiting = await (await connect()).listAwaitingInput({ project: values.project, details: values.details });
      console.log(JSON.stringify(waiting, null, 2));
      return 0;
    }
    case 'complete': {
      const id = needId();
      await (await connect()).complete(id);
      console.log('The session will be stopped once its instructions are done.');
      return 0;
    }
    case 'state': {
      const id = needId();
      console.log(JSON.stringify(await (await connect()).state(id), null, 2));
      return 0;
    }
    case 'cancel': {
      const id = needId();
      const tasks = await connect();
      await tasks.cancel(id);
      console.log('Cancellation requested: the task gets a stop command.');
      if (values.wait) {
        await tasks.result(id).catch(() => undefined);
        const { outcome, stopConfirmed, executionId } = await tasks.state(id);
        if (outcome) console.log(JSON.stringify(outcome, null, 2));
        console.log(stopSentence(stopConfirmed, executionId));
        if (stopConfirmed === false) return 1;
      }
      return 0;
    }
    case 'result': {
      watched = needId();
      const result = await (await connect()).result(watched);
      if (values.full) {
        const browserai = new (load.browserai().BrowserAIClient)({
          apiToken: process.env.BROWSERAI_API_TOKEN ?? '',
          baseUrl: process.env.BROWSERAI_BASE_URL,
        });
        const full = await browserai.getResults(result.executionId);
        return printResult({ ...result, results: full.results, trimmed: undefined });
      }
      return printResult(result);
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];

function startInput(values: Values, instructions: () => Array<{ action: string }>): BrowserTaskInput {
  const fromFile = values.input ? (JSON.parse(readFileSync(values.input, 'utf8')) as Partial<BrowserTaskInput>) : {};
  const number = (name: 'timeout-ms' | 'awaiting-timeout-ms') =>
    values[name] === undefined ? undefined : Number(values[name]);
  const input: BrowserTaskInput = {
    ...fromFile,
    instructions: values.instruction ? instructions() : (fromFile.instructions ?? instructions()),
    type: (values.type ?? fromFile.type ?? 'crawler_automation') as TaskType,
    project: values.project ?? fromFile.project ?? '',
    geoLocation: values.country
      ? { country: values.country, city: values.city, zipcode: values.zipcode }
      : (fromFile.geoLocation ?? { country: '' }),
  };
  if (values.awaitable) input.awaitable = true;
  if (values.inspect) input.inspect = true;
  if (values['timeout-ms'] !== undefined) input.timeoutMs = number('timeout-ms');
  if (values['awaiting-timeout-ms'] !== undefined) input.awaitingInputTimeoutMs = number('awaiting-timeout-ms');
  if (values['code-recipient'] !== undefined) input.codeRecipient = { address: values['code-recipient'] };
  return input;
}

function printResult(result: BrowserTaskResult): number {
  console.log(JSON.stringify(result, null, 2));
  if (result.trimmed) console.error(`\nNote: ${result.trimmed.note}`);
  if (result.stopConfirmed === false) {
    console.error(`\n${stopSentence(false, result.executionId)}`);
    return 1;
  }
  return 0;
}

/** The workflow whose result the command waits for, so a failure can say what became of its task. */
let watched: string | undefined;

/** Asks the closed workflow what became of its task (a query needs a worker). */
async function taskFate(workflowId: string | undefined): Promise<string> {
  if (!workflowId) return '';
  try {
    const { stopConfirmed, executionId } = await (await connect()).state(workflowId);
    return stopSentence(stopConfirmed, executionId);
  } catch {
    return `Whether its BrowserAI task was stopped is unknown here: run \`${CLI} state ${workflowId}\` (stopConfirmed) while a worker runs.`;
  }
}

main(process.argv.slice(2)).then(
  async (code) => process.exit(await afterFlush(code)),
  async (err: unknown) => process.exit(await afterFlush(await reportError(err))),
);

/** Exports the spans still buffered (tracing on) before the process exits; an exporter that fails costs a line, not the exit code. */
async function afterFlush(code: number): Promise<number> {
  await tracing
    ?.shutdown()
    .catch((err: unknown) => console.error(`Traces not exported: ${err instanceof Error ? err.message : err}`));
  return code;
}

/** Prints what went wrong, and returns the exit code. Loads the Temporal SDK only for errors a command can have raised. */
async function reportError(err: unknown): Promise<number> {
  if (
    err instanceof UsageError ||
    (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))
  ) {
    console.error(`${err.message}\n\n${USAGE}`);
    return 2;
  }
  const { InvalidInputError, WorkflowNotFoundError } = load.tasks();
  const { ScheduleAfterCreateError } = load.savedTasks();
  const { ScheduleNotFoundError, WorkflowFailedError } = load.temporalClient();
  const { ApplicationFailure, CancelledFailure } = load.temporalCommon();
  if (err instanceof InvalidInputError) {
    console.error(`${err.message}\nNothing was started or sent.`);
    return 2;
  }
  if (err instanceof ConfigError) {
    console.error(`${err.message}\nNothing was started or sent.`);
    return 2;
  }
  if (err instanceof load.tasks().BatchFinishedError) {
    console.error(err.message);
    return 1;
  }
  if (err instanceof ScheduleAfterCreateError) {
    console.error(err.message);
    return 1;
  }
  if (err instanceof ScheduleNotFoundError) {
    console.error(`${err.message}. List schedules with: ${CLI} schedule list`);
    return 4;
  }
  if (err instanceof WorkflowNotFoundError) {
    console.error(`${err.message}. Check the workflow ID (and TEMPORAL_NAMESPACE).`);
    return 4;
  }
  if (err instanceof WorkflowFailedError) {
    const cause = err.cause;
    const fate = await taskFate(watched ?? process.argv[3]);
    if (cause instanceof CancelledFailure) {
      console.error(`The workflow was cancelled. ${fate}`);
      return 130;
    }
    const type = cause instanceof ApplicationFailure ? cause.type : cause?.name;
    console.error(`The workflow failed${type ? ` (${type})` : ''}: ${cause?.message ?? err.message}\n${fate}`);
    return 1;
  }
  const message = err instanceof Error ? err.message : String(err);
  if (/connect|UNAVAILABLE|ECONNREFUSED|transport/i.test(message)) {
    console.error(
      `Cannot reach Temporal at ${temporalAddress()}: ${withCauses(err)}\nIs your Temporal server running${CLI === 'browserai-temporal' ? '' : ' (`npm start` runs one)'}?`,
    );
    return 3;
  }
  console.error(withCauses(err));
  return 1;
}

/**
 * The error's message followed by its causes'. A call the server refused is a ServiceError that
 * says only what was attempted ("Failed to start Workflow"); the server's reason is its cause's
 * (e.g. "3 INVALID_ARGUMENT: WorkflowId exceeds length limit.").
 */
function withCauses(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const text = e instanceof Error ? e.message : String(e);
    if (text && !parts.some((part) => part.includes(text))) parts.push(text);
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(': ');
}

/** The address the command used: TEMPORAL_ADDRESS, the temporal.toml profile's, or the default. */
function temporalAddress(): string {
  try {
    return load.config().loadTemporalConfig(process.env).address;
  } catch {
    return process.env.TEMPORAL_ADDRESS || 'localhost:7233';
  }
}
