// A throw-away Temporal dev server (the `temporal` CLI, in memory) with our search attributes
// registered: what the tests and the benchmark run workflows on; and one on a database file that
// the chaos run kills, restarts and pauses. It lives in dev/ so the benchmark does not depend on
// test helpers; `npm start` keeps its own, persistent server.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ALL_SEARCH_ATTRIBUTES } from '../src/contract/search-attributes';
import { findTemporalCli, TEMPORAL_CLI_MISSING } from './temporal-cli';

/**
 * Starts the dev server. `extraArgs` go to `temporal server start-dev` as they are (e.g.
 * `['--metrics-port', '9090']`, `['--namespace', 'other']`); without `registerSearchAttributes`
 * the namespace lacks ours, as a cluster nobody configured would, and with a list of them it has
 * only those, as a cluster configured for an earlier release would.
 */
export async function startTemporal(
  extraArgs: string[] = [],
  registerSearchAttributes: boolean | typeof ALL_SEARCH_ATTRIBUTES = true,
): Promise<TestWorkflowEnvironment> {
  const path = findTemporalCli();
  if (!path) throw new Error(TEMPORAL_CLI_MISSING);
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path },
      searchAttributes: registerSearchAttributes === true ? ALL_SEARCH_ATTRIBUTES : registerSearchAttributes || [],
      extraArgs,
    },
  });
}

/**
 * A dev server on a database file that can be killed, restarted on the same file and ports, and
 * paused: what the chaos run does to Temporal itself. It is the CLI's own process (no wrapper),
 * so SIGKILL and SIGSTOP reach the server.
 */
export class RestartableDevServer {
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #paused = false;
  readonly address: string;

  private constructor(
    private readonly cli: string,
    private readonly args: string[],
    private readonly dir: string,
    port: number,
  ) {
    this.address = `127.0.0.1:${port}`;
  }

  /** Starts a server on a fresh database file in a temporary directory, with our search attributes. */
  static async start(): Promise<RestartableDevServer> {
    const cli = findTemporalCli();
    if (!cli) throw new Error(TEMPORAL_CLI_MISSING);
    const dir = mkdtempSync(join(tmpdir(), 'temporal-dev-'));
    const [port, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
    const args = [
      'server',
      'start-dev',
      '--headless',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--http-port',
      String(httpPort),
      '--metrics-port',
      String(metricsPort),
      '--db-filename',
      join(dir, 'temporal.db'),
      '--log-level',
      'error',
      ...ALL_SEARCH_ATTRIBUTES.flatMap(({ name, type }) => [
        '--search-attribute',
        `${name}=${TypedSearchAttributes.toMetadataType(type)}`,
      ]),
    ];
    const server = new RestartableDevServer(cli, args, dir, port);
    await server.#launch();
    return server;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** SIGKILL, as a crash or a lost machine would: nothing is flushed but what the database already has. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    child.kill('SIGKILL');
    await this.#exited;
  }

  /** Starts the server again on the same database file and ports; resolves once it answers. */
  async restart(): Promise<void> {
    await this.kill();
    await this.#launch();
  }

  /** SIGSTOP: the server holds its connections and answers nothing, as a hung machine would. */
  pause(): void {
    this.#paused = this.#child?.kill('SIGSTOP') ?? false;
  }

  resume(): void {
    if (this.#paused) this.#child?.kill('SIGCONT');
    this.#paused = false;
  }

  /** Idempotent: the server is gone and its database removed afterwards. */
  async stop(): Promise<void> {
    this.resume();
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  async #launch(): Promise<void> {
    const child = spawn(this.cli, this.args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const stderr: string[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()) > 20 && stderr.shift());
    this.#child = child;
    liveServers.add(child);
    this.#exited = new Promise((resolve) =>
      child.once('exit', () => {
        liveServers.delete(child);
        if (this.#child === child) this.#child = undefined;
        resolve();
      }),
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (!this.#child) throw new Error(`The Temporal dev server exited at start: ${stderr.join('').slice(-2000)}`);
      if (await answers(this.address)) return;
      if (Date.now() > deadline) throw new Error(`The Temporal dev server did not answer on ${this.address} in 60 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Every dev server process started here, so any exit of this process takes them down too. */
const liveServers = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of liveServers) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
});

/** True once the server serves the default namespace. */
async function answers(address: string): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 1_000 });
    await connection.withDeadline(Date.now() + 2_000, () =>
      connection!.workflowService.describeNamespace({ namespace: 'default' }),
    );
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/** A TCP port free on loopback right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
