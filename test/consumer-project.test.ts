// The package as a team gets it: `npm pack`, installed into a fresh CommonJS project outside this
// repository, with the code of docs/your-own-worker.md's "Add it to your own worker" section as that project's
// own source, compiled by its own `tsc` and run as its own worker process. The worker runs against
// a Temporal dev server and the emulator of the installed package (`browserai-temporal/testing`);
// the test plays the user who types the one-time code into the starter.
//
// The page's code blocks are the source (each starts with a `// src/<file>.ts` line), so the
// page shows exactly what runs here; it is compiled with `moduleResolution` Node16 and, for older
// CommonJS projects, node10 (which reads `typesVersions` instead of `exports`). npm install uses the
// default npm cache: about 30 s for the whole file on a warm cache, 40 s on a cold one.
// Slow: packs the package, installs it into a fresh project and compiles that project.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTemporal } from '../dev/dev-server';
import type * as Testing from '../src/testing';

/** The repository root: this file runs as lib/test/consumer-project.test.js. */
const ROOT = resolve(__dirname, '..', '..');
const SECTION = '## Add it to your own worker';
/** The page that holds the code, and its section that must give these files, by the path on their first line. */
const PAGE = 'docs/your-own-worker.md';
const SOURCE_FILES = ['src/workflows.ts', 'src/worker.ts', 'src/starter.ts'];
const CODE = '482913';
const INSTRUCTION = 'Log in to https://portal.example.com and download the latest invoice [needs-code]';

