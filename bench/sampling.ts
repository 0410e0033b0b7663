// Resource samples from /proc, twice a second: a process's resident memory and CPU time (the
// worker, the Temporal dev server) and the whole machine's busy time, which shows when other
// processes on a shared machine were competing for the cores.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const SAMPLE_MS = 500;

/** `cpuTicks`: utime + stime of a process, or busy ticks of the machine. */
export type Sample = { at: number; rssKb: number; cpuTicks: number };

const CLOCK_TICKS = Number(existing(() => execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())) || 100;

abstract class Sampler {
  readonly samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  abstract sample(): void;

  /** Average CPU (% of one core) between two moments, from the samples inside them. */
  cpuPercent(from: number, to: number): number | undefined {
    const inside = this.samples.filter((s) => s.at >= from && s.at <= to);
    return inside.length < 2 ? undefined : cpuBetween(inside[0]!, inside.at(-1)!);
  }

  /** Highest CPU (% of one core) over any window of `windowMs` between two moments. */
  peakCpuPercent(from: number, to: number, windowMs = 5_000): number | undefined {
    const inside = this.samples.filter((s) => s.at >= from && s.at <= to);
    let peak: number | undefined;
    for (let i = 0, j = 0; i < inside.length; i++) {
      while (inside[i]!.at - inside[j]!.at > windowMs) j++;
      if (inside[i]!.at - inside[j]!.at >= windowMs * 0.8)
        peak = Math.max(peak ?? 0, cpuBetween(inside[j]!, inside[i]!)!);
    }
    return peak;
  }
}

/** Samples one process until it is gone; keeps its kernel high-water mark of RSS too. */
export class ProcessSampler extends Sampler {
  hwmKb: number | undefined;

  constructor(private pid: number | undefined) {
    super();
  }

  sample(): void {
    if (this.pid === undefined) return;
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
      // Fields after the command name (which may contain spaces): utime and stime are 14 and 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const hwm = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
      const rss = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
      if (hwm) this.hwmKb = Math.max(this.hwmKb ?? 0, Number(hwm[1]));
      if (rss)
        this.samples.push({ at: Date.now(), rssKb: Number(rss[1]), cpuTicks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      this.pid = undefined; // the process is gone
    }
  }

  peakRssKb(from = 0, to = Infinity): number | undefined {
    const inside = this.samples.filter((s) => s.at >= from && s.at <= to);
    return inside.length > 0 ? Math.max(...inside.map((s) => s.rssKb)) : undefined;
  }

  /** The last RSS sample taken before `at` (the idle process, when `at` is the first start). */
  lastRssKbBefore(at: number): number | undefined {
    return this.samples.filter((s) => s.at < at && s.rssKb > 0).at(-1)?.rssKb;
  }

  /** The larger of the high-water mark (start-up included) and the largest sample. */
  peakEverKb(): number | undefined {
    return Math.max(this.hwmKb ?? 0, this.peakRssKb() ?? 0) || undefined;
  }
}

/** Busy time of the whole machine (every process, other users' included), from /proc/stat. */
export class MachineSampler extends Sampler {
  /** % of all cores. */
  busyPercent(from: number, to: number, cores: number): number | undefined {
    const pct = this.cpuPercent(from, to);
    return pct === undefined ? undefined : pct / cores;
  }

  sample(): void {
    try {
      // cpu  user nice system idle iowait irq softirq steal ...: busy = all but idle and iowait.
      const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
      const busy = fields.slice(0, 8).reduce((a, b) => a + b, 0) - fields[3]! - fields[4]!;
      this.samples.push({ at: Date.now(), rssKb: 0, cpuTicks: busy });
    } catch {
      // not Linux
    }
  }
}

function cpuBetween(first: Sample, last: Sample): number | undefined {
  const seconds = (last.at - first.at) / 1000;
  return seconds > 0 ? ((last.cpuTicks - first.cpuTicks) / CLOCK_TICKS / seconds) * 100 : undefined;
}

/** A direct child of `parent` whose command name is `comm` (the dev server is a child of this process). */
export function findChild(parent: number, comm: string): number | undefined {
  for (const entry of existing(() => readdirSync('/proc')) ?? []) {
    const stat = /^\d+$/.test(entry) ? existing(() => readFileSync(`/proc/${entry}/stat`, 'utf8')) : undefined;
    if (!stat) continue;
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === parent && name === comm) return Number(entry);
  }
  return undefined;
}

/** What `read` gives, or undefined when it throws (a process gone, no /proc). */
export function existing<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
