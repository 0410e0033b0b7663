// The fleet scenario's last step: a batch file run by the CLI (`batch run`) under a terminal, on the
// fleet's limited workers, killed once a tenth of the items are done and run again. Then the results
// file, each item's creates as the emulator saw them, the emulator's peak and the limiter at the end.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sleep } from '../../dev/async';
import { onPseudoTerminal } from '../../dev/pseudo-terminal';
import { workerEnvironment } from '../../dev/worker-child';
import type { LimiterState } from '../../src/contract/fleet-messages';
import { BrowserTasks } from '../../src/starters/tasks';
import type { ScenarioSettings } from '../config';
import { fmt, fmtMs, log } from '../format';
import { taskInput } from '../plan';
import { row } from '../report/markdown';
import type { BenchStack } from '../stack';

const CLI = resolve(__dirname, '../../src/cli/main.js');
const PROJECT = 'fleet-cli-batch';

/** Runs `batchItems` items of `batchDurationMs`, `limit` at a time, on the workers of `taskQueue`. */
export async function runCliBatch(stack: BenchStack, settings: ScenarioSettings<'fleet'>, taskQueue: string) {
  const { batchItems: items, batchDurationMs: durationMs, limit: concurrency } = settings;
  const name = `bench-fleet-batch-${items}`;
  const [file, out] = [`${name}.jsonl`, `${name}-results.jsonl`].map((base) => join(tmpdir(), base));
  const ids = Array.from({ length: items }, (_, i) => `item-${String(i).padStart(5, '0')}`);
  const input = (id: string) =>
    taskInput(stack, { text: `Batch ${id}: read a price list`, durationMs, project: PROJECT });
  writeFileSync(file, ids.map((id) => `${JSON.stringify({ id, ...input(id) })}\n`).join(''));
  rmSync(out, { force: true }); // an earlier run's results must not pass for this one's
  const args = ['batch', 'run', file, '--name', name, '--concurrency', String(concurrency), '--out', out];
  const tasks = new BrowserTasks(stack.temporal.client, taskQueue);
  stack.emulator.resetPeakRunning();
  const startedAt = Date.now();
  log(`fleet: ${items}-item batch from the CLI (${concurrency} at a time)`);
  const first = underTerminal(stack, taskQueue, args);
  for (let done = 0; done < items / 10; await sleep(2_000)) {
    const state = await tasks.batchState(name).catch(() => undefined);
    done = state ? state.completed + state.failed : 0;
    if (first.child.exitCode !== null) throw new Error(`batch run exited early:\n${first.output().slice(-2_000)}`);
  }
  const killed = { at: Date.now() - startedAt, state: await tasks.batchState(name) };
  // The CLI itself, as a crash would stop it (and `script` around it: its command line names the file too).
  if (spawnSync('pkill', ['-KILL', '-f', file]).status !== 0)
    throw new Error(`no batch run process to kill:\n${first.output().slice(-2_000)}`);
  await once(first.child, 'exit');
  log('fleet: the batch CLI SIGKILLed; the same command again');
  const second = underTerminal(stack, taskQueue, args);
  const [exitCode] = (await once(second.child, 'exit')) as [number | null];
  const wallMs = Date.now() - startedAt;
  const outcomes = readFileSync(out, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { id: string; status: string });
  if (exitCode !== 0) log(`fleet: batch run exited ${exitCode}:\n${second.output().slice(-3_000)}`);
  // Each item's instruction names it.
  const creates = new Map<string, number>();
  for (const { instructions } of stack.emulator.listTasks().filter((t) => t.project === PROJECT))
    creates.set(instructions[0]!.action, (creates.get(instructions[0]!.action) ?? 0) + 1);
  return {
    exitCode,
    wallMs,
    killed,
    inOrder: outcomes.length === ids.length && outcomes.every((o, i) => o.id === ids[i]),
    completed: outcomes.filter((o) => o.status === 'completed').length,
    outcomeLines: outcomes.length,
    items,
    /** The batch's own count: the throughput does not depend on the results file. */
    batchCompleted: (await tasks.batchState(name)).completed,
    createdTwice: [...creates.values()].filter((n) => n > 1).length,
    created: creates.size,
    peak: stack.emulator.peakRunning(),
    bars: [lastBar(first.output()), lastBar(second.output())],
    history: (await stack.temporal.client.workflow.getHandle(name).describe()).historyLength,
  };
}

/** The CLI on a pseudo-terminal (`script`), so it draws its bar as a person would see it. */
function underTerminal(stack: BenchStack, taskQueue: string, args: string[]) {
  const child = spawn(...onPseudoTerminal([process.execPath, CLI, ...args]), {
    env: workerEnvironment({
      temporalAddress: stack.temporal.address,
      taskQueue,
      browserAIBaseUrl: stack.emulator.baseUrl,
      browserAIToken: stack.emulator.apiToken,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => (output += chunk));
  return { child, output: () => output };
}

/** The last state of the bar the CLI redrew in place. */
function lastBar(output: string): string | undefined {
  return output
    .split(/\r|\n/)
    .map((line) => line.replaceAll('\u001b[K', '').trim())
    .filter((line) => line.startsWith('['))
    .at(-1);
}

/** The batch's rows of the fleet table and its setup line. */
export function cliBatchReport(b: Awaited<ReturnType<typeof runCliBatch>>, limit: number, end?: LimiterState) {
  // prettier-ignore
  const rows = [
    row(`A batch of one-second items from the CLI, killed after ${b.killed.state.completed} done and run again: results file`, 'one line per item, in input order, all completed',
      `${b.outcomeLines} lines, ${b.inOrder ? 'in input order' : '**not in input order**'}, ${b.completed} completed; exit code ${b.exitCode}`, b.inOrder && b.completed === b.items && b.exitCode === 0),
    row('… items whose BrowserAI task was created more than once', '0', `${b.createdTwice} of ${b.created}`, b.createdTwice === 0),
    row('… most sessions running at once (the emulator’s peak counter)', `≤ ${limit}`, String(b.peak), b.peak <= limit),
    row('… slots held at the end (the limiter’s state)', '0', end ? `${end.held} held, ${end.waiting} waiting` : 'n/a', end?.held === 0 && end.waiting === 0),
    row('… throughput: items completed per second, first start to the second CLI’s exit', `— (at most ${fmt(limit)}/s at this limit)`, `${fmt(b.batchCompleted / (b.wallMs / 1000), 1)}/s over ${fmtMs(b.wallMs)}; the batch's history ${b.history} events`),
  ];
  // prettier-ignore
  const setup = `- **CLI batch:** then \`batch run FILE.jsonl --concurrency ${limit} --out results.jsonl\` on ${b.items} one-second items (a project of their own) on a pseudo-terminal, on the same workers; SIGKILLed at ${fmtMs(b.killed.at)} (${b.killed.state.added} items sent, ${b.killed.state.completed} done) and started again. Its bar at the kill: \`${b.bars[0] ?? 'none'}\`; at the end: \`${b.bars[1] ?? 'none'}\`.`;
  return { rows, setup };
}
