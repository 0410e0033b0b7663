// A busy machine, made on purpose: CPU hogs (node processes that spin) at the worker's priority,
// started by the bench beside a scenario's stack, so a tail that only shows when the worker must
// share its cores is seen in every run, not only when someone else happens to load the machine.
import { spawn, type ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const hog of live) hog.kill('SIGKILL');
});

/** Starts `count` hogs, each spinning one core flat out; returns what stops them all. */
export function startCpuHogs(count: number): () => void {
  const hogs = Array.from({ length: count }, () => {
    const hog = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
    live.add(hog);
    hog.once('exit', () => live.delete(hog));
    return hog;
  });
  return () => {
    for (const hog of hogs) hog.kill('SIGKILL');
  };
}

/** The setup line of a section run beside hogs. */
export function busyLine(count: number): string {
  return `- **Busy machine:** ${count} CPU hog${count === 1 ? '' : 's'} (a \`node\` process spinning one core flat out, at the worker's priority) started by the bench beside the stack, for the whole scenario.`;
}
