// redactSecrets and redactSecretsDeep: what BrowserAI's output loses before anything of it is
// stored or shown (credentials in URLs, token-like parameters, the API token, one-time codes),
// in every encoding an answer may carry, and what it keeps (ordinary URLs, e-mail addresses,
// times). The client applies them to every answer: the last tests check that end to end.
// Unit tests: no Temporal server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BrowserAIClient } from '../src/browserai';
import { MASK, redactCodes, redactCodesDeep, redactSecrets, redactSecretsDeep } from '../src/browserai/redact';
import { codeProblems, MIN_CODE_CHARS } from '../src/contract/one-time-codes';
import { BrowserAIEmulator } from '../src/emulator';

const PASSWORD = 'Zq7Rt2Wv9Xk4Lm8P';
const PROXY_URL = `wss://brd-customer-hl_1a2b3c4d-zone-browser_ai:${PASSWORD}@brd.superproxy.io:9222`;
const TOKEN = 'tok_9f8e7d6c5b4a3210+/=';

/** Asserts the text lost every secret and gained the mask. */
function assertMasked(text: string, ...secrets: string[]): void {
  for (const secret of [PASSWORD, ...secrets]) assert.ok(!text.includes(secret), `"${secret}" left in: ${text}`);
  assert.ok(text.includes(MASK), `nothing masked in: ${text}`);
}

describe('credentials in URLs', () => {
  test('the user information of a URL is masked, whatever the scheme; host and port stay', () => {
    assert.equal(
      redactSecrets(`Connecting to browser: ${PROXY_URL}`),
      'Connecting to browser: wss://•••@brd.superproxy.io:9222',
    );
    for (const scheme of ['ws', 'wss', 'http', 'https', 'ftp', 'socks5', 'postgres+ssl', 'chrome-devtools']) {
      assert.equal(
        redactSecrets(`${scheme}://user:${PASSWORD}@host.example:1234/path?q=1`),
        `${scheme}://•••@host.example:1234/path?q=1`,
      );
    }
    assert.equal(
      redactSecrets('https://ghp_abcdef0123456789@github.com/org/repo.git'),
      'https://•••@github.com/org/repo.git',
      'a user alone (a token) too',
    );
    assert.equal(redactSecrets('WSS://USER:PW@HOST'), 'WSS://•••@HOST');
  });

  test('a password with encoded characters is masked whole, up to the last @ of the authority', () => {
    assert.equal(redactSecrets('https://user:p%40ss%2Fw0rd@host/x'), 'https://•••@host/x');
    assert.equal(redactSecrets('https://user:p@ss@host/x'), 'https://•••@host/x');
    assert.equal(redactSecrets(`(see <${PROXY_URL}>)`), '(see <wss://•••@brd.superproxy.io:9222>)');
  });

  test('a URL percent-encoded once or twice inside a parameter (the inspector link) keeps its encoding around the mask', () => {
    const once = `Inspector: https://brightdata.com/cp/browser_ai/inspect?wss=${encodeURIComponent(PROXY_URL)}&tab=1`;
    assert.equal(
      redactSecrets(once),
      'Inspector: https://brightdata.com/cp/browser_ai/inspect?wss=wss%3A%2F%2F•••%40brd.superproxy.io%3A9222&tab=1',
    );
    const twice = `https://a.example/?next=${encodeURIComponent(`https://b.example/inspect?wss=${encodeURIComponent(PROXY_URL)}`)}`;
    const masked = redactSecrets(twice);
    assertMasked(masked);
    assert.ok(masked.includes('wss%253A%252F%252F•••%2540brd.superproxy.io%253A9222'), masked);
    assert.equal(
      redactSecrets(`u=${encodeURIComponent(PROXY_URL).toLowerCase()}`),
      'u=wss%3a%2f%2f•••%40brd.superproxy.io%3a9222',
    );
    assertMasked(redactSecrets(encodeURIComponent(encodeURIComponent(encodeURIComponent(PROXY_URL)))));
  });

  test('a DevTools-style endpoint parameter without a scheme (wss=, ws=, cdp=, proxy=) loses its user information', () => {
    for (const name of ['wss', 'ws', 'cdp', 'proxy']) {
      const link = `devtools://devtools/bundled/inspector.html?x=1&${name}=user:${PASSWORD}@brd.superproxy.io:9222/devtools/page/1`;
      assert.equal(
        redactSecrets(link),
        `devtools://devtools/bundled/inspector.html?x=1&${name}=•••@brd.superproxy.io:9222/devtools/page/1`,
      );
    }
    assert.equal(redactSecrets(`?wss=${encodeURIComponent(`user:${PASSWORD}@h:1`)}`), '?wss=•••%40h%3A1');
  });

  test('JSON-escaped: in a JSON text inside a string, with \\/ or \\u0040 escapes', () => {
    assert.equal(redactSecrets(JSON.stringify({ log: PROXY_URL })), '{"log":"wss://•••@brd.superproxy.io:9222"}');
    assert.equal(
      redactSecrets(JSON.stringify(PROXY_URL).replaceAll('/', '\\/')),
      '"wss:\\/\\/•••@brd.superproxy.io:9222"',
    );
    assert.equal(redactSecrets(`"wss://u:${PASSWORD}\\u0040h:1"`), '"wss://•••\\u0040h:1"');
    assertMasked(
      redactSecrets(JSON.stringify(JSON.stringify({ inspector: `https://x/?wss=${encodeURIComponent(PROXY_URL)}` }))),
    );
  });
});

