// Removes secrets from text BrowserAI sends back, before anything of it is stored or shown.
// BrowserAI's engine logs carry the browser's proxy URL with its password
// (`wss://<user>:<password>@<proxy-host>:<port>`) and an inspector link that embeds that URL,
// percent-encoded, in a query parameter (docs/browserai.md). Whatever this project keeps
// of BrowserAI's output (activity results and so history, heartbeats, current details, the
// `state` query, logs) passes through here first.
//
// What is masked, with MASK in its place and the rest left readable:
// - the user information of any `scheme://user:password@host` URL, whatever the scheme
//   (`wss://•••@brd.superproxy.io:9222`), and of the value of a `wss=`, `ws=`, `cdp=` or
//   `proxy=` query parameter, which DevTools-style inspector links give without a scheme;
// - the whole value of a token-like query parameter (`token=`, `apikey=`, `password=`, ...);
// - every occurrence of a secret the caller names (the API token), as is, percent-encoded once
//   or twice, or JSON-escaped;
// - a one-time code (redactCodes) in the same spellings, and also without its separators
//   (`482-913` as `482913`), but only where it stands as a word of its own: a code is a few
//   digits, which a longer number, an SKU or a price may hold (docs/design/masking-codes.md).
// The patterns are recognised in plain text, percent-encoded (once, twice, more: a URL inside a
// parameter of a URL inside a parameter), with `\/` or `\u00XX` JSON escapes, and in any mix.
// An `@`, `/`, `&` or `=` counts whatever its encoding, so an encoded URL is read as the URL
// it encodes; a password's own characters encoded one level deeper than the URL around them
// (`p%40ss` in a plain URL) are part of the password, as in a browser.
//
// In doubt it masks more: the user information ends at the last `@` of the authority, so
// `https://host,me@example.com` loses `host,me`. Ordinary URLs, e-mail addresses and times
// (`12:30`) have nothing to mask and come back unchanged.
//
// Pure and linear: the text is read once, plus look-aheads that are bounded or never read the
// same stretch twice at one encoding depth (no regular expression that could backtrack; an
// authority scan resumes where the last one of its kind stopped, see AuthorityScanner), so
// megabytes of results cost a fraction of a second, crafted ones included. No Node built-ins: any code may import it,
// the workflow bundle included.

/** What a secret is replaced with; current details already show codes this way. */
export const MASK = '•••';

/**
 * `text` with URL credentials, token-like query parameters and every spelling of each of
 * `secrets` replaced by {@link MASK}. Secrets are matched exactly and everywhere, inside longer
 * words too (an API token glued to other text is still the token); empty ones are ignored. One-time
 * codes go to {@link redactCodes} instead.
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  return redactText(text, { everywhere: spellingsOf(secrets), asWords: [] });
}

/**
 * `text` with each of `codes` (one-time codes) replaced by {@link MASK} where it stands as a word
 * of its own, in every spelling {@link redactSecrets} knows and also without its separators (a
 * code sent as `482-913` is masked where BrowserAI echoes `482913`), plus what redactSecrets masks
 * without being told (URL credentials, token-like parameters). A code inside a longer run of
 * letters or digits (`7748291331` holding `482913`) is left alone: it is some other value.
 */
export function redactCodes(text: string, codes: readonly string[]): string {
  return redactText(text, { everywhere: [], asWords: codeSpellingsOf(codes) });
}

/** {@link redactCodes} applied to every string of a JSON value, as {@link redactSecretsDeep} does. */
export function redactCodesDeep<T>(value: T, codes: readonly string[]): T {
  return redactDeep(value, { everywhere: [], asWords: codeSpellingsOf(codes) });
}

/**
 * A copy of a JSON value with {@link redactSecrets} applied to every string in it, at any depth,
 * object keys included (an answer may key a map by a proxy URL); numbers, booleans and null are
 * kept as they are. Nesting depth costs no stack
 * (an answer nested a hundred thousand levels deep is copied like any other), and a value that
 * refers to itself is copied with the same shape.
 */
export function redactSecretsDeep<T>(value: T, secrets: readonly string[] = []): T {
  return redactDeep(value, { everywhere: spellingsOf(secrets), asWords: [] });
}

