// When a task ended, by the emulator's own clock: the reference for "task end → workflow
// closed" and "task end → MCP client noticed".
import type { BrowserAIEmulator, EmulatedTask } from '../../src/emulator';

/** A view that carries the end time, as the emulator may expose it (epoch ms or ISO text). */
type ViewWithEnd = EmulatedTask & { endedAt?: number | string | null };
/** The emulator's task store, whose tasks record `endedAt` (epoch ms). */
type StoreOfTasks = { tasks?: { get?(executionId: string): { endedAt?: number | null } | undefined } };

export function emulatorEndTime(emulator: BrowserAIEmulator, executionId: string): number | undefined {
  const view = emulator.task(executionId) as ViewWithEnd | undefined;
  if (view?.endedAt !== undefined && view.endedAt !== null)
    return typeof view.endedAt === 'number' ? view.endedAt : Date.parse(view.endedAt);
  // Until the public view carries the end time, the task store's own record: exact, and on the
  // same clock as everything else the bench measures (the emulator runs in this process).
  const stored = (emulator as unknown as StoreOfTasks).tasks?.get?.(executionId)?.endedAt;
  return stored ?? undefined;
}
