// Where the worker's memory goes at its largest RSS, from the memory probe (dev/memory-probe.ts): the
// main thread's heap (activities, the SDK's bookkeeping), the workflow thread's heap (every cached
// workflow), what V8 holds outside them, and the rest (Core, malloc, stacks, code).
import type { MemoryProbeReport } from '../../dev/memory-probe';
import { fmt } from '../format';

const MB = 1024 * 1024;

/** One answer of the probe and when it came. */
export interface TimedProbe {
  at: number;
  report: MemoryProbeReport;
}

export function memoryBreakdown(probes: TimedProbe[], tasks: number): string[] {
  const probe = probes.reduce<MemoryProbeReport | undefined>(
    (peak, { report }) => (peak && peak.rss >= report.rss ? peak : report),
    undefined,
  );
  if (!probe) return ['### Where the memory goes', '', 'The memory probe did not answer during the run.'];
  const threadsUsed = probe.threads.reduce((sum, t) => sum + t.used, 0);
  const threadsTotal = probe.threads.reduce((sum, t) => sum + t.total, 0);
  const threadsExternal = probe.threads.reduce((sum, t) => sum + t.external, 0);
  const v8Total = probe.main.total + threadsTotal + probe.main.external + threadsExternal;
  const rest = probe.rssAnon - v8Total;
  const row = (what: string, bytes: number, note: string) =>
    `| ${what} | ${fmt(bytes / MB, 0)} MB | ${fmt(bytes / tasks / 1024, 1)} KB | ${note} |`;
  const spaces = Object.entries(probe.main.spaces)
    .filter(([, used]) => used > 4 * MB)
    .map(([space, used]) => `${space} ${fmt(used / MB, 0)} MB`)
    .join(', ');
  return [
    '### Where the memory goes',
    '',
    `At the largest RSS the probe saw (${fmt(probe.rss / MB, 0)} MB; asked every 10 s), per task = over all ${tasks} tasks (the idle worker included):`,
    '',
    '| Part | Size | Per task | What it is |',
    '|---|---|---|---|',
    row(
      'Main thread JS heap, allocated',
      probe.main.total,
      `used ${fmt(probe.main.used / MB, 0)} MB (${spaces}): activities, the SDK's bookkeeping`,
    ),
    row(
      'Workflow thread JS heap, allocated',
      threadsTotal,
      `used ${fmt(threadsUsed / MB, 0)} MB in ${probe.threads.length} thread(s): every cached workflow`,
    ),
    row(
      'Outside the JS heaps (V8 external)',
      probe.main.external + threadsExternal,
      `buffers (${fmt(probe.main.arrayBuffers / MB, 0)} MB array buffers on the main thread)`,
    ),
    row(
      'Rest of anonymous memory',
      rest,
      "Core (Rust: workflow state machines, gRPC), malloc's free lists, stacks, compiled code",
    ),
    row('File-backed pages', probe.rssFile, "the node binary and Core's library, mapped"),
  ];
}