function redactDeep<T>(value: T, spellings: Spellings): T {
  if (typeof value === 'string') return redactText(value, spellings) as T;
  if (!isContainer(value)) return value;
  const copies = new Map<object, Container>();
  const copyOf = (source: Container): Container => {
    let copy = copies.get(source);
    if (!copy) {
      copy = Array.isArray(source) ? [] : {};
      copies.set(source, copy);
      pending.push([source, copy]);
    }
    return copy;
  };
  const pending: Array<[Container, Container]> = [];
  const root = copyOf(value);
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [source, copy] = next;
    for (const key of Object.keys(source)) {
      const item = (source as Record<string, unknown>)[key];
      const redacted = typeof item === 'string' ? redactText(item, spellings) : isContainer(item) ? copyOf(item) : item;
      setOwn(copy, Array.isArray(copy) ? key : redactText(key, spellings), redacted);
    }
  }
  return root as T;
}

type Container = Record<string, unknown> | unknown[];

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

/** Plain assignment of `__proto__` (a key JSON.parse may produce) would change the copy's prototype. */
function setOwn(target: Container, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else (target as Record<string, unknown>)[key] = value;
}

// ---- Named secrets ------------------------------------------------------------------------

/**
 * Every way a secret may be written in an answer: as is, percent-encoded once and twice (with
 * upper- or lower-case hex digits), and escaped for a JSON string. Longest first, so a secret
 * that contains another is masked whole.
 */
function spellingsOf(secrets: readonly string[]): string[] {
  const spellings = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret === '') continue;
    spellings.add(secret);
    spellings.add(JSON.stringify(secret).slice(1, -1));
    let encoded = secret;
    for (let layer = 0; layer < 2; layer++) {
      try {
        encoded = encodeURIComponent(encoded);
      } catch {
        break; // a lone surrogate: it has no percent-encoding
      }
      spellings.add(encoded);
      spellings.add(encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()));
    }
  }
  return [...spellings].sort((a, b) => b.length - a.length);
}

/** What to mask: spellings of secrets matched anywhere, and of codes matched as words only. */
interface Spellings {
  everywhere: readonly string[];
  asWords: readonly string[];
}

/** A code's spellings ({@link spellingsOf}), of the code as given and of the code without its separators. */
function codeSpellingsOf(codes: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const code of codes) {
    if (typeof code !== 'string' || code === '') continue;
    forms.add(code);
    const bare = code.replace(CODE_SEPARATORS, '');
    if (bare !== '') forms.add(bare);
  }
  return spellingsOf([...forms]);
}

/** What people and sites put between a code's groups (`482-913`, `482 913`, `482.913`). */
const CODE_SEPARATORS = /[-\s.]/g;

function redactText(text: string, spellings: Spellings): string {
  let out = text;
  for (const spelling of spellings.everywhere) if (out.includes(spelling)) out = out.replaceAll(spelling, MASK);
  for (const spelling of spellings.asWords) if (out.includes(spelling)) out = replaceWords(out, spelling);
  // Every pattern needs an `@` or an `=`, plain or encoded: most texts (log lines, statuses) have none.
  return MAY_HOLD_PATTERN.test(out) ? maskPatterns(out) : out;
}

const MAY_HOLD_PATTERN = /[@=%\\]/;

// ---- Codes, as words ----------------------------------------------------------------------

/**
 * `text` with every occurrence of `spelling` that stands as a word replaced by MASK: no letter or
 * digit right before or after it (where the spelling itself starts or ends with one), nor a
 * decimal point or thousands separator that continues a number (`482913.50`). An escape
 * just before it (`%3D`, `\u0022`, `\n`) ends the word before, as the character it encodes
 * would. Linear in the text for a spelling of bounded length (codes are at most 64 characters).
 */
function replaceWords(text: string, spelling: string): string {
  const checkBefore = isWordChar16(spelling, 0);
  const checkAfter = isWordChar16(spelling, spelling.length - 1);
  const parts: string[] = [];
  let from = 0;
  for (let at = text.indexOf(spelling); at >= 0;) {
    const end = at + spelling.length;
    if ((!checkBefore || !wordGoesOnBefore(text, at)) && (!checkAfter || !wordGoesOnAfter(text, end))) {
      parts.push(text.slice(from, at), MASK);
      from = end;
      at = text.indexOf(spelling, end);
    } else {
      at = text.indexOf(spelling, at + 1);
    }
  }
  if (parts.length === 0) return text;
  parts.push(text.slice(from));
  return parts.join('');
}

