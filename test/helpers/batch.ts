// What the batch tests share: items that name themselves to the emulator, and our processes
// (the CLI, a worker) run against a test's Temporal and emulator.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before } from 'node:test';
import { onPseudoTerminal } from '../../dev/pseudo-terminal';
import type { BatchItem } from '../../src/contract/batch-messages';
import { startStack, taskInput, workflowBundleFile, type Stack } from './stack';

/** The built CLI. */
export const CLI = resolve(__dirname, '../../src/cli/main.js');

/** Our processes still running, killed at the end of a file. */
const processes = new Set<ChildProcess>();

/**
 * A file's stack (short emulator tasks), a bundle file for worker processes and a temporary
 * directory, set up before its tests and removed after; with the helpers bound to them.
 */
export function batchTestKit() {
  const kit = {
    stack: undefined as unknown as Stack,
    bundleFile: '',
    dir: mkdtempSync(join(tmpdir(), 'batch-test-')),
    spawnProcess: (args: string[], taskQueue: string, options?: { terminal?: boolean }) =>
      spawnProcess(kit.stack, kit.bundleFile, args, taskQueue, options),
    createsByItem: (project: string) => createsByItem(kit.stack, project),
  };
  before(async () => {
    [kit.stack, kit.bundleFile] = await Promise.all([
      startStack({ emulator: { defaultDurationMs: 500, queueMs: 50 } }),
      workflowBundleFile(),
    ]);
  });
  after(async () => {
    for (const child of processes) child.kill('SIGKILL');
    await kit.stack?.stop();
    rmSync(kit.dir, { recursive: true, force: true });
  });
  return kit;
}

/**
 * A process of ours (the CLI, a worker) against the stack's Temporal and emulator; its output
 * collected. `terminal`: run on a pseudo-terminal (util-linux `script`), as a person's shell would.
 */
function spawnProcess(
  stack: Stack,
  bundleFile: string,
  args: string[],
  taskQueue: string,
  { terminal = false } = {},
): ChildProcess & { output: () => string } {
  const [file, argv] = terminal ? onPseudoTerminal([process.execPath, ...args]) : [process.execPath, args];
  const child = spawn(file, argv, {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: stack.env.address,
      TEMPORAL_NAMESPACE: stack.env.namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      BROWSERAI_BASE_URL: stack.emulator.baseUrl,
      BROWSERAI_API_TOKEN: stack.emulator.apiToken,
      WORKER_WORKFLOW_BUNDLE: bundleFile,
      WORKER_SHUTDOWN_GRACE_MS: '1000',
      BROWSERAI_BATCH_PROGRESS_MS: '500',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  processes.add(child);
  child.once('exit', () => processes.delete(child));
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return Object.assign(child, { output: () => output });
}

export async function exitCode(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

/** `count` items of a project of their own; each instruction names its item, so the emulator shows which ran. */
export function itemsOf(project: string, count: number, marker = (_index: number) => ''): BatchItem[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `item-${index + 1}`,
    input: taskInput({
      project,
      instructions: [{ action: `Open https://example.com/${project}/${index + 1} ${marker(index)}` }],
    }),
  }));
}

/** How many BrowserAI tasks each item of the project created, by item number. */
function createsByItem(stack: Stack, project: string): Map<number, number> {
  const counts = new Map<number, number>();
  for (const task of stack.emulator.listTasks().filter((t) => t.project === project)) {
    const item = Number(/\/(\d+)\b/.exec(task.instructions[0]!.action)![1]);
    counts.set(item, (counts.get(item) ?? 0) + 1);
  }
  return counts;
}