describe('token-like query parameters', () => {
  test('the whole value of token, apikey, api_key, access_token, password, pass, secret, auth and key goes', () => {
    for (const name of [
      'token',
      'apikey',
      'api_key',
      'access_token',
      'password',
      'pass',
      'secret',
      'auth',
      'key',
      'API_KEY',
      'Token',
    ]) {
      assert.equal(
        redactSecrets(`https://api.example/v1?a=1&${name}=${PASSWORD}&b=2#top`),
        `https://api.example/v1?a=1&${name}=•••&b=2#top`,
      );
    }
    assert.equal(
      redactSecrets(`login with password=${PASSWORD} then --api-key=${PASSWORD}`),
      'login with password=••• then --api-key=•••',
    );
  });

  test('encoded once or twice, inside another URL: only the parameter of that URL', () => {
    const inner = `https://cb.example/done?token=${PASSWORD}&state=ok`;
    assert.equal(
      redactSecrets(`https://a.example/?next=${encodeURIComponent(inner)}&x=1`),
      'https://a.example/?next=https%3A%2F%2Fcb.example%2Fdone%3Ftoken%3D•••%26state%3Dok&x=1',
    );
    const twice = redactSecrets(`?next=${encodeURIComponent(`https://b.example/?next=${encodeURIComponent(inner)}`)}`);
    assertMasked(twice);
    assert.ok(twice.includes('token%253D•••%2526state%253Dok'), twice);
  });

  test('a value with encoded characters of its own is masked whole', () => {
    assert.equal(redactSecrets(`?token=${encodeURIComponent('a&b=c/d')}&x=1`), '?token=•••&x=1');
  });

  test('names that only contain a secret word are left alone', () => {
    const text = 'monkey=1&bypass=2&keyboard=3&tokens=4&x.password=5&sort_key=6';
    assert.equal(redactSecrets(text), text);
  });
});

describe('secrets named by the caller', () => {
  test('the API token, as is, percent-encoded once or twice (either hex case), and JSON-escaped', () => {
    const spellings = [
      TOKEN,
      encodeURIComponent(TOKEN),
      encodeURIComponent(encodeURIComponent(TOKEN)),
      encodeURIComponent(TOKEN).toLowerCase(),
      JSON.stringify(`"${TOKEN}"`),
    ];
    for (const spelling of spellings) {
      const out = redactSecrets(`before ${spelling} after`, [TOKEN]);
      assert.ok(
        !out.includes(TOKEN) && !out.includes(encodeURIComponent(TOKEN)) && !out.includes('9f8e7d6c5b4a3210'),
        `${spelling} -> ${out}`,
      );
      assert.ok(out.startsWith('before ') && out.endsWith(' after') && out.includes(MASK), out);
    }
  });

  test('one-time codes: every occurrence, a longer code masked whole even when a shorter one is its prefix', () => {
    assert.equal(redactSecrets('Typed 482913; 482913 accepted', ['482913']), 'Typed •••; ••• accepted');
    assert.equal(redactSecrets('Entered 123456', ['1234', '123456']), 'Entered •••');
    assert.equal(redactSecrets('nothing', ['', 'x'.repeat(0)]), 'nothing', 'empty secrets are ignored');
  });
});

describe('one-time codes: masked where they stand as a word', () => {
  test('a code inside a longer number, SKU or word is some other value and stays', () => {
    assert.equal(redactCodes('SKU 7748291331, 482913 typed', ['482913']), `SKU 7748291331, ${MASK} typed`);
    assert.equal(redactCodes('ref AB482913 and 482913X', ['482913']), 'ref AB482913 and 482913X');
    assert.equal(redactCodes('code:482913. (482913) "482913"', ['482913']), `code:${MASK}. (${MASK}) "${MASK}"`);
    assert.equal(redactCodes('otp_482913 otp-482913', ['482913']), `otp_${MASK} otp-${MASK}`);
    assert.equal(
      redactCodes('$482913.50, 1,482913 or 482913. Done', ['482913']),
      `$482913.50, 1,482913 or ${MASK}. Done`,
    );
  });

  test('result tables: only cells that are the code change, never an SKU or price that holds it', () => {
    let seed = 25;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const digits = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 10)).join('');
    for (let table = 0; table < 200; table++) {
      const code = digits(6);
      const rows = Array.from({ length: 20 }, () => ({ sku: digits(10), price: `${digits(3)}.${digits(2)}` }));
      // As in the TOTP task's tables: an SKU that holds the code (`77` + code + `31`), and a price.
      rows[table % 20]!.sku = `${digits(2)}${code}${digits(2)}`;
      rows[(table + 7) % 20]!.price = `${code}.00`;
      const masked = redactCodesDeep({ rows, log: [`Typed ${code} into the form`] }, [code]);
      assert.equal(masked.log[0], `Typed ${MASK} into the form`);
      assert.deepEqual(masked.rows, rows, `table ${table}`);
    }
  });

  test('a code sent with separators is masked where it is echoed without them, and as sent', () => {
    assert.equal(
      redactCodes('Entered 482913; the form showed 482-913', ['482-913']),
      `Entered ${MASK}; the form showed ${MASK}`,
    );
    assert.equal(redactCodes('Entered 7482913', ['482-913']), 'Entered 7482913');
  });

  test('encoded spellings: an escape right before a code ends the word before it', () => {
    assert.equal(redactCodes('GET /verify?otp%3D482913%26x', ['482913']), `GET /verify?otp%3D${MASK}%26x`);
    assert.equal(
      redactCodes('{"msg":"code\\u0022482913\\u0022","l":"\\n482913"}', ['482913']),
      `{"msg":"code\\u0022${MASK}\\u0022","l":"\\n${MASK}"}`,
    );
    assert.equal(redactCodes('Code: ４８２９１３ / 482913', ['482913']), `Code: ４８２９１３ / ${MASK}`);
  });

  test('an API token is still masked everywhere, glued to other text or not', () => {
    assert.equal(redactSecrets('Bearertok_abc123x', ['tok_abc123']), `Bearer${MASK}x`);
  });

  test(`codes of fewer than ${MIN_CODE_CHARS} letters or digits are refused with the minimum named`, () => {
    for (const code of ['12', '123', '1-2-3', '--12--', ''])
      assert.match(codeProblems(code).join(), /at least 4 letters or digits/, code);
    for (const code of ['1234', '12-34', 'AB-12-cd', 'x'.repeat(64)]) assert.deepEqual(codeProblems(code), [], code);
    for (const code of ['x'.repeat(65), '12 34', 7])
      assert.match(codeProblems(code).join(), /4 to 64 letters, digits or dashes/, String(code));
  });
});

