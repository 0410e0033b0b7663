// Where the worker's memory goes at its largest RSS, from the memory probe (dev/memory-probe.ts): the
// main thread's heap (activities, the SDK's bookkeeping), the workflow thread's heap (every cached
// workflow), what V8 holds outside them, and the rest (Core, malloc, stacks, code).
import type { MemoryProbeReport } from '../../dev/memory-probe';
import { fmt } from '../format';
import { sum } from '../statistics';

const MB = 1024 * 1024;

type Probe = { report: MemoryProbeReport };

/** The probe's answer at the largest RSS it saw. */
const largest = (probes: Probe[]) => probes.map((p) => p.report).sort((a, b) => b.rss - a.rss)[0];

/** The parts of `probe`'s RSS: what, bytes, and what it holds. */
function parts(probe: MemoryProbeReport): Array<[string, number, string]> {
  const { main, threads } = probe;
  const whereThreads = threads.length
    ? `used ${fmt(sum(threads.map((t) => t.used)) / MB, 0)} MB in ${threads.length} thread(s): every cached workflow`
    : `not available from this Node (${process.version}): counted in the rest`;
  const threadsTotal = sum(threads.map((t) => t.total));
  const external = main.external + sum(threads.map((t) => t.external));
  const spaces = Object.entries(main.spaces)
    .filter(([, used]) => used > 4 * MB)
    .map(([space, used]) => `${space} ${fmt(used / MB, 0)} MB`)
    .join(', ');
  // prettier-ignore
  return [
    ['Main thread JS heap, allocated', main.total, `used ${fmt(main.used / MB, 0)} MB (${spaces}): activities, the SDK's bookkeeping`],
    ['Workflow thread JS heap, allocated', threadsTotal, whereThreads],
    ['Outside the JS heaps (V8 external)', external, `buffers (${fmt(main.arrayBuffers / MB, 0)} MB array buffers on the main thread)`],
    ['Rest of anonymous memory', probe.rssAnon - (main.total + threadsTotal + external), "Core (Rust: workflow state machines, gRPC), malloc's free lists, stacks, compiled code"],
    ['File-backed pages', probe.rssFile, "the node binary and Core's library, mapped"],
  ];
}

export function memoryBreakdown(probes: Probe[], tasks: number): string[] {
  const probe = largest(probes);
  if (!probe) return ['### Where the memory goes', '', 'The memory probe did not answer during the run.'];
  return [
    '### Where the memory goes',
    '',
    `At the largest RSS the probe saw (${fmt(probe.rss / MB, 0)} MB; asked every 10 s), per task = over all ${tasks} tasks (the idle worker included):`,
    '',
    '| Part | Size | Per task | What it is |',
    '|---|---|---|---|',
    ...parts(probe).map(
      ([what, bytes, note]) => `| ${what} | ${fmt(bytes / MB, 0)} MB | ${fmt(bytes / tasks / 1024, 1)} KB | ${note} |`,
    ),
  ];
}

/**
 * Why the RSS is what it is, for a miss: the largest part at the probe's largest RSS, and how much
 * of the JS heaps was allocated but not in use (heap V8 grew and has not given back).
 */
export function memoryReason(probes: Probe[]): string {
  const probe = largest(probes);
  if (!probe) return 'the memory probe did not answer, so where it went is unknown.';
  const [what, bytes] = parts(probe).sort((a, b) => b[1] - a[1])[0]!;
  const heaps = [probe.main, ...probe.threads];
  const unused = sum(heaps.map((h) => h.total - h.used));
  return `at the probe's largest RSS (${fmt(probe.rss / MB, 0)} MB) the largest part is "${what}" (${fmt(bytes / MB, 0)} MB); the JS heaps had ${fmt(unused / MB, 0)} MB allocated but not in use (grown for a peak and not given back yet); the parts are under "Where the memory goes" below.`;
}
