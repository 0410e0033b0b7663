// The bar to beat, run for real against the same emulator by `runTasks`: BrowserAI's public MCP
// client (brightdata/browserai-mcp, utils.js `poll_task_result` and `send_session_instructions`),
// its loop as docs/benchmarks-method.md#the-mcp-clients-loop describes it. A twin's facts are the
// client's own view: `closeTime` is when it had the answer showing the end, `status` that answer's.
import type { BrowserAIEmulator } from '../src/emulator';
import { DEFAULTS } from '../src/contract/input';
import { errorText, sleep } from '../dev/async';
import type { TaskFacts, TaskRecord } from './task';

export const MCP_POLL_MS = 3_000;
/** The client's own allowance for the stale `awaiting` right after an append. */
const MCP_WAIT_AFTER_APPEND_MS = 1_000;
const MCP_STOP_STATUSES = new Set(['finalized', 'awaiting', 'stopped', 'failed']);

/** Each started twin in a loop of its own, as separate MCP calls would be, until its end or `stopAt`. */
export class McpClient {
  /** Twins whose loop has returned: the run's "closed". */
  readonly closed = new Set<string>();
  readonly loops: Promise<void>[] = [];

  constructor(
    private readonly emulator: BrowserAIEmulator,
    private readonly stopAt: number,
  ) {}

  /** `POST /tasks`, then the loop runs on its own; resolves with the execution ID. */
  async start(record: TaskRecord): Promise<string> {
    const facts: TaskFacts = (record.facts = { requests: 1 });
    const { instructions, type, project, geoLocation } = record.plan.input;
    const created = await this.call('POST', '/tasks', { instructions, type, project, geoLocation });
    const executionId = String(created.executionId);
    this.loops.push(this.loop(record, facts, executionId));
    return executionId;
  }

  private async loop(record: TaskRecord, facts: TaskFacts, executionId: string): Promise<void> {
    try {
      let status = await this.pollUntilStop(facts, executionId);
      const code = record.plan.code;
      if (status === 'awaiting' && code) {
        // As the MCP user would once the client returned `awaiting`: an append, 1 s, the same loop.
        facts.requests!++;
        record.codeSentAt = Date.now();
        const { geoLocation, project, type } = record.plan.input;
        const instructions = [{ action: DEFAULTS.codeInstructionTemplate.replace('{code}', code.value) }];
        await this.call('POST', `/tasks/${executionId}/instructions`, { geoLocation, instructions, project, type });
        await sleep(MCP_WAIT_AFTER_APPEND_MS);
        facts.closeTime = undefined; // that was the code form, not the end
        status = await this.pollUntilStop(facts, executionId);
      }
      facts.status = status;
    } catch (err) {
      facts.failure = errorText(err);
    }
    facts.endedAt = this.emulator.task(executionId)?.endedAt ?? undefined;
    if (facts.endedAt && record.startCalledAt !== undefined)
      facts.taskMinutes = (facts.endedAt - record.startCalledAt) / 60_000;
    this.closed.add(record.plan.workflowId);
  }

  /** `GET /tasks/{id}` at once and 3 s after every answer, no backoff, no estimate. */
  private async pollUntilStop(facts: TaskFacts, executionId: string) {
    while (Date.now() < this.stopAt) {
      facts.requests!++;
      const answer = await this.call('GET', `/tasks/${executionId}`);
      const status = String(answer.status ?? '').toLowerCase();
      if (MCP_STOP_STATUSES.has(status)) {
        facts.closeTime = Date.now();
        return status;
      }
      await sleep(MCP_POLL_MS);
    }
  }

  /** Plain fetch, as the MCP client does, with its headers. */
  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
    const response = await fetch(`${this.emulator.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `apikey ${this.emulator.apiToken}`,
        'content-type': 'application/json',
        'user-agent': 'browserai-mcp-twin/bench',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 200)}`);
    return JSON.parse(text) as Record<string, unknown>;
  }
}