describe('no false positives', () => {
  test('ordinary URLs, e-mail addresses, times, ports and prose come back unchanged', () => {
    for (const text of [
      'https://example.com/path?query=1&page=2#frag',
      'http://localhost:8080/api/v1/tasks/6650c2f1a2b3c4d5e6f70812',
      'mail jane.doe@example.com or ops@example.com at 12:30, or 09:15:00',
      'Open https://example.com and read the title; contact me@example.com',
      'https://example.com/users/@jane (profile)',
      'mailto:jane@example.com',
      'git@github.com:org/repo.git',
      'ratio 3:2, a=b, x == y, 100% done, 50%off, C:\\temp\\file',
      'Executing instruction 2/3',
      '',
    ]) {
      assert.equal(redactSecrets(text), text);
    }
  });

  test('crafted text (%3Fws= repeated) is masked as before: a password past many parameters is still found', () => {
    // Each `%3Fws=` starts a new inspector parameter inside the previous one's value; the scans
    // resume instead of reading the same stretch again, and must still reach the `@`.
    const crafted = `https://x/?ws=${'%3Fws='.repeat(5_000)}user:${PASSWORD}@host ${'%3Fws='.repeat(2_000)}`;
    const masked = redactSecrets(crafted);
    assert.ok(!masked.includes(PASSWORD), 'the password is masked');
    assert.ok(masked.endsWith(`${MASK}@host ${'%3Fws='.repeat(2_000)}`), 'what follows the authority is kept');
  });

  test('masking twice changes nothing more', () => {
    const once = redactSecrets(`${PROXY_URL} ?token=${PASSWORD} https://x/?wss=${encodeURIComponent(PROXY_URL)}`, [
      TOKEN,
    ]);
    assert.equal(redactSecrets(once, [TOKEN]), once);
  });
});