/** Whether the word goes on at `end`: a letter or a digit, or a decimal point or separator between digits (`482913.50`). */
function wordGoesOnAfter(text: string, end: number): boolean {
  return isWordChar16(text, end) || (isNumberSeparator(text, end) && isDigit(text, end - 1) && isDigit(text, end + 1));
}

/** Whether a letter or digit of the same word stands right before `at` (not one that ends an escape), or a number goes on there (`1,482913`). */
function wordGoesOnBefore(text: string, at: number): boolean {
  if (isNumberSeparator(text, at - 1) && isDigit(text, at - 2) && isDigit(text, at)) return true;
  if (!isWordChar16(text, at - 1)) return false;
  if (text.charCodeAt(at - 3) === PERCENT && hexPair(text, at - 2) >= 0) return false; // %3D
  if (text.charCodeAt(at - 2) === BACKSLASH && 'bfnrt'.includes(text[at - 1]!)) return false; // \n
  return !(
    text.charCodeAt(at - 6) === BACKSLASH &&
    text[at - 5] === 'u' &&
    hexPair(text, at - 4) >= 0 &&
    hexPair(text, at - 2) >= 0
  ); // \u0022
}

/** Whether the character at `at` (a UTF-16 unit, surrogates read as their code point) is a letter or a digit. */
function isWordChar16(text: string, at: number): boolean {
  if (at < 0 || at >= text.length) return false;
  const c = text.charCodeAt(at);
  if (c < 0x80) return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
  const point = c >= 0xdc00 && c <= 0xdfff && at > 0 ? text.codePointAt(at - 1)! : text.codePointAt(at)!;
  return LETTER_OR_DIGIT.test(String.fromCodePoint(point));
}

const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;

function isDigit(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return c >= 0x30 && c <= 0x39;
}

function isNumberSeparator(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return c === 0x2e || c === 0x2c;
}

// ---- URL credentials and token-like parameters ------------------------------------------

/** Query parameters whose whole value is a secret. Matched by exact name, case-insensitively. */
const TOKEN_PARAMETERS = new Set([
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'auth_token',
  'apikey',
  'api_key',
  'api-key',
  'key',
  'secret',
  'client_secret',
  'password',
  'passwd',
  'pwd',
  'pass',
  'auth',
]);

/** Query parameters whose value is a browser or proxy endpoint, possibly `user:password@host` without a scheme. */
const ENDPOINT_PARAMETERS = new Set(['wss', 'ws', 'cdp', 'proxy']);

/** Longest parameter name worth reading; longer words are never one of the names above. */
const MAX_NAME_LENGTH = 16;
/** Encoding layers read through (`%252540` is two); deeper ones stay as they are. */
const MAX_DEPTH = 4;
/** How far an authority (user information and host) is looked at; no real one is this long. */
const MAX_AUTHORITY_CHARS = 8 * 1024;

// Decoded characters the patterns are made of.
const PERCENT = 0x25;
const AMPERSAND = 0x26;
const SLASH = 0x2f;
const COLON = 0x3a;
const EQUALS = 0x3d;
const QUESTION = 0x3f;
const AT = 0x40;
const BACKSLASH = 0x5c;
const HASH = 0x23;

/**
 * Reads the text one character at a time as it would read once decoded: `%40`, `%2540` and
 * `\u0040` are each one `@`. After {@link read}, `code` is the decoded character, `depth` how
 * many percent-encoding layers it was under (0: as is), and `end` where the next one starts.
 */
class DecodingReader {
  code = 0;
  depth = 0;
  end = 0;

  constructor(readonly text: string) {}

