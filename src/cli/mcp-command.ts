// `browserai-temporal mcp`: the MCP server (src/mcp) over stdio (default) or Streamable HTTP,
// connected to Temporal as every other command is. Runs until stdin closes (stdio) or a signal.
// stdout belongs to the MCP protocol under stdio: everything else goes to stderr.
import { parseArgs } from 'node:util';
import { serveMcpStdio, startMcpHttpServer, type McpServerOptions } from '../mcp';
import { allowancesFromFlags, MCP_FENCE_FLAG_OPTIONS } from '../mcp/fence';
import type { BrowserTasks } from '../starters/tasks';

const OPTIONS = {
  http: { type: 'boolean' },
  host: { type: 'string' },
  port: { type: 'string' },
  'allow-origin': { type: 'string', multiple: true },
  'max-sessions': { type: 'string' },
  'id-prefix': { type: 'string' },
} as const;

/** Parses the arguments; throws (the CLI reports a usage error) before anything connects. */
export function mcpArguments(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: { ...OPTIONS, ...MCP_FENCE_FLAG_OPTIONS },
    allowPositionals: false,
  });
  const whole = (name: string, text: string | undefined) => {
    if (text === undefined) return undefined;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0) throw new TypeError(`--${name} takes a whole number (got ${text})`);
    return n;
  };
  return {
    http: values.http ?? false,
    host: values.host,
    port: whole('port', values.port),
    maxSessions: whole('max-sessions', values['max-sessions']),
    allowedOrigins: values['allow-origin'],
    fence: {
      idPrefix: (values['id-prefix'] as string | undefined) ?? (process.env.BROWSERAI_MCP_ID_PREFIX || undefined),
      ...allowancesFromFlags(values),
    },
  };
}

export async function mcpCommand(tasks: BrowserTasks, args: ReturnType<typeof mcpArguments>): Promise<number> {
  const log = (line: string) => console.error(line);
  const progressMs = Number(process.env.BROWSERAI_MCP_PROGRESS_MS);
  const taskPollMs = Number(process.env.BROWSERAI_MCP_TASK_POLL_MS);
  const options: McpServerOptions = {
    tasks,
    fence: args.fence,
    log,
    // Shared by every instance behind one address, so that any of them takes a code request's answer.
    stateKey: process.env.BROWSERAI_MCP_STATE_KEY || undefined,
    ...(progressMs > 0 ? { progressIntervalMs: progressMs } : {}),
    ...(taskPollMs > 0 ? { taskPollIntervalMs: taskPollMs } : {}),
  };
  if (!args.http) {
    const server = serveMcpStdio(options);
    log(`browserai-temporal MCP server on stdio (task queue ${tasks.taskQueue})`);
    await server.closed;
    await server.close();
    return 0;
  }
  if (!options.stateKey)
    log(
      'mcp: BROWSERAI_MCP_STATE_KEY is not set: code requests answered through another instance of this server ' +
        'are refused. Behind a load balancer, give every instance the same key (openssl rand -base64 32).',
    );
  const server = await startMcpHttpServer({
    ...options,
    host: args.host,
    port: args.port,
    maxSessions: args.maxSessions,
    allowedOrigins: args.allowedOrigins,
    token: process.env.BROWSERAI_MCP_TOKEN,
  });
  log(`browserai-temporal MCP server listening on ${server.url} (task queue ${tasks.taskQueue})`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return 0;
}
