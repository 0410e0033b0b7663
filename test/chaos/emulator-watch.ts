// Watching BrowserAI's side, as a user or an operator would see it: the emulator's request log
// (to act right as a create or an append arrives) and its tasks, grouped by workflow.
import type { BrowserAIEmulator, EmulatedTask, RecordedRequest } from '../../src/emulator';
import { workflowIdInInstruction } from './plan';

const APPEND_PATH = /^\/tasks\/[^/]+\/instructions$/;

export const isCreate = (request: RecordedRequest) => request.method === 'POST' && request.path === '/tasks';
export const isAppend = (request: RecordedRequest) => request.method === 'POST' && APPEND_PATH.test(request.path);

/** The workflow a `POST /tasks` was sent for, read from its first instruction. */
export function workflowIdOfCreate(request: RecordedRequest): string | undefined {
  const body = request.body as { instructions?: Array<{ action?: unknown }> } | undefined;
  const action = body?.instructions?.[0]?.action;
  return typeof action === 'string' ? workflowIdInInstruction(action) : undefined;
}

export function workflowIdOfTask(task: EmulatedTask): string | undefined {
  return workflowIdInInstruction(task.instructions[0]?.action);
}

interface Waiter {
  match: (request: RecordedRequest) => boolean;
  resolve: (request: RecordedRequest | undefined) => void;
  timer: NodeJS.Timeout;
}

/**
 * Reads new entries of the emulator's request log every 10 ms and hands them to whoever waits
 * for one: the killer (kill right as a create or an append arrives) and early cancels.
 */
export class RequestWatcher {
  private cursor = 0;
  private readonly waiters = new Set<Waiter>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly emulator: BrowserAIEmulator) {
    this.cursor = emulator.requests.length;
    this.timer = setInterval(() => this.tick(), 10);
  }

  /** The next request that matches, or undefined after `timeoutMs` (or when the watcher stops). */
  next(match: (request: RecordedRequest) => boolean, timeoutMs: number): Promise<RecordedRequest | undefined> {
    return new Promise((resolve) => {
      const waiter: Waiter = { match, resolve, timer: setTimeout(() => this.settle(waiter, undefined), timeoutMs) };
      this.waiters.add(waiter);
    });
  }

  stop(): void {
    clearInterval(this.timer);
    for (const waiter of [...this.waiters]) this.settle(waiter, undefined);
  }

  private tick(): void {
    const requests = this.emulator.requests;
    if (requests.length < this.cursor) this.cursor = 0; // the log was reset
    while (this.cursor < requests.length) {
      const request = requests[this.cursor++]!;
      for (const waiter of [...this.waiters]) if (waiter.match(request)) this.settle(waiter, request);
    }
  }

  private settle(waiter: Waiter, request: RecordedRequest | undefined): void {
    if (!this.waiters.delete(waiter)) return;
    clearTimeout(waiter.timer);
    waiter.resolve(request);
  }
}

/** The emulator's tasks grouped by workflow, refreshed twice a second (one listing serves every waiting workflow). */
export class TaskView {
  private byWorkflow = new Map<string, EmulatedTask[]>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly emulator: BrowserAIEmulator) {
    this.refresh();
    this.timer = setInterval(() => this.refresh(), 500);
  }

  tasksOf(workflowId: string): EmulatedTask[] {
    return this.byWorkflow.get(workflowId) ?? [];
  }

  refresh(): Map<string, EmulatedTask[]> {
    const grouped = new Map<string, EmulatedTask[]>();
    for (const task of this.emulator.listTasks()) {
      const workflowId = workflowIdOfTask(task);
      if (!workflowId) continue;
      grouped.set(workflowId, [...(grouped.get(workflowId) ?? []), task]);
    }
    this.byWorkflow = grouped;
    return grouped;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