  read(at: number): void {
    const text = this.text;
    const c = text.charCodeAt(at);
    this.code = c;
    this.depth = 0;
    this.end = at + 1;
    if (c === PERCENT) {
      let value = hexPair(text, at + 1);
      if (value < 0) return;
      let end = at + 3;
      let depth = 1;
      // `%25` is an encoded `%`: what follows it is one more layer down.
      while (value === PERCENT && depth < MAX_DEPTH) {
        const inner = hexPair(text, end);
        if (inner < 0) break;
        value = inner;
        end += 2;
        depth++;
      }
      this.code = value;
      this.depth = depth;
      this.end = end;
    } else if (c === BACKSLASH) {
      const next = text.charCodeAt(at + 1);
      if (next === SLASH) {
        this.code = SLASH;
        this.end = at + 2;
      } else if (next === 0x75 /* u */) {
        const high = hexPair(text, at + 2);
        const low = hexPair(text, at + 4);
        if (high === 0 && low >= 0 && low < 0x80) {
          this.code = low;
          this.end = at + 6;
        }
      }
    }
  }
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** The byte two hex digits at `at` spell, or -1. */
function hexPair(text: string, at: number): number {
  if (at + 1 >= text.length) return -1;
  const high = hexDigit(text.charCodeAt(at));
  const low = hexDigit(text.charCodeAt(at + 1));
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

/** Characters a parameter name or a scheme is made of. */
function isWordChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x5f ||
    c === 0x2d ||
    c === 0x2e ||
    c === 0x2b
  );
}

/** Characters no URL holds unencoded, at any depth: whatever they are in, it ends there. */
function endsAnyUrl(c: number): boolean {
  return (
    c <= 0x20 ||
    c === 0x7f ||
    c === 0x22 ||
    c === 0x3c ||
    c === 0x3e ||
    c === 0x60 ||
    c === 0x7b ||
    c === 0x7d ||
    c === 0x7c ||
    c === 0x5e ||
    c === BACKSLASH
  );
}

/** The masked stretches of a text, in order and disjoint, as [start, end) pairs. */
type Stretches = number[];

function maskPatterns(text: string): string {
  const stretches: Stretches = [];
  const reader = new DecodingReader(text);
  const scout = new DecodingReader(text);
  const authorities = new AuthorityScanner(text);
  // The word being read (a parameter name, a scheme), lower-cased; longer than any name: not kept.
  const word: number[] = [];
  let inWord = false;
  let beforeWord = -1; // the decoded character before it
  let previous = -1;
  let at = 0;
  while (at < text.length) {
    reader.read(at);
    const { code, depth, end } = reader;
    if (isWordChar(code)) {
      if (!inWord) {
        inWord = true;
        beforeWord = previous;
        word.length = 0;
      }
      if (word.length <= MAX_NAME_LENGTH) word.push(code >= 0x41 && code <= 0x5a ? code | 0x20 : code);
      previous = code;
      at = end;
      continue;
    }
    const name = inWord && code === EQUALS ? parameterName(word) : '';
    inWord = false;
    previous = code;
    let maskEnd = -1;
    if (code === COLON && isSchemeSeparator(scout, end, depth)) {
      // `scheme://`: the authority starts after the two slashes.
      const authority = scout.end;
      const userinfoEnd = authorities.userinfoEnd(authority, depth, false);
      if (userinfoEnd > authority) {
        stretches.push(authority, userinfoEnd);
        maskEnd = userinfoEnd;
      }
    } else if (TOKEN_PARAMETERS.has(name)) {
      const valueEnd = parameterValueEnd(scout, end, depth);
      if (valueEnd > end) {
        stretches.push(end, valueEnd);
        maskEnd = valueEnd;
      }
    } else if (
      ENDPOINT_PARAMETERS.has(name) &&
      (beforeWord === QUESTION || beforeWord === AMPERSAND) &&
      !startsWithScheme(scout, end)
    ) {
      // A value with a scheme is a URL (often percent-encoded): read on, and the `scheme://`
      // case masks only its user information.
      const userinfoEnd = authorities.userinfoEnd(end, depth, true);
      if (userinfoEnd > end) {
        stretches.push(end, userinfoEnd);
        maskEnd = userinfoEnd;
      }
    }
    if (maskEnd >= 0) {
      at = maskEnd;
      previous = -1;
    } else {
      at = end;
    }
  }
  return stretches.length === 0 ? text : spliceMasks(text, stretches);
}

