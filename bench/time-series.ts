// Counts that change at instants (sessions running, workflows open): a step function built from
// intervals, and its mean over a window.

/** How many of `intervals` are open, at each of their starts and ends in time order. */
export type Steps = { at: number; open: number }[];

/** An end and a start at the same millisecond: the end first, as the emulator counts. */
export function openSteps(intervals: Array<readonly [from: number, to: number]>): Steps {
  const edges = intervals.flatMap(([from, to]) => [
    { at: from, by: 1 },
    { at: to, by: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.by - b.by);
  let open = 0;
  return edges.map((edge) => ({ at: edge.at, open: (open += edge.by) }));
}

export function meanOver(steps: Steps, from: number, to: number): number {
  let [area, level, last] = [0, 0, from];
  for (const step of steps) {
    if (step.at > to) break;
    if (step.at > from) area += level * (step.at - last);
    if (step.at >= from) last = step.at;
    level = step.open;
  }
  return (area + level * (to - Math.max(last, from))) / (to - from);
}
