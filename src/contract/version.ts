// Kept in step with package.json by test/units.test.ts; read at build time so the
// user-agent needs no file access at run time.
export const PACKAGE_NAME = 'browserai-temporal';
export const PACKAGE_VERSION = '0.1.0';