/** A word as a parameter name (`--password` is `password`); '' when longer than any name of interest. */
function parameterName(word: readonly number[]): string {
  if (word.length > MAX_NAME_LENGTH) return '';
  let from = 0;
  while (from < word.length && word[from] === 0x2d) from++;
  return String.fromCharCode(...word.slice(from));
}

/** Whether the text at `at` starts with `scheme://`, in any encoding. */
function startsWithScheme(scout: DecodingReader, at: number): boolean {
  const text = scout.text;
  for (let length = 0; at < text.length && length <= MAX_NAME_LENGTH; length++) {
    scout.read(at);
    if (scout.code === COLON) return length > 0 && isSchemeSeparator(scout, scout.end, scout.depth);
    if (!isWordChar(scout.code)) return false;
    at = scout.end;
  }
  return false;
}

/** Whether `//` follows at `at`, at the depth of the colon before it; `scout.end` is then past it. */
function isSchemeSeparator(scout: DecodingReader, at: number, depth: number): boolean {
  if (at >= scout.text.length) return false;
  scout.read(at);
  if (scout.code !== SLASH || scout.depth !== depth || scout.end >= scout.text.length) return false;
  scout.read(scout.end);
  return scout.code === SLASH && scout.depth === depth;
}

/**
 * Finds where the user information of an authority ends (at its last `@`), or -1 when it has none.
 * The authority ends at a `/`, `?` or `#` (and, for a parameter's value, `&`) at the URL's own
 * depth or shallower, or at anything no URL holds; characters encoded deeper belong to it, so a
 * password's `%2F` does not end it early.
 *
 * Each kind of scan (URL depth, parameter value or not) remembers how far it read without
 * meeting an `@`: an authority that starts inside that stretch (`%3Fws=` repeated, each a new
 * `?ws=` inside the previous one's authority) resumes there instead of reading it again. Without
 * this, 2 MB of such text cost 8 KiB of reading per occurrence: seconds of a blocked event loop.
 */
class AuthorityScanner {
  readonly #scout: DecodingReader;
  /** Per kind of scan: the stretch [from, to) read without an `@`, and whether it ended at the authority's end. */
  readonly #read = new Map<number, { from: number; to: number; ended: boolean }>();

  constructor(text: string) {
    this.#scout = new DecodingReader(text);
  }

  userinfoEnd(start: number, depth: number, isParameterValue: boolean): number {
    const scout = this.#scout;
    const text = scout.text;
    const kind = depth * 2 + (isParameterValue ? 1 : 0);
    const known = this.#read.get(kind);
    const limit = Math.min(text.length, start + MAX_AUTHORITY_CHARS);
    let at = start;
    if (known && start >= known.from && start < known.to) {
      // No `@` from here to `to`, where the same authority ends or where the last scan's limit stopped it.
      if (known.ended) return -1;
      at = known.to;
    }
    let lastAt = -1;
    let ended = false;
    for (; at < limit; at = scout.end) {
      scout.read(at);
      const c = scout.code;
      if (
        endsAnyUrl(c) ||
        (scout.depth <= depth && (c === SLASH || c === QUESTION || c === HASH || (isParameterValue && c === AMPERSAND)))
      ) {
        ended = true;
        break;
      }
      if (c === AT) lastAt = at;
    }
    if (lastAt < 0) this.#read.set(kind, { from: start, to: at, ended: ended || at >= text.length });
    return lastAt;
  }
}

/** Where a parameter's value starting at `start` ends: at `&` or `#` of its own depth or shallower, or at anything no URL holds. */
function parameterValueEnd(scout: DecodingReader, start: number, depth: number): number {
  const text = scout.text;
  let at = start;
  while (at < text.length) {
    scout.read(at);
    const c = scout.code;
    if (endsAnyUrl(c)) break;
    if (scout.depth <= depth && (c === AMPERSAND || c === HASH)) break;
    at = scout.end;
  }
  return at;
}

function spliceMasks(text: string, stretches: Stretches): string {
  const parts: string[] = [];
  let from = 0;
  for (let i = 0; i < stretches.length; i += 2) {
    parts.push(text.slice(from, stretches[i]), MASK);
    from = stretches[i + 1]!;
  }
  parts.push(text.slice(from));
  return parts.join('');
}
