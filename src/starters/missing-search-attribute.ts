/**
 * Whether a start or schedule create was refused because the namespace lacks one of our
 * search attributes (the server says so in the gRPC cause, e.g. "has no mapping defined for
 * search attribute BrowserAIProject"); the starters then try again without them.
 */
export function isMissingSearchAttribute(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (/search attribute/i.test(e.message) && /(no mapping|not defined|unknown|not registered|invalid)/i.test(e.message)) return true;
  }
  return false;
}
