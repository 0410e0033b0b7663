// `browserai-temporal/testing`: the BrowserAI emulator, for a team's own tests. It answers over
// HTTP as the real service was seen to (or as its interface text documents), and injects faults
// (5xx, 429 with Retry-After, hangs, delays, lost answers) in-process or over HTTP.
export * from './emulator';
