// The Python and Go examples (examples/), run as the child processes a team would run: Python
// from a virtual environment under .tools/ with examples/python/requirements.txt (installed on
// first use, and again when that file changes), Go built once into .tools/ (the go command's
// module and build caches make the next builds quick).
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
export const EXAMPLES_DIR = join(ROOT, 'examples');
const TOOLS = join(ROOT, '.tools');

/** The Python of a venv that has the examples' pinned requirements. */
export function pythonForExamples(): string {
  const venv = join(TOOLS, 'python-examples');
  const python = join(venv, 'bin', 'python');
  const requirements = join(EXAMPLES_DIR, 'python', 'requirements.txt');
  const stamp = join(venv, 'requirements.sha256');
  const wanted = createHash('sha256').update(readFileSync(requirements)).digest('hex');
  if (existsSync(python) && existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return python;
  console.log('Installing the Python example requirements (pinned) into .tools/python-examples ...');
  execFileSync('python3', ['-m', 'venv', '--clear', venv], { stdio: 'inherit' });
  execFileSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirements], {
    stdio: 'inherit',
  });
  writeFileSync(stamp, wanted);
  return python;
}

/** `go version`'s answer, or undefined when there is no `go` on PATH. */
export function goVersion(): string | undefined {
  try {
    return execFileSync('go', ['version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/** Builds the Go example (downloads its modules the first time) and returns the binary. */
export function buildGoExample(): string {
  const binary = join(TOOLS, 'go-example', 'service');
  execFileSync('go', ['build', '-o', binary, '.'], { cwd: join(EXAMPLES_DIR, 'go'), stdio: 'inherit' });
  return binary;
}

export interface ExampleRun {
  events: Array<Record<string, unknown> & { event: string }>;
  exitCode: number | null;
  stderr: string;
}

/**
 * Runs an example to its end. Its stdout is one JSON event per line; each time it says
 * `input-requested`, the next of `codes` is typed on its stdin, as the person with the phone would.
 */
export function runExample(
  command: string,
  args: string[],
  options: { env: Record<string, string>; cwd: string; codes?: string[]; timeoutMs?: number },
): Promise<ExampleRun> {
  const codes = [...(options.codes ?? [])];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const events: ExampleRun['events'] = [];
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `${command} ran over ${options.timeoutMs ?? 60_000} ms; events: ${JSON.stringify(events)}\n${stderr}`,
        ),
      );
    }, options.timeoutMs ?? 60_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      for (let newline = stdout.indexOf('\n'); newline >= 0; newline = stdout.indexOf('\n')) {
        const line = stdout.slice(0, newline).trim();
        stdout = stdout.slice(newline + 1);
        if (!line) continue;
        const event = JSON.parse(line) as ExampleRun['events'][number];
        events.push(event);
        if (event.event === 'input-requested') child.stdin.write(`${codes.shift() ?? ''}\n`);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ events, exitCode, stderr });
    });
  });
}
