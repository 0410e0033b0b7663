// `replay FILE.json [...]`: replays histories exported from a cluster against the workflow code of
// this installation (or of `--workflows`), so a team checks an upgrade against its own running
// workflows before deploying it. Loaded only when the command runs (it loads the worker SDK).
import { resolve } from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { encryptedDataConverterFromEnv } from '../codec/encryption-codec';
import { coreLogFilter } from '../telemetry/runtime';
import { replayHistoryFiles, type ReplayReport } from '../replay/replay';

/** Exit codes: 0 every history replayed, 1 one or more would break (or failed), 2 a file could not be read. */
export async function replayCommand(
  files: string[],
  workflowsPath: string | undefined,
  historyTimeoutMs?: number,
): Promise<number> {
  // The replayer logs each failed workflow task as a warning: the report below says it once, plainly.
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: coreLogFilter('ERROR'), forward: {} } },
  });
  console.error(
    `Replaying ${files.length} ${files.length === 1 ? 'history' : 'histories'} (bundling the workflows first)...`,
  );
  const counts: Record<ReplayReport['outcome'], number> = {
    replayed: 0,
    nondeterministic: 0,
    failed: 0,
    unreadable: 0,
  };
  for await (const report of replayHistoryFiles(files, {
    // Relative to where the command runs, as a user types it.
    workflowsPath: workflowsPath === undefined ? undefined : resolve(workflowsPath),
    // Encrypted histories (TEMPORAL_PAYLOAD_KEY on the workers) are read with the same key.
    dataConverter: encryptedDataConverterFromEnv(process.env),
    historyTimeoutMs,
  })) {
    counts[report.outcome]++;
    console.log(reportLine(report));
  }
  console.log(
    `\n${counts.replayed} replayed, ${counts.nondeterministic} nondeterministic, ${counts.failed} failed, ${counts.unreadable} unreadable`,
  );
  if (counts.nondeterministic + counts.failed > 0) {
    console.log(
      'Do not deploy this code while such workflows run: put the change behind patched() (docs/design/recorded-histories.md, "The rule"), ' +
        'or let them finish on the version they started on.',
    );
    return 1;
  }
  return counts.unreadable > 0 ? 2 : 0;
}

function reportLine(report: ReplayReport): string {
  const what = report.workflowId
    ? `${report.workflowId} (${report.workflowType ?? 'unknown type'}, ${report.events} events)`
    : '';
  const where = report.divergesAt
    ? `at event ${report.divergesAt.eventId}${report.divergesAt.eventType ? ` (${report.divergesAt.eventType})` : ''}: `
    : '';
  const label = { replayed: 'ok', nondeterministic: 'NONDETERMINISTIC', failed: 'FAILED', unreadable: 'UNREADABLE' }[
    report.outcome
  ];
  return `${label.padEnd(16)} ${report.file}${what ? `  ${what}` : ''}${report.detail ? `\n${indent(where + report.detail)}` : ''}`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `                 ${line}`)
    .join('\n');
}