describe('deep values', () => {
  test('every string at any depth is redacted, keys included; numbers, booleans and null are kept; the input is not changed', () => {
    const answer = {
      status: 'running',
      progress: { logs: [`Connecting to browser: ${PROXY_URL}`, 'Opening browser'], count: 2 },
      result: [{ html: `<a href="https://x/?token=${PASSWORD}">`, ok: true, none: null }],
      [PROXY_URL]: 'a key is masked as a value is',
      [`token=${TOKEN}`]: 'so is a named secret in a key',
    };
    const original = structuredClone(answer);
    const redacted = redactSecretsDeep(answer, [TOKEN]);
    assert.deepEqual(answer, original, 'the input is untouched');
    assert.deepEqual(redacted, {
      status: 'running',
      progress: { logs: ['Connecting to browser: wss://•••@brd.superproxy.io:9222', 'Opening browser'], count: 2 },
      result: [{ html: '<a href="https://x/?token=•••">', ok: true, none: null }],
      'wss://•••@brd.superproxy.io:9222': 'a key is masked as a value is',
      [`token=${MASK}`]: 'so is a named secret in a key',
    });
    assert.equal(redactSecretsDeep(`x ${TOKEN}`, [TOKEN]), `x ${MASK}`);
    assert.equal(redactSecretsDeep(42, [TOKEN]), 42);
    assert.equal(redactSecretsDeep(null, [TOKEN]), null);
  });

  test('a JSON-escaped answer inside a string, a __proto__ key, deep nesting and a cycle', () => {
    const parsed = JSON.parse(
      `{"__proto__": "${PASSWORD}", "raw": ${JSON.stringify(JSON.stringify({ url: PROXY_URL }))}}`,
    ) as Record<string, unknown>;
    const redacted = redactSecretsDeep(parsed);
    assert.equal(Object.getPrototypeOf(redacted), Object.prototype, 'the copy keeps a plain prototype');
    assert.equal(
      Object.getOwnPropertyDescriptor(redacted, '__proto__')?.value,
      PASSWORD,
      'not a token-like context: kept',
    );
    assert.equal(redacted.raw, '{"url":"wss://•••@brd.superproxy.io:9222"}');

    let deep: unknown = PROXY_URL;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    let inner = redactSecretsDeep(deep);
    for (let i = 0; i < 100_000; i++) inner = (inner as unknown[])[0];
    assert.equal(inner, 'wss://•••@brd.superproxy.io:9222');

    const cyclic: Record<string, unknown> = { log: PROXY_URL };
    cyclic.self = cyclic;
    const copy = redactSecretsDeep(cyclic);
    assert.equal(copy.self, copy);
    assert.equal(copy.log, 'wss://•••@brd.superproxy.io:9222');
  });
});

describe('large and hostile input', () => {
  // No timing asserts: a quadratic or backtracking scan would take minutes here, not a moment.
  test('megabytes of HTML with many URLs and parameters, and repeated pattern fragments, pass in one go', () => {
    const page = `<a href="https://example.com/p?id=1&q=2">x</a> ${PROXY_URL} jane@example.com `.repeat(40_000);
    const out = redactSecrets(page, [TOKEN]);
    assert.ok(out.length > 3_000_000);
    assert.ok(!out.includes(PASSWORD));
    for (const fragment of [
      '://',
      '%3A%2F%2F',
      '&ws=',
      '?wss=a',
      'token=',
      '%252540',
      'a@',
      '\\u0040',
      '=:',
      'wss://' + 'a'.repeat(9_000),
    ]) {
      const hostile = '=' + fragment.repeat(Math.ceil(2_000_000 / fragment.length));
      assert.equal(typeof redactSecrets(hostile, [TOKEN]), 'string', fragment);
    }
  });
});

