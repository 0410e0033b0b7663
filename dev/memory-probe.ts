// Where a worker's memory goes, without changing how it runs: preloaded into the worker process
// (`node --require lib/dev/memory-probe.js lib/src/worker.js`), it notes every worker thread the SDK
// starts (the workflow thread's isolate) and, on SIGWINCH, prints one line with the main thread's
// heap by space, each thread's heap, and /proc's split of the resident set. SIGWINCH because a
// process ignores it by default and Temporal's runtime takes SIGUSR2 for shutdown.
//
// With MEMORY_PROBE_SNAPSHOTS set to a folder, it also writes a heap snapshot of every isolate there,
// once, at the first probe after MEMORY_PROBE_SNAPSHOT_AFTER seconds of the process's life (default
// 0): slow, and it grows the RSS it measures, so for finding what holds memory, not for the figures.
// Nothing here is loaded by `npm run worker` or the image.
import { readFileSync, createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import v8 from 'node:v8';
import workerThreads from 'node:worker_threads';

/** The prefix of the probe's line on stdout; the rest of the line is JSON (see {@link MemoryProbeReport}). */
export const PROBE_LINE_PREFIX = 'browserai-memory-probe ';

/** One isolate's heap, in bytes. */
export interface IsolateHeap {
  used: number;
  total: number;
  /** Memory V8 allocated outside its heap for this isolate's objects (buffers, wasm). */
  external: number;
}

/** What the probe prints, all in bytes. */
export interface MemoryProbeReport {
  rss: number;
  /** /proc/self/status: anonymous memory (heaps, malloc, stacks) and file-backed pages (the node binary, Core's library). */
  rssAnon: number;
  rssFile: number;
  main: IsolateHeap & { arrayBuffers: number; spaces: Record<string, number> };
  /** Empty when the runtime cannot give another thread's heap (Node before 22.16: no `Worker.getHeapStatistics`). */
  threads: IsolateHeap[];
  snapshots: string[];
}

const threads = new Set<workerThreads.Worker>();
let snapshotTaken = false;
const OriginalWorker = workerThreads.Worker;
// The SDK starts its workflow thread with `new Worker(...)` from this module: wrap the constructor so
// the probe can ask that thread for its heap later.
workerThreads.Worker = class ProbedWorker extends OriginalWorker {
  constructor(...args: ConstructorParameters<typeof OriginalWorker>) {
    super(...args);
    threads.add(this);
    this.once('exit', () => threads.delete(this));
  }
};

/** A `kB` field of /proc/self/status, in bytes. */
function kbField(status: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

async function report(): Promise<MemoryProbeReport> {
  const usage = process.memoryUsage();
  const status = readFileSync('/proc/self/status', 'utf8');
  const spaces = Object.fromEntries(
    v8.getHeapSpaceStatistics().map((space) => [space.space_name, space.space_used_size]),
  );
  const threadHeaps: IsolateHeap[] = [];
  // Missing before Node 22.16 (a bench run by an older `node`): the rest of the report still answers.
  for (const thread of [...threads].filter((t) => typeof t.getHeapStatistics === 'function')) {
    const stats = await thread.getHeapStatistics();
    threadHeaps.push({ used: stats.used_heap_size, total: stats.total_heap_size, external: stats.external_memory });
  }
  const snapshots: string[] = [];
  const folder = process.env.MEMORY_PROBE_SNAPSHOTS;
  if (folder && !snapshotTaken && process.uptime() >= Number(process.env.MEMORY_PROBE_SNAPSHOT_AFTER ?? 0)) {
    snapshotTaken = true;
    snapshots.push(v8.writeHeapSnapshot(join(folder, `main-${process.pid}-${Date.now()}.heapsnapshot`)));
    let index = 0;
    for (const thread of threads) {
      const file = join(folder, `thread${index++}-${process.pid}-${Date.now()}.heapsnapshot`);
      await pipeline(await thread.getHeapSnapshot(), createWriteStream(file));
      snapshots.push(file);
    }
  }
  return {
    rss: usage.rss,
    rssAnon: kbField(status, 'RssAnon'),
    rssFile: kbField(status, 'RssFile'),
    main: {
      used: usage.heapUsed,
      total: usage.heapTotal,
      external: usage.external,
      arrayBuffers: usage.arrayBuffers,
      spaces,
    },
    threads: threadHeaps,
    snapshots,
  };
}

process.on('SIGWINCH', () => {
  report().then(
    (result) => process.stdout.write(`${PROBE_LINE_PREFIX}${JSON.stringify(result)}\n`),
    // A line without `rss`: the bench counts it as no answer.
    (error: unknown) => process.stdout.write(`${PROBE_LINE_PREFIX}${JSON.stringify({ error: String(error) })}\n`),
  );
});
