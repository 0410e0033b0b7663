// `npm run chaos`: many `browserTask` workflows on several worker processes while a killer
// SIGKILLs workers, a deploy SIGTERMs them all, the Temporal server is SIGKILLed and restarted
// and later paused, and the BrowserAI emulator answers with random faults. Then it checks, from BrowserAI's side, that every task was created once, every code
// typed once and every cancel stopped once, and writes the result to CHAOS.md. It exits 1
// when a target is missed. `npm run chaos -- --help` lists the settings.
import { writeFileSync } from 'node:fs';
import { commandLine, readConfig, USAGE, type ChaosConfig } from './config';
import { RequestWatcher, TaskView } from './emulator-watch';
import { gatherFacts } from './facts';
import { runKiller, type KillerReport } from './killer';
import { CHAOS_TOTP_NAME, CHAOS_TOTP_SECRET, planWorkflows } from './plan';
import { Random } from '../../dev/random';
import { runHarness } from '../../dev/harness';
import { renderSection, writeReport } from './report';
import { runWorkflows, type WorkflowRecord } from './run';
import { startChaosStack, TASK_QUEUE, type ChaosStack } from './stack';
import { evaluateTargets } from './targets';
import { within } from '../../dev/async';
import { formatDuration, log, setLogOrigin } from './log';
import { workerEnvironment } from '../../dev/worker-child';
import { WorkerPool } from './workers';
import { runTemporalFaults, type TemporalFaultsReport } from './temporal-faults';

interface Running {
  stack?: ChaosStack;
  pool?: WorkerPool;
  watcher?: RequestWatcher;
  view?: TaskView;
}

/** Stops everything this process started; safe to call twice and from a signal handler. */
async function cleanUp(running: Running): Promise<void> {
  running.watcher?.stop();
  running.view?.stop();
  await running.pool?.killAll().catch(() => undefined);
  await running.stack?.stop();
}

async function chaos(config: ChaosConfig, running: Running): Promise<number> {
  const plans = planWorkflows(config, new Random(config.seed));
  log(`starting the Temporal dev server and the emulator (fault rate ${config.faultRate}, seed ${config.seed})`);
  const stack = (running.stack = await startChaosStack({ faultRate: config.faultRate, seed: config.seed }));
  const totpSecret = { [`BROWSERAI_TOTP_SECRET_${CHAOS_TOTP_NAME.toUpperCase()}`]: CHAOS_TOTP_SECRET };
  const pool = (running.pool = new WorkerPool(
    config.workers,
    workerEnvironment({
      temporalAddress: stack.temporal.address,
      taskQueue: TASK_QUEUE,
      browserAIBaseUrl: stack.emulator.baseUrl,
      browserAIToken: stack.emulator.apiToken,
      shutdownGraceMs: config.shutdownGraceMs,
      requestTimeoutMs: config.requestTimeoutMs,
      extra: totpSecret,
    }),
  ));
  log(`waiting for ${config.workers} workers to poll the task queue (each bundles the workflow code first)`);
  if (!(await pool.allReady())) throw new Error('a worker did not become ready; see its output above');
  const watcher = (running.watcher = new RequestWatcher(stack.emulator));
  const view = (running.view = new TaskView(stack.emulator));

  const startedAt = Date.now();
  const deadlineAt = startedAt + config.deadlineMs;
  setLogOrigin(startedAt);
  log(
    `starting ${plans.length} workflows over ${formatDuration(config.startSpreadMs)}; deadline in ${formatDuration(config.deadlineMs)}`,
  );
  let finished = false;
  const killer = runKiller({
    pool,
    watcher,
    rng: new Random(config.seed + 1),
    killMinMs: config.killMinMs,
    killMaxMs: config.killMaxMs,
    deployAt: startedAt + config.deployAtMs,
    shutdownGraceMs: config.shutdownGraceMs,
    finished: () => finished,
  });
  const temporalFaults = runTemporalFaults({
    temporal: stack.temporal,
    watcher,
    restartAt: config.temporalRestartsAtMs.map((atMs, i) => ({ atMs, after: i % 2 === 0 ? 'create' : 'append' })),
    pauseAtMs: config.temporalPauseAtMs,
    pauseForMs: config.temporalPauseForMs,
    startedAt,
    finished: () => finished,
  });
  const records = plans.map((plan): WorkflowRecord => ({ plan }));
  const progress = setInterval(() => log(progressLine(records, pool)), 15_000);
  try {
    await runWorkflows(records, { tasks: stack.tasks, watcher, view, firstStartAt: startedAt, deadlineAt });
  } finally {
    clearInterval(progress);
    finished = true;
  }
  const endedAt = Date.now();
  const allClosed = records.every((r) => r.outcome || r.startError);
  log(allClosed ? 'every workflow closed' : 'deadline reached with workflows still open');

  // The facts: faults off, workers gone, then both sides of every workflow.
  stack.emulator.setRandomFaults(undefined);
  await pool.killAll();
  const killerReport: KillerReport = (await within(30_000, killer)) ?? { kills: [], skipped: 0 };
  const temporalReport: TemporalFaultsReport = (await within(60_000, temporalFaults)) ?? { restarts: [] };
  const facts = await gatherFacts(records, stack.emulator, view, stack.tasks);
  const rows = evaluateTargets(
    facts,
    {
      workerKills: killerReport.kills.filter((k) => k.trigger === 'create' || k.trigger === 'append').length,
      temporalRestarts: temporalReport.restarts.filter((r) => r.trigger !== 'timer').length,
    },
    {
      strikesAt: [
        ...killerReport.kills.filter((k) => k.signal === 'SIGKILL').map((k) => k.at),
        ...temporalReport.restarts.map((r) => r.at),
      ],
      deploy: killerReport.deploy,
      ...(temporalReport.outage
        ? { outage: { from: temporalReport.outage.at, to: temporalReport.outage.at + temporalReport.outage.pausedMs } }
        : {}),
    },
  );
  const section = renderSection(
    config,
    {
      command: commandLine(),
      startedAt,
      endedAt,
      allClosed,
      plans,
      killer: killerReport,
      temporal: temporalReport,
      workerStarts: pool.starts,
      workerCrashes: pool.crashes.length,
    },
    facts,
    rows,
  );
  console.log(`\n${section}`);
  writeReport(config.output, section);
  log(`written to ${config.output}`);
  if (config.rawJson)
    writeFileSync(
      config.rawJson,
      JSON.stringify({ config, facts, kills: killerReport, crashes: pool.crashes }, null, 2),
    );
  const missed = rows.filter((row) => row.met === false);
  if (missed.length > 0) log(`MISSED ${missed.length} target(s): ${missed.map((row) => row.measure).join('; ')}`);
  return missed.length > 0 ? 1 : 0;
}

function progressLine(records: WorkflowRecord[], pool: WorkerPool): string {
  const started = records.filter((r) => r.startedAt !== undefined).length;
  const closed = records.filter((r) => r.outcome).length;
  return `progress: ${closed} closed of ${records.length}${started < records.length ? ` (${started} started)` : ''}; workers ready: ${pool.readySlots().length}/${pool.slots.length}`;
}

const running: Running = {};
void runHarness({
  usage: USAGE,
  readConfig,
  run: (config) => chaos(config, running),
  stop: () => cleanUp(running),
  log,
});
