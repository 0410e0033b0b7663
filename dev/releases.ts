// Which versions of the package are released, and where each release's recorded histories live:
// shared by `npm run record-histories` (which never overwrites a released version's histories) and
// test/replay.test.ts (which replays every release's). A version is released once its CHANGELOG.md
// heading carries a date (`## [0.1.0] - 2026-01-05`); `## [0.1.0] - Unreleased` is not yet.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
export const HISTORIES_DIR = join(ROOT, 'test', 'histories');
export const CHANGELOG = join(ROOT, 'CHANGELOG.md');

/** package.json's version: the release the code in this tree becomes. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The versions CHANGELOG.md lists with a release date, newest first. */
export function releasedVersions(changelog = readFileSync(CHANGELOG, 'utf8')): string[] {
  return [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+[^\]]*)\] - \d{4}-\d{2}-\d{2}\s*$/gm)].map((m) => m[1]!);
}

/** The versions CHANGELOG.md lists at all, dated or not. */
export function listedVersions(changelog = readFileSync(CHANGELOG, 'utf8')): string[] {
  return [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+[^\]]*)\]/gm)].map((m) => m[1]!);
}