describe('the client redacts every answer', () => {
  let emulator: BrowserAIEmulator;
  let client: BrowserAIClient;
  before(async () => {
    emulator = await BrowserAIEmulator.start({ apiToken: TOKEN });
    client = new BrowserAIClient({ apiToken: TOKEN, baseUrl: emulator.baseUrl });
  });
  after(async () => {
    await emulator?.close();
  });

  const dirty = (body: Record<string, unknown>) => ({
    ...body,
    note: `token ${TOKEN} ${encodeURIComponent(TOKEN)}`,
    progress: {
      status: 'running',
      logs: [`Connecting to browser: ${PROXY_URL}`, `Inspector: https://x/?wss=${encodeURIComponent(PROXY_URL)}`],
    },
    result: { page: `see ${PROXY_URL}` },
    error: `failed at https://api.example/?apikey=${PASSWORD}`,
  });

  test('task answers, instructions answers, stop answers, results and error messages', async () => {
    emulator.inject({ method: 'POST', path: /^\/tasks$/, answer: { transform: dirty } });
    const created = await client.createTask({
      instructions: [{ action: 'Crawl [duration=30s]' }],
      geoLocation: { country: 'US' },
      project: 'p',
      type: 'crawler_automation',
    });
    const id = created.executionId;
    emulator.inject({ method: 'GET', path: /^\/tasks\//, answer: { transform: dirty } });
    emulator.inject({ method: 'POST', path: /\/instructions$/, answer: { transform: dirty } });
    emulator.inject({ method: 'POST', path: /\/command$/, answer: { json: `stopped ${PROXY_URL}` } });
    emulator.inject({
      method: 'GET',
      path: /^\/results\//,
      answer: {
        json: { results: [{ result: PROXY_URL, screenshot_url: `https://s.example/a.png?token=${PASSWORD}` }] },
      },
    });
    emulator.inject({
      method: 'GET',
      path: /^\/tasks\/exec_missing/,
      status: 500,
      error: `proxy ${PROXY_URL} failed (token ${TOKEN})`,
    });
    const answers = [
      created,
      await client.getTask(id),
      await client.appendInstructions(id, { instructions: [{ action: 'more' }] }),
      await client.stopTask(id),
      await client.getResults(id),
    ];
    const error = await client.getTask('exec_missing').catch((err: unknown) => err as Error & { apiMessage?: string });
    for (const answer of answers) assertMasked(JSON.stringify(answer), TOKEN, encodeURIComponent(TOKEN));
    assertMasked(`${error.message} ${error.apiMessage}`, TOKEN);
    const task = answers[1] as Awaited<ReturnType<BrowserAIClient['getTask']>>;
    assert.deepEqual(task.progress?.logs, [
      'Connecting to browser: wss://•••@brd.superproxy.io:9222',
      'Inspector: https://x/?wss=wss%3A%2F%2F•••%40brd.superproxy.io%3A9222',
    ]);
    assert.equal(task.error, 'failed at https://api.example/?apikey=•••');
  });

  test('saved tasks: every field but the instruction texts, which a run of the saved task types', async () => {
    const instructions = [{ action: `Log in at https://admin:${PASSWORD}@intranet.example/` }];
    const name = `creds-${Date.now()}`;
    emulator.inject({
      method: 'POST',
      path: /^\/saved_tasks$/,
      answer: { transform: (body: Record<string, unknown>) => ({ ...body, message: `saved with ${TOKEN}` }) },
    });
    const created = await client.createSavedTask({
      name,
      instructions,
      type: 'natural_language',
      project: `p?token=${PASSWORD}`,
      geoLocation: { country: 'US' },
      cron_settings: '',
    });
    assertMasked(JSON.stringify(created), TOKEN);
    const read = await client.getSavedTask(name);
    assert.equal(read.instructions[0]!.action, instructions[0]!.action);
    assert.equal(read.project, 'p?token=•••');
    const listed = (await client.listSavedTasks()).find((task) => task.name === name)!;
    assert.equal(listed.instructions[0]!.action, instructions[0]!.action);
    assert.equal(listed.project, 'p?token=•••');
  });
});