/** A child process whose output is kept, to show in a failure. */
interface Proc {
  name: string;
  child: ChildProcess;
  stdout: string;
  stderr: string;
  /** Set once it has exited. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<Proc>();

function start(name: string, command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Proc {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
  const proc: Proc = { name, child, stdout: '', stderr: '', exit: undefined, exited: undefined! };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (proc.stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (proc.stderr += chunk));
  proc.exited = new Promise((done) => {
    child.on('error', (err) => {
      proc.stderr += `\n${name} could not be started: ${err.message}`;
      proc.exit = { code: -1, signal: null };
      running.delete(proc);
      done(proc.exit);
    });
    child.on('close', (code, signal) => {
      proc.exit = { code, signal };
      running.delete(proc);
      done(proc.exit);
    });
  });
  running.add(proc);
  return proc;
}

/** What a process printed, cut to its end, for a failure message. */
function output(proc: Proc, chars = 6_000): string {
  const tail = (text: string) => (text.length > chars ? `…${text.slice(-chars)}` : text);
  return `--- ${proc.name} stdout ---\n${tail(proc.stdout)}\n--- ${proc.name} stderr ---\n${tail(proc.stderr)}`;
}

/** What `promise` gives within `ms`, or undefined after that (the timer is cleared either way). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<undefined>((done) => (timer = setTimeout(() => done(undefined), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs a command to its end; throws with its output unless it exits 0 within `timeoutMs`. */
async function run(
  name: string,
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Proc> {
  const proc = start(name, command, args, options);
  proc.child.stdin!.end();
  const outcome = await within(proc.exited, options.timeoutMs);
  if (!outcome) {
    proc.child.kill('SIGKILL');
    throw new Error(
      `${name} (${command} ${args.join(' ')}) did not finish within ${options.timeoutMs} ms\n${output(proc)}`,
    );
  }
  if (outcome.code !== 0) {
    throw new Error(
      `${name} (${command} ${args.join(' ')}) failed with exit code ${outcome.code ?? outcome.signal}\n${output(proc)}`,
    );
  }
  return proc;
}

/**
 * The environment for npm and the project's processes: ours, less what `npm test` put in it
 * about this repository (npm_package_*, npm_lifecycle_*, its prefix), which a nested npm would
 * take as its own.
 */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_(package_|lifecycle_|config_(local_)?prefix$)|^INIT_CWD$/i.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** The page section's text, up to the next `## ` heading. */
function pageSection(): string {
  const page = readFileSync(join(ROOT, PAGE), 'utf8');
  const startAt = page.indexOf(`\n${SECTION}\n`);
  assert.ok(startAt >= 0, `${PAGE} has no "${SECTION}" section`);
  const rest = page.slice(startAt + SECTION.length + 2);
  const end = rest.search(/^## /m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The section's ```ts blocks, by the `// src/<file>.ts` comment on their first line. */
function sourceFiles(section: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const [, body] of section.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
    const path = /^\/\/\s*(\S+\.ts)\s*$/.exec(body!.split('\n', 1)[0]!)?.[1];
    assert.ok(
      path,
      `a \`\`\`ts block in "${SECTION}" does not start with a "// src/<file>.ts" line:\n${body!.slice(0, 200)}`,
    );
    assert.ok(!files.has(path), `"${SECTION}" has two blocks for ${path}`);
    files.set(path, body!);
  }
  assert.deepEqual([...files.keys()].sort(), [...SOURCE_FILES].sort(), `the files "${SECTION}" gives`);
  return files;
}

/** The packages of the section's `npm install …` command. */
function installedPackages(section: string): string[] {
  const line = /^npm install (.+)$/m.exec(section)?.[1];
  assert.ok(line, `"${SECTION}" has no "npm install …" line`);
  const names = line.trim().split(/\s+/);
  assert.ok(names.includes('browserai-temporal'), `the install command names browserai-temporal: npm install ${line}`);
  return names;
}

/** The version of a package this repository is built and tested with. */
function ourVersion(name: string): string {
  return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
}

/** Every file the package's `exports` map points at, e.g. `lib/src/plugin.js`. */
function exportTargets(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: unknown };
  const targets = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === 'string') targets.add(value.replace(/^\.\//, ''));
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(pkg.exports);
  return [...targets];
}

/** Polls until `probe` gives a value; fails with `what` (and the processes' output) after `timeoutMs`. */
async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false,
  procs: Proc[],
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    const gone = procs.find((p) => p.exit);
    if (gone)
      throw new Error(
        `${gone.name} exited (${gone.exit!.code ?? gone.exit!.signal}) while waiting for ${what}\n${procs.map((p) => output(p)).join('\n')}`,
      );
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}\n${procs.map((p) => output(p)).join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a project of your own, with the packed package installed and the code of docs/your-own-worker.md as its source', () => {
  let dir: string;
  let project: string;
  let temporal: Promise<TestWorkflowEnvironment>;
  let env: TestWorkflowEnvironment | undefined;
  let emulator: Testing.BrowserAIEmulator | undefined;
  let built = false;
  let worker: Proc | undefined;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'browserai-consumer-'));
    project = join(dir, 'invoice-bot');
    // The dev server starts while npm works.
    temporal = startTemporal();
    temporal.then(
      (started) => (env = started),
      () => undefined,
    );
  });

  after(async () => {
    for (const proc of running) proc.child.kill('SIGKILL');
    await emulator?.close();
    await (env ?? (await temporal.catch(() => undefined)))?.teardown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test(
    "packs, installs into a fresh project and compiles the code of docs/your-own-worker.md with that project's tsc",
    { timeout: 8 * 60_000 },
    async () => {
      const section = pageSection();
      const files = sourceFiles(section);
      const packages = installedPackages(section);

      // 1. The tarball, as `npm publish` would upload it (lib/ is built: `npm test` builds first).
      const pack = await run('npm pack', 'npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
        cwd: ROOT,
        env: cleanEnv(),
        timeoutMs: 120_000,
      });
      let packed: { filename: string; files: Array<{ path: string }> };
      try {
        [packed] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as Array<typeof packed>;
      } catch (err) {
        throw new Error(`npm pack --json printed no JSON (${(err as Error).message})\n${output(pack)}`, { cause: err });
      }
      const inTarball = new Set(packed.files.map((f) => f.path));
      // A subpath pattern (`schemas/*.json`) needs at least one file that matches it.
      const present = (target: string) =>
        target.includes('*')
          ? [...inTarball].some(
              (path) => path.startsWith(target.split('*')[0]!) && path.endsWith(target.split('*')[1]!),
            )
          : inTarball.has(target);
      const missing = exportTargets().filter((target) => !present(target));
      assert.deepEqual(
        missing,
        [],
        `the tarball lacks files its "exports" map points at (is lib/ in package.json "files"?); it has ${inTarball.size} files`,
      );

      // 2. A fresh CommonJS project outside this repository: the packages the page's install
      //    command names (at the versions this repository is tested with), TypeScript and Node's types.
      mkdirSync(join(project, 'src'), { recursive: true });
      const dependencies = Object.fromEntries(
        packages.map((name) => [name, name === 'browserai-temporal' ? `file:../${packed.filename}` : ourVersion(name)]),
      );
      const devDependencies = { typescript: ourVersion('typescript'), '@types/node': ourVersion('@types/node') };
      writeFileSync(
        join(project, 'package.json'),
        JSON.stringify(
          { name: 'invoice-bot', version: '1.0.0', private: true, type: 'commonjs', dependencies, devDependencies },
          null,
          2,
        ),
      );
      writeFileSync(
        join(project, 'tsconfig.json'),
        JSON.stringify(
          {
            compilerOptions: {
              target: 'ES2022',
              module: 'Node16',
              moduleResolution: 'Node16',
              lib: ['ES2022'],
              types: ['node'],
              strict: true,
              // The Temporal SDK's own declarations need it (they import `ms`, which ships no types).
              skipLibCheck: true,
              outDir: 'dist',
              rootDir: 'src',
            },
            include: ['src'],
          },
          null,
          2,
        ),
      );
      await run('npm install', 'npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
        cwd: project,
        env: cleanEnv(),
        timeoutMs: 6 * 60_000,
      });

      // 3. The page's code as the project's own source, compiled (strict) by the project's own tsc.
      for (const [path, body] of files) writeFileSync(join(project, path), body);
      const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
      await run('tsc (module Node16)', process.execPath, [tsc, '-p', 'tsconfig.json'], {
        cwd: project,
        env: cleanEnv(),
        timeoutMs: 120_000,
      });
      // Older CommonJS projects resolve with `node10`, which ignores "exports": typesVersions must cover the subpaths.
      await run(
        'tsc (module commonjs, moduleResolution node10)',
        process.execPath,
        [tsc, '-p', 'tsconfig.json', '--noEmit', '--module', 'commonjs', '--moduleResolution', 'node10'],
        {
          cwd: project,
          env: cleanEnv(),
          timeoutMs: 120_000,
        },
      );
      // The contract's schemas, as a caller in another language (or a JSON Schema validator) reads them.
      const contract = createRequire(join(project, 'package.json'))('browserai-temporal/schemas/contract.json') as {
        workflows: Record<string, { input: string }>;
      };
      assert.equal(contract.workflows.browserTask?.input, 'browser-task-input.schema.json');
      built = true;
    },
  );

  test(
    "its worker runs its own workflow, which runs browserTask as a child and passes the user's code on",
    { timeout: 3 * 60_000 },
    async (t) => {
      if (!built) return t.skip('the project was not built (see the test before)');
      // The emulator of the installed package, not this repository's source.
      const installed = createRequire(join(project, 'package.json'));
      const testing = installed('browserai-temporal/testing') as typeof Testing;
      assert.ok(
        installed.resolve('browserai-temporal/testing').startsWith(join(project, 'node_modules')),
        'the emulator comes from the installed package',
      );
      emulator = await testing.BrowserAIEmulator.start({
        defaultDurationMs: 500,
        queueMs: 100,
        ...testing.emulatorOptionsFromEnv(process.env),
      });
      const temporalEnv = await temporal;

      worker = start('worker', process.execPath, ['dist/worker.js'], {
        cwd: project,
        env: cleanEnv({
          TEMPORAL_ADDRESS: temporalEnv.address,
          BROWSERAI_API_TOKEN: emulator.apiToken,
          BROWSERAI_BASE_URL: emulator.baseUrl,
        }),
      });
      const starter = start('starter', process.execPath, ['dist/starter.js', INSTRUCTION], {
        cwd: project,
        env: cleanEnv({ TEMPORAL_ADDRESS: temporalEnv.address }),
      });
      const procs = [worker, starter];

      const workflowId = await waitFor(
        'the starter to start the workflow',
        () => /^Started (\S+)$/m.exec(starter.stdout)?.[1],
        procs,
      );
      // The user gets the code once BrowserAI has filled in the login form: the task awaits input.
      const awaiting = await waitFor(
        'the BrowserAI task to await its code',
        () => emulator!.listTasks().find((task) => task.status === 'awaiting'),
        procs,
        60_000,
      );
      await waitFor('the starter to ask for the code', () => starter.stdout.includes('One-time code:'), procs);
      starter.child.stdin!.end(`${CODE}\n`);
      const ended = await within(starter.exited, 60_000);
      assert.ok(ended, `the starter did not end within 60 s of the code\n${output(starter)}\n${output(worker)}`);
      assert.equal(ended.code, 0, `the starter failed\n${output(starter)}\n${output(worker)}`);

      interface Printed {
        task: { executionId: string; status: string; results: unknown[] };
        codeRequested: {
          workflowId: string;
          executionId: string;
          status: string;
          since: string;
          timesOutAt: string;
        } | null;
        statusAtBrowserAI: string;
      }
      const printed = JSON.parse(starter.stdout.slice(starter.stdout.indexOf('{'))) as Printed;
      const handle = temporalEnv.client.workflow.getHandle(workflowId);
      const description = await handle.describe();
      assert.equal(description.type, 'downloadInvoice');
      assert.equal(description.status.name, 'COMPLETED');
      assert.deepEqual(await handle.result(), printed, "the starter printed the workflow's result");

      // The child's result: the task the emulator ran, ended as the emulator reports it.
      const { task } = printed;
      assert.equal(task.executionId, awaiting.executionId);
      const atEmulator = emulator.task(task.executionId)!;
      assert.equal(task.status, atEmulator.status, 'the child returned the status the emulator reports');
      assert.ok(['finalized', 'completed'].includes(task.status), `the task ended done: ${task.status}`);
      assert.ok(Array.isArray(task.results), 'the child returned the results');

      // The direct activity call (browserAIGetTask, through proxyActivities<BrowserAIActivities>).
      assert.equal(printed.statusAtBrowserAI, atEmulator.status);
      const history = await handle.fetchHistory();
      const activities = (history.events ?? []).flatMap(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
      );
      assert.deepEqual(activities, ['browserAIGetTask'], 'the parent itself called one BrowserAI activity');

      // The parent was told by its child that the task awaited the code.
      const notice = printed.codeRequested;
      assert.ok(notice, 'the parent got browserTaskAwaitingInputSignal');
      assert.equal(notice.workflowId, `${workflowId}-browser`);
      assert.equal(notice.executionId, task.executionId);
      assert.equal(notice.status.toLowerCase(), 'awaiting');
      assert.ok(
        Date.parse(notice.timesOutAt) > Date.parse(notice.since),
        `the notice says until when the task waits: ${JSON.stringify(notice)}`,
      );
      const child = await temporalEnv.client.workflow.getHandle(notice.workflowId).describe();
      assert.equal(child.type, 'browserTask');
      assert.equal(child.parentExecution?.workflowId, workflowId, "browserTask ran as the parent's child");

      // BrowserAI got the user's code, once.
      assert.deepEqual(atEmulator.codesReceived, [CODE]);
      assert.equal(worker.exit, undefined, `the worker is still running\n${output(worker)}`);
    },
  );

  test('its worker exits cleanly on SIGTERM', { timeout: 60_000 }, async (t) => {
    if (!worker) return t.skip('the worker did not run (see the tests before)');
    worker.child.kill('SIGTERM');
    const exit = await within(worker.exited, 30_000);
    assert.ok(exit, `the worker did not exit within 30 s of SIGTERM\n${output(worker)}`);
    assert.deepEqual(exit, { code: 0, signal: null }, `the worker's exit on SIGTERM\n${output(worker)}`);
  });
});
