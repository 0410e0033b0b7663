// The MCP server: BrowserAI tasks as MCP tools, each backed by a durable `browserTask` (or
// `runSavedTask`) workflow through the client API (starters/tasks.ts). One factory serves both
// protocol generations: 2025-11-25 clients (an instance per session, or per stdio connection) and
// 2026-07-28 clients (an instance per request, stateless). An instance holds nothing a later request
// needs: tasks live in Temporal, and a code request's state travels sealed with the client.
import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  Server,
  type McpServerFactory,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../contract/version';
import type { BrowserTasks } from '../starters/tasks';
import { codeStateCodec } from './code-requests';
import { resolveFence, type McpFenceOptions } from './fence';
import { McpTasks, TASKS_EXTENSION, requireTasksExtension } from './mcp-tasks';
import { TOOL_DESCRIPTIONS, ToolCalls } from './tool-calls';
import { loadToolSchemas } from './tool-schemas';

/** Options of the MCP server (`createMcpServer`, `startMcpHttpServer`, `serveMcpStdio`). */
export interface McpServerOptions {
  /** The task client (`BrowserTasks.fromEnv()`): its namespace and task queue are the server's. */
  tasks: BrowserTasks;
  /** What MCP clients may set, and the prefix of the workflow IDs they reach; everything closed by default. */
  fence?: McpFenceOptions;
  /** How often a waiting call reads the task's progress for notifications; default 2 s. */
  progressIntervalMs?: number;
  /** How long a 2025-11-25 session waits for the user to answer a code request; default 10 min. */
  elicitationTimeoutMs?: number;
  /**
   * The key that seals code requests' `requestState` (HMAC-SHA256), at least 32 bytes: the same on every
   * instance behind one address (`BROWSERAI_MCP_STATE_KEY`). Default: a random key, good for this process only.
   */
  stateKey?: string | Uint8Array;
  /** The polling interval MCP tasks suggest to clients (`pollIntervalMs`); default 5 s. */
  taskPollIntervalMs?: number;
  /** Diagnostics, one line each (the CLI writes them to stderr); never a code. Default: none. */
  log?: (line: string) => void;
}

const INSTRUCTIONS =
  'BrowserAI browser tasks run as durable Temporal workflows: a task outlives this session. Keep the workflowId ' +
  'a tool returns; get_task resumes the task from any session. One-time codes are typed once.';

/** How long clients may keep the tool list: it changes only with a new release of this package. */
const TOOLS_CACHE_MS = 60 * 60_000;

const TaskIdParams = z.looseObject({ taskId: z.string() });

/** What the serving entries need: the factory of instances, and what the instances share. */
export interface McpServing {
  /**
   * The server factory both serving entries call (`createMcpHandler` per HTTP request, `serveStdio`
   * per connection, the HTTP server per 2025 session).
   */
  factory: McpServerFactory;
  /** The Tasks extension over the task client (task notifications use it too). */
  mcpTasks: McpTasks;
  /** How often waits and task notifications read a task's progress. */
  progressIntervalMs: number;
  /** Diagnostics, one line each (never a code). */
  log: (line: string) => void;
}

/** Resolves the options once (fence, schemas, the state key) for every instance to share. */
export function mcpServing(options: McpServerOptions): McpServing {
  const fence = resolveFence(options.fence);
  const log = options.log ?? (() => undefined);
  const schemas = loadToolSchemas();
  const tools: Tool[] = Object.keys(TOOL_DESCRIPTIONS).map((name) => {
    const toolSchemas = schemas.get(name);
    if (!toolSchemas) throw new Error(`schemas/contract.json has no mcp tool "${name}": run npm run schemas`);
    return { name, description: TOOL_DESCRIPTIONS[name], ...toolSchemas } as Tool;
  });
  const codec = codeStateCodec(options.stateKey);
  const mcpTasks = new McpTasks(options.tasks, fence, options.taskPollIntervalMs ?? 5_000, log);
  const progressIntervalMs = options.progressIntervalMs ?? 2_000;
  const shared = { tasks: options.tasks, fence, mcpTasks, codec, progressIntervalMs, log };

  const factory = () => {
    const server = new Server(
      { name: PACKAGE_NAME, version: PACKAGE_VERSION },
      {
        capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
        instructions: INSTRUCTIONS,
        cacheHints: {
          'tools/list': { ttlMs: TOOLS_CACHE_MS, cacheScope: 'public' },
          'server/discover': { ttlMs: TOOLS_CACHE_MS, cacheScope: 'public' },
        },
        // A tampered, expired or foreign state never reaches a handler: the SDK answers -32602.
        requestState: { verify: codec.verify },
        inputRequired: { roundTimeoutMs: options.elicitationTimeoutMs ?? 600_000, maxRounds: 16 },
      },
    );
    const canElicit = (ctx: ServerContext) => {
      const envelope = ctx.mcpReq.envelope as Record<string, { elicitation?: unknown } | undefined> | undefined;
      const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.getClientCapabilities() ?? undefined;
      return declared?.elicitation !== undefined;
    };
    const calls = new ToolCalls(shared, canElicit);

    server.setRequestHandler('tools/list', () => ({ tools }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const { name, arguments: args = {} } = request.params;
      try {
        return (await calls.call(name, args, ctx)) as never;
      } catch (err) {
        if (ctx.mcpReq.signal.aborted || err instanceof ProtocolError) throw err;
        const message = err instanceof Error ? err.message : String(err);
        log(`mcp: ${name} failed: ${message}`);
        return { isError: true, content: [{ type: 'text', text: `${name} failed: ${message}` }] };
      }
    });
    server.setRequestHandler('tasks/get', { params: TaskIdParams }, async ({ taskId }, ctx) => {
      requireTasksExtension(ctx);
      return { ...(await mcpTasks.detailed(taskId)) };
    });
    // The SDK lifts `inputResponses` out of every request's params into the context.
    server.setRequestHandler('tasks/update', { params: TaskIdParams }, async ({ taskId }, ctx) => {
      requireTasksExtension(ctx);
      await mcpTasks.update(taskId, ctx.mcpReq.inputResponses ?? {});
      return {};
    });
    server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, async ({ taskId }, ctx) => {
      requireTasksExtension(ctx);
      await mcpTasks.cancel(taskId);
      return {};
    });
    return server;
  };
  return { factory, mcpTasks, progressIntervalMs, log };
}

/** One MCP server instance, for a transport of your own (the CLI uses `serveMcpStdio` and `startMcpHttpServer`). */
export function createMcpServer(options: McpServerOptions): Server {
  return mcpServing(options).factory({ era: 'legacy' }) as Server;
}
