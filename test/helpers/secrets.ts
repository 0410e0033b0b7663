// What the tests that hunt for secrets share: the real worker entry point in a child process,
// its output kept, and the search for a secret in every spelling it may take.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { prebuiltBundleEnv } from './temporal';

/** The line the worker writes (on stdout, as text or inside a JSON line) once it polls its task queue. */
export const READY_LINE = 'browserai-temporal worker: task queue';

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** Everything written so far, per stream and both interleaved as they arrived. */
  readonly stdout: string;
  readonly stderr: string;
  readonly output: string;
  /** SIGTERM, and waits for the exit (the Runtime writes the lines it still holds on the way). */
  stop(): Promise<void>;
  /** SIGKILL, for an `after` hook: no waiting. */
  kill(): void;
}

/**
 * The real worker entry point (src/worker.ts run as a program: `runWorkerFromEnv`) in a child
 * process with `env` over this process's environment; resolves once it polls its task queue.
 */
export async function startWorkerProcess(env: NodeJS.ProcessEnv): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [require.resolve('../../src/worker')], {
    env: { ...process.env, ...prebuiltBundleEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk;
    output += chunk;
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk;
    output += chunk;
  });
  const exited = once(child, 'exit');
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (stdout.includes(READY_LINE)) {
        child.stdout!.off('data', onData);
        child.off('exit', onExit);
        resolve();
      }
    };
    const onExit = (code: number | null) => reject(new Error(`worker exited early (${code}): ${output.slice(-2_000)}`));
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    get output() {
      return output;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** `GET /tasks/{id}` as BrowserAI answers it, straight from the emulator (no client, no redaction): what the secrets were in. */
export async function rawTaskAnswer(
  emulator: { baseUrl: string; apiToken: string },
  executionId: string,
): Promise<string> {
  const response = await fetch(`${emulator.baseUrl}/tasks/${executionId}`, {
    headers: { authorization: `apikey ${emulator.apiToken}` },
  });
  return response.text();
}

// ---- What is searched, and how -------------------------------------------------------------

export interface Seen {
  where: string;
  text: string;
}

/**
 * Every spelling of a secret the search looks for: as is, percent-encoded once and twice (upper-
 * and lower-case hex), JSON-escaped, and base64 (standard and URL-safe). Base64 cannot be
 * searched for as one string: the secret may start at any byte of a 3-byte group of the encoded
 * whole. So for each of the three alignments, the part of the encoding that only the secret's
 * bytes determine.
 */
export function spellings(secret: string): string[] {
  const once = encodeURIComponent(secret);
  const forms = [secret, once, encodeURIComponent(once), once.toLowerCase(), JSON.stringify(secret).slice(1, -1)];
  for (let offset = 0; offset < 3; offset++) {
    const bytes = Buffer.concat([Buffer.alloc(offset), Buffer.from(secret)]);
    const stable = Buffer.from(bytes)
      .toString('base64')
      .slice(offset === 0 ? 0 : 4, 4 * Math.floor(bytes.length / 3));
    if (stable.length >= 8) forms.push(stable, stable.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return [...new Set(forms)];
}

/** `where: spelling` for each secret found. */
export function leaks(seen: readonly Seen[], secrets: readonly string[]): string[] {
  const found: string[] = [];
  for (const secret of secrets) {
    for (const form of spellings(secret)) {
      for (const { where, text } of seen) if (text.includes(form)) found.push(`${where}: ${JSON.stringify(form)}`);
    }
  }
  return found;
}
