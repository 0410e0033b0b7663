// `browserai-temporal inbox`: the inbox (src/inbox) on its own port, connected to Temporal as every
// other command is; configured from the environment (inbox/config.ts). Runs until a signal.
import { parseArgs } from 'node:util';
import { inboxOptionsFromEnv, startInbox } from '../inbox';
import type { BrowserTasks } from '../starters/tasks';

/** Parses the arguments and the environment; throws (a usage or configuration error) before anything connects. */
export function inboxArguments(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: { host: { type: 'string' }, port: { type: 'string' } },
    allowPositionals: false,
  });
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65_535))
    throw new TypeError(`--port takes a port number (got ${values.port})`);
  return { host: values.host, port, options: inboxOptionsFromEnv(process.env) };
}

export async function inboxCommand(tasks: BrowserTasks, args: ReturnType<typeof inboxArguments>): Promise<number> {
  const inbox = await startInbox({
    ...args.options,
    client: tasks.client,
    taskQueue: tasks.taskQueue,
    host: args.host,
    port: args.port,
  });
  const paths = [
    args.options.twilio ? '/twilio' : '',
    args.options.mailgun ? '/mailgun/mime' : '',
    args.options.secrets ? '/messages' : '',
  ].filter(Boolean);
  console.error(
    `browserai-temporal inbox listening on ${inbox.url} (${paths.join(', ')}; task queue ${tasks.taskQueue})`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await inbox.close();
  return 0;
}
