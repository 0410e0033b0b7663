// `npm run starter -- <command>`: the programmatic API (browser-tasks.ts) from a shell.
// Exit codes: 0 done, 1 the task or workflow failed, 2 bad usage or input, 3 Temporal unreachable,
// 4 no such workflow, 130 cancelled.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { BrowserAIClient, type TaskType } from '../browserai';
import type { BrowserTaskInput, BrowserTaskResult } from '../workflows/input';
import { ScheduleNotFoundError } from '@temporalio/client';
import { BrowserTasks, InvalidInputError, WorkflowNotFoundError, fetchFullResults } from '../client/tasks';
import { SAVED_TASK_USAGE, savedTaskCommand } from './saved-task-commands';
import { stopSentence } from './stop-sentence';
import { ScheduleAfterCreateError } from '../client/saved-tasks';

const USAGE = `Usage: npm run starter -- <command> [options]

  start --instruction TEXT [--instruction TEXT ...] --project NAME --country CC
        [--city NAME] [--zipcode CODE] [--type crawler_automation|script_automation]
        [--awaitable] [--inspect] [--timeout-ms N] [--awaiting-timeout-ms N]
        [--input FILE.json] [--id WORKFLOW_ID] [--wait]
                                  start a task (prints the workflow ID; --wait prints the result)
  submit-code WORKFLOW_ID [CODE]  type a one-time code (reads it from stdin when CODE is omitted,
                                  so it stays out of your shell history)
  append WORKFLOW_ID --instruction TEXT [...] [--wait]
                                  append instructions (--wait returns BrowserAI's answer)
  complete WORKFLOW_ID            end an awaitable session
  state WORKFLOW_ID               what the task is doing now
  cancel WORKFLOW_ID [--wait]     stop the task (one stop command) and cancel the workflow
  result WORKFLOW_ID [--full]     wait for and print the result (--full fetches untrimmed
                                  results from BrowserAI; needs BROWSERAI_API_TOKEN)
${SAVED_TASK_USAGE}

Environment: TEMPORAL_ADDRESS (localhost:7233), TEMPORAL_NAMESPACE (default),
TEMPORAL_TASK_QUEUE (browserai), TEMPORAL_API_KEY / TEMPORAL_TLS_* for secured clusters.`;

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
  help: { type: 'boolean', short: 'h' },
} as const;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  const [command, workflowId, extra] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  const needId = () => {
    if (!workflowId) throw new UsageError(`${command} needs a WORKFLOW_ID`);
    return workflowId;
  };
  const instructions = () => {
    if (!values.instruction?.length) throw new UsageError('give at least one --instruction');
    return values.instruction.map((action) => ({ action }));
  };

  const tasks = await BrowserTasks.fromEnv();
  if (command === 'saved-task' || command === 'schedule') {
    const fail = (message: string): never => {
      throw new UsageError(message);
    };
    return savedTaskCommand(tasks, command, workflowId, extra, values, fail, printResult);
  }
  switch (command) {
    case 'start': {
      const input = startInput(values, instructions);
      const handle = await tasks.start(input, { workflowId: values.id });
      console.log(`Started workflow ${handle.workflowId}`);
      if (!values.wait) {
        console.log(`Follow it:  npm run starter -- state ${handle.workflowId}`);
        return 0;
      }
      watched = handle.workflowId;
      return printResult(await handle.result());
    }
    case 'submit-code': {
      const code = (extra ?? readFileSync(0, 'utf8')).trim();
      await tasks.submitCode(needId(), code);
      console.log('Code sent; it is typed once, as soon as the task is ready for it.');
      return 0;
    }
    case 'append': {
      const id = needId();
      if (values.wait) console.log(JSON.stringify(await tasks.addInstructions(id, instructions()), null, 2));
      else {
        await tasks.append(id, instructions());
        console.log('Instructions queued; they are sent in order.');
      }
      return 0;
    }
    case 'complete':
      await tasks.complete(needId());
      console.log('The session will be stopped once its instructions are done.');
      return 0;
    case 'state':
      console.log(JSON.stringify(await tasks.state(needId()), null, 2));
      return 0;
    case 'cancel': {
      const id = needId();
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
      const result = await tasks.result(watched);
      if (values.full) {
        const browserai = new BrowserAIClient({ apiToken: process.env.BROWSERAI_API_TOKEN ?? '', baseUrl: process.env.BROWSERAI_BASE_URL });
        return printResult({ ...result, results: (await fetchFullResults(browserai, result.executionId)).results, trimmed: undefined });
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
  const number = (name: 'timeout-ms' | 'awaiting-timeout-ms') => (values[name] === undefined ? undefined : Number(values[name]));
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
    const { stopConfirmed, executionId } = await (await BrowserTasks.fromEnv()).state(workflowId);
    return stopSentence(stopConfirmed, executionId);
  } catch {
    return `Whether its BrowserAI task was stopped is unknown here: run \`npm run starter -- state ${workflowId}\` (stopConfirmed) while a worker runs.`;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  async (err: unknown) => {
    if (err instanceof UsageError || (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))) {
      console.error(`${err.message}\n\n${USAGE}`);
      process.exit(2);
    }
    if (err instanceof InvalidInputError) {
      console.error(`${err.message}\nNothing was started or sent.`);
      process.exit(2);
    }
    if (err instanceof ScheduleAfterCreateError) {
      console.error(err.message);
      process.exit(1);
    }
    if (err instanceof ScheduleNotFoundError) {
      console.error(`${err.message}. List schedules with: npm run starter -- schedule list`);
      process.exit(4);
    }
    if (err instanceof WorkflowNotFoundError) {
      console.error(`${err.message}. Check the workflow ID (and TEMPORAL_NAMESPACE).`);
      process.exit(4);
    }
    if (err instanceof WorkflowFailedError) {
      const cause = err.cause;
      const fate = await taskFate(watched ?? process.argv[3]);
      if (cause instanceof CancelledFailure) {
        console.error(`The workflow was cancelled. ${fate}`);
        process.exit(130);
      }
      const type = cause instanceof ApplicationFailure ? cause.type : cause?.name;
      console.error(`The workflow failed${type ? ` (${type})` : ''}: ${cause?.message ?? err.message}\n${fate}`);
      process.exit(1);
    }
    const message = err instanceof Error ? err.message : String(err);
    if (/connect|UNAVAILABLE|ECONNREFUSED|transport/i.test(message)) {
      console.error(`Cannot reach Temporal at ${process.env.TEMPORAL_ADDRESS ?? 'localhost:7233'}: ${message}\nIs \`npm start\` (or your Temporal server) running?`);
      process.exit(3);
    }
    console.error(message);
    process.exit(1);
  },
);
