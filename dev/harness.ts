// The entry point the bench and the chaos run share: `--help`, the flags read (a bad one exits 2
// with its message), the run, and `stop` afterwards and on Ctrl+C or a kill, so no dev server or
// worker is left behind. The process exits with the run's code, or 1 if it threw.
import { errorText } from './async';

export interface Harness<Config> {
  usage: string;
  readConfig(): Config;
  run(config: Config): Promise<number>;
  /** Idempotent: called on a signal and after the run. */
  stop(): Promise<unknown>;
  log(message: string): void;
}

export async function runHarness<Config>(harness: Harness<Config>): Promise<never> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(harness.usage);
    process.exit(0);
  }
  let config: Config;
  try {
    config = harness.readConfig();
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(2);
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      harness.log(`${signal}: stopping everything`);
      void harness.stop().finally(() => process.exit(130));
    });
  }
  let exitCode = 1;
  try {
    exitCode = await harness.run(config);
  } catch (err) {
    harness.log(`failed: ${errorText(err)}`);
    if (err instanceof Error && err.stack) console.error(err.stack);
  } finally {
    await harness.stop();
  }
  process.exit(exitCode);
}
