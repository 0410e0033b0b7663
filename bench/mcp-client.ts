// The bar to beat, run for real against the same emulator: BrowserAI's public MCP client
// (brightdata/browserai-mcp, utils.js `poll_task_result` and `send_session_instructions`).
// It creates the task, asks `GET /tasks/{id}` at once and then 3 s after every answer, with no
// backoff and no estimate, until the status is `finalized`, `awaiting`, `stopped` or `failed`;
// its result is the `result` field of that last answer, so it never calls `GET /results`. A
// one-time code is sent as the MCP user would once the client returned `awaiting`: an append,
// 1 s of waiting (the client's own allowance for the stale `awaiting`), then the same loop.
import type { BrowserAIEmulator } from '../src/emulator';
import type { BrowserTaskInput } from '../src/contract/input';
import { errorText, sleep } from '../dev/async';

export const MCP_POLL_MS = 3_000;
const MCP_WAIT_AFTER_APPEND_MS = 1_000;
const MCP_STOP_STATUSES = new Set(['finalized', 'awaiting', 'stopped', 'failed']);

export interface McpTask {
  key: string;
  /** From the scenario's first start, like its workflow twin. */
  startAtMs: number;
  /** The same instructions, type and location as the twin, in the MCP client's own project. */
  input: BrowserTaskInput;
  code?: string;
  codeInstruction?: string;
}

export interface McpRecord {
  task: McpTask;
  executionId?: string;
  createdAt?: number;
  /** Every request this client sent: create, polls and the code's append. */
  requests: number;
  polls: number;
  /** When the client got the answer showing the task ended (or, without a code, `awaiting`). */
  endSeenAt?: number;
  /** The emulator's recorded end of the task. */
  endedAt?: number;
  finalStatus?: string;
  /** It returned on `awaiting` after its code was sent: the real client stops there too. */
  returnedOnStaleAwaiting?: boolean;
  error?: string;
}

/** Runs every MCP task to its end (or `stopAt`), each in its own loop as separate MCP calls would. */
export async function runMcpTasks(
  tasks: McpTask[],
  emulator: BrowserAIEmulator,
  firstStartAt: number,
  stopAt: number,
): Promise<McpRecord[]> {
  const api = apiCaller(emulator.baseUrl, emulator.apiToken);
  const records = tasks.map((task): McpRecord => ({ task, requests: 0, polls: 0 }));
  await Promise.all(
    records.map(async (record) => {
      await sleep(firstStartAt + record.task.startAtMs - Date.now());
      try {
        await runOne(record, api, stopAt);
      } catch (err) {
        record.error = errorText(err);
      }
      if (record.executionId) record.endedAt = emulator.task(record.executionId)?.endedAt ?? undefined;
    }),
  );
  return records;
}

async function runOne(record: McpRecord, api: ApiCaller, stopAt: number): Promise<void> {
  const { instructions, type, project, geoLocation } = record.task.input;
  record.requests++;
  record.createdAt = Date.now();
  const created = await api('POST', '/tasks', { instructions, type, project, geoLocation });
  record.executionId = String(created.executionId);
  let status = await pollUntilStop(record, api, stopAt);
  if (status === 'awaiting' && record.task.code) {
    record.requests++;
    const code = [{ action: record.task.codeInstruction!.replace('{code}', record.task.code) }];
    await api('POST', `/tasks/${record.executionId}/instructions`, { geoLocation, instructions: code, project, type });
    await sleep(MCP_WAIT_AFTER_APPEND_MS);
    record.endSeenAt = undefined; // that was the code form, not the end
    status = await pollUntilStop(record, api, stopAt);
    record.returnedOnStaleAwaiting = status === 'awaiting';
  }
  record.finalStatus = status;
}

async function pollUntilStop(record: McpRecord, api: ApiCaller, stopAt: number): Promise<string | undefined> {
  while (Date.now() < stopAt) {
    record.requests++;
    record.polls++;
    const answer = await api('GET', `/tasks/${record.executionId}`);
    const status = String(answer.status ?? '').toLowerCase();
    if (MCP_STOP_STATUSES.has(status)) {
      record.endSeenAt = Date.now();
      return status;
    }
    await sleep(MCP_POLL_MS);
  }
  return undefined;
}

type ApiCaller = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<Record<string, unknown>>;

/** Plain fetch, as the MCP client does, with its headers. */
function apiCaller(baseUrl: string, token: string): ApiCaller {
  const headers = {
    authorization: `apikey ${token}`,
    'content-type': 'application/json',
    'user-agent': 'browserai-mcp-twin/bench',
  };
  return async (method, path, body) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 200)}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
}
