// "Where the history events go": the event types of the task with the median event count.
import type { TaskRecord } from '../task';

export function typicalHistory(records: TaskRecord[]): string {
  const sorted = records
    .filter((r) => r.facts?.history)
    .sort((a, b) => a.facts!.history!.events - b.facts!.history!.events);
  const median = sorted[Math.floor((sorted.length - 1) / 2)]?.facts?.history;
  if (!median) return 'n/a';
  const parts = Object.entries(median.eventTypes)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([type, count]) => `${type} ${count}`);
  return `${median.events} events: ${parts.join(', ')}`;
}
