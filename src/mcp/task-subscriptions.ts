// Task status notifications (Tasks extension): a 2026-07-28 client opens `subscriptions/listen` with
// the task IDs it follows, and gets `notifications/tasks` (the task as tasks/get tells it) whenever
// its status, message or open request changes: BrowserAI's status and progress line, a code request,
// the end. The SDK's own listen streams know only list and resource changes, so these are served
// here. Each stream reads its tasks' descriptions (no billed action) every progress interval, from
// whichever instance the client reached, and ends (gracefully, with the listen result) once every
// task it follows has ended.
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CLIENT_CAPABILITIES_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  SUBSCRIPTION_ID_META_KEY,
} from '@modelcontextprotocol/server';
import { isPlainObject } from '../contract/text';
import { TASKS_EXTENSION, type DetailedMcpTask, type McpTasks } from './mcp-tasks';

const PROTOCOL_VERSION = '2026-07-28';
/** At most this many tasks per stream: a stream reads each task every interval. */
const MAX_TASKS_PER_STREAM = 100;

type ListenRequest = {
  jsonrpc: '2.0';
  id: string | number;
  method: 'subscriptions/listen';
  params: { notifications: { taskIds: unknown[] }; _meta?: Record<string, unknown> };
};

/** A `subscriptions/listen` request that asks for task notifications (served here, not by the SDK). */
export function isTaskSubscription(body: unknown): body is ListenRequest {
  if (!isPlainObject(body) || body.method !== 'subscriptions/listen' || !isPlainObject(body.params)) return false;
  const { notifications } = body.params;
  return isPlainObject(notifications) && Array.isArray(notifications.taskIds) && notifications.taskIds.length > 0;
}

/** The open task notification streams of one HTTP server. */
export class TaskSubscriptions {
  readonly #open = new Set<() => void>();

  constructor(
    private readonly mcpTasks: McpTasks,
    private readonly intervalMs: number,
    private readonly maxStreams: number,
  ) {}

  async serve(req: IncomingMessage, res: ServerResponse, body: ListenRequest): Promise<void> {
    const { id, params } = body;
    const refused = (status: number, code: number, message: string, data?: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, ...(data ? { data } : {}) } }));
    };
    // The checks the SDK's ladder makes of every 2026-07-28 request, for the one it does not see.
    const envelopeVersion = params._meta?.[PROTOCOL_VERSION_META_KEY];
    if (envelopeVersion !== PROTOCOL_VERSION || req.headers['mcp-protocol-version'] !== PROTOCOL_VERSION)
      return refused(400, -32022, `Unsupported protocol version: ${String(envelopeVersion)}`, {
        supported: [PROTOCOL_VERSION],
        requested: envelopeVersion,
      });
    if (req.headers['mcp-method'] !== 'subscriptions/listen')
      return refused(400, -32020, 'Header mismatch: Mcp-Method must be subscriptions/listen');
    const capabilities = params._meta?.[CLIENT_CAPABILITIES_META_KEY];
    if (!isPlainObject(capabilities) || !isPlainObject(capabilities.extensions?.[TASKS_EXTENSION as never]))
      return refused(400, -32021, 'Missing required client capability', {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    if (this.#open.size >= this.maxStreams) return refused(200, -32603, 'Subscription limit reached');

    // Only this server's tasks, and only those that exist: others are left out of the acknowledgement.
    const wanted = [...new Set(params.notifications.taskIds.filter((t) => typeof t === 'string'))];
    const first = new Map<string, DetailedMcpTask>();
    for (const taskId of wanted.slice(0, MAX_TASKS_PER_STREAM)) {
      const task = await this.mcpTasks.detailed(taskId).catch((err: unknown) => {
        if (err instanceof ProtocolError) return undefined;
        throw err;
      });
      if (task) first.set(taskId, task);
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
    });
    const stamp = { [SUBSCRIPTION_ID_META_KEY]: id };
    const write = (message: unknown) => res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    const notify = (method: string, notifyParams: Record<string, unknown>) =>
      write({ jsonrpc: '2.0', method, params: { ...notifyParams, _meta: stamp } });
    notify('notifications/subscriptions/acknowledged', { notifications: { taskIds: [...first.keys()] } });

    const seen = new Map<string, string>();
    const following = new Set(first.keys());
    let timer: NodeJS.Timeout | undefined;
    let ended = false;
    const end = (graceful: boolean) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      this.#open.delete(stop);
      if (graceful) write({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: stamp } });
      res.end();
    };
    const stop = () => end(true);
    this.#open.add(stop);
    res.on('close', () => end(false));

    const tell = (task: DetailedMcpTask) => {
      const fingerprint = JSON.stringify([task.status, task.statusMessage, Object.keys(task.inputRequests ?? {})]);
      if (seen.get(task.taskId) !== fingerprint) {
        seen.set(task.taskId, fingerprint);
        notify('notifications/tasks', { ...task });
      }
      if (task.status !== 'working' && task.status !== 'input_required') following.delete(task.taskId);
    };
    for (const task of first.values()) tell(task);
    const round = async () => {
      for (const taskId of following) {
        if (ended) return;
        const task = await this.mcpTasks.detailed(taskId).catch(() => undefined);
        if (task) tell(task);
      }
      if (following.size === 0) return end(true);
      if (!ended) timer = setTimeout(() => void round(), this.intervalMs);
    };
    if (following.size === 0) end(true);
    else timer = setTimeout(() => void round(), this.intervalMs);
  }

  /** Ends every stream (gracefully: each gets its listen result). */
  close(): void {
    for (const stop of [...this.#open]) stop();
  }
}
