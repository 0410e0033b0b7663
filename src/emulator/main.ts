// Standalone emulator for `npm run emulator`, a worker under development, or the benchmark:
// configured by environment so it can run in a container next to the worker.
// BROWSERAI_EMULATOR_MODE and BROWSERAI_EMULATOR_ENDED_ANSWER choose the answers (options-from-env.ts).

import { emulatorOptionsFromEnv } from './options-from-env';
import { BrowserAIEmulator } from './server';

async function main(): Promise<void> {
  const port = Number(process.env.EMULATOR_PORT ?? 8787);
  const emulator = await BrowserAIEmulator.start({
    port,
    host: process.env.EMULATOR_HOST ?? '127.0.0.1',
    apiToken: process.env.EMULATOR_API_TOKEN ?? 'emulator-token',
    // More names the control endpoints answer to, e.g. a container's service name.
    controlHosts: (process.env.EMULATOR_CONTROL_HOSTS ?? '').split(',').filter((host) => host.trim() !== ''),
    ...emulatorOptionsFromEnv(process.env),
  });
  // The token is not printed: it may be a real-looking secret copied from a deployment's env.
  console.log(
    `BrowserAI emulator listening on ${emulator.baseUrl} (${emulator.mode} answers, ended tasks answer ${emulator.endedTaskAnswer})`,
  );

  const shutdown = (signal: NodeJS.Signals): void => {
    console.log(`BrowserAI emulator: ${signal} received, shutting down`);
    emulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  console.error('BrowserAI emulator failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
