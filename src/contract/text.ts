// Text and JSON helpers the contract's checks share: sizes in UTF-8 bytes, cuts between
// characters, plain objects. Pure, for the workflow bundle and the starters alike.

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The size of a value as JSON, in UTF-8 bytes (0 for what JSON cannot hold). */
export function jsonBytes(value: unknown): number {
  try {
    return utf8Length(JSON.stringify(value) ?? '');
  } catch {
    return 0; // a cycle: the payload converter refuses it anyway
  }
}

/** The longest prefix of `text` within `maxBytes` of UTF-8, cut between characters, never inside one. */
export function utf8Prefix(text: string, maxBytes: number): string {
  let prefix = '';
  let bytes = 0;
  for (const char of text) {
    bytes += utf8Length(char);
    if (bytes > maxBytes) break;
    prefix += char;
  }
  return prefix;
}

export function codePoints(text: string): number {
  return Array.from(text).length;
}

function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4; // a surrogate pair: one code point
      i++;
    } else bytes += 3; // a lone surrogate is written as U+FFFD, 3 bytes
  }
  return bytes;
}
