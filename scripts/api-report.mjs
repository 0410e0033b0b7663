// The API report: every entry point of the package's `exports`, its exported names and their
// signatures, as API Extractor reads the built declarations (lib/src/**/*.d.ts), checked in under
// api/ (docs/design/public-surface.md). `npm run api-report` fails when the surface differs from the
// report; `npm run api-report -- --update` rewrites it, so a new or changed public name is a diff
// someone reads.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel } from '@microsoft/api-extractor';

const ROOT = resolve(import.meta.dirname, '..');
const update = process.argv.includes('--update');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** `./workflows` -> { name: 'browserai-temporal-workflows', declarations: 'lib/src/workflows/index.d.ts' }. */
const entries = Object.entries(pkg.exports)
  .filter(([, target]) => typeof target === 'object' && target.types)
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([subpath, target]) => ({
    subpath: subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
    name: subpath === '.' ? pkg.name : `${pkg.name}-${subpath.slice(2).replaceAll('/', '-')}`,
    declarations: join(ROOT, target.types),
  }));

/** API Extractor's settings for one entry point: the report only (no rollup, no doc model). */
function configFor(entry) {
  return ExtractorConfig.prepare({
    configObjectFullPath: join(ROOT, 'api', 'api-extractor.json'),
    packageJsonFullPath: join(ROOT, 'package.json'),
    configObject: {
      projectFolder: ROOT,
      mainEntryPointFilePath: entry.declarations,
      compiler: { tsconfigFilePath: join(ROOT, 'tsconfig.build.json') },
      apiReport: {
        enabled: true,
        reportFileName: `${entry.name}.api.md`,
        reportFolder: join(ROOT, 'api'),
        reportTempFolder: join(ROOT, 'lib', 'api-report'),
        // A type of a public signature that this entry point does not export (another may, or a
        // client's namespace) is shown whole, so a change to it is a diff here too.
        includeForgottenExports: true,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // Release tags (@public, @beta) are not how this package marks its surface: the entry points are.
        extractorMessageReporting: {
          default: { logLevel: ExtractorLogLevel.Warning },
          'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None },
          // TypeDoc checks these across every entry point at once (`npm run docs`): a type of a public
          // signature that no entry point exports, a comment missing, a link that does not resolve.
          // API Extractor sees one entry point at a time, so a type another entry exports looks forgotten.
          'ae-forgotten-export': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          'ae-undocumented': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          'ae-unresolved-link': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
        },
        // TypeDoc reads the comments (`npm run docs`); its block tags (@minimum, ...) are not TSDoc's.
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
      },
    },
  });
}

const configs = entries.map(configFor);
// One program for every entry point: each analysis then takes a second or two instead of a fresh compile.
const compilerState = CompilerState.create(configs[0], {
  additionalEntryPoints: entries.map((entry) => entry.declarations),
});
const changed = [];
let failed = false;
for (const [i, config] of configs.entries()) {
  const result = Extractor.invoke(config, {
    localBuild: update,
    compilerState,
    showVerboseMessages: false,
    messageCallback: (message) => {
      // The report's own notices are said once, below, for every entry point.
      if (message.messageId.startsWith('console-') && message.logLevel !== ExtractorLogLevel.Error)
        message.handled = true;
    },
  });
  if (result.apiReportChanged) changed.push(entries[i].subpath);
  if (!result.succeeded && !(update && result.apiReportChanged && result.errorCount === 0)) failed = true;
}
if (changed.length > 0 && update)
  console.log(`api-report: rewrote the report of ${changed.join(', ')}: review and commit api/.`);
else if (changed.length > 0) {
  console.error(
    `api-report: the public surface of ${changed.join(', ')} differs from api/. If the change is meant, run ` +
      '`npm run api-report -- --update` and commit api/ (docs/design/public-surface.md); the new report is in lib/api-report/.',
  );
  failed = true;
} else if (!failed) console.log(`api-report: ${entries.length} entry points match api/.`);
process.exit(failed ? 1 : 0);
