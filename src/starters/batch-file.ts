// Reading a batch from a file (`batch run FILE`): JSON Lines, or CSV with a header row. The file
// is streamed, never held: checked once before anything starts, then read again as the batch
// takes its items, so a million lines need the memory of a page (docs/design/batch-client.md).
// Each item keeps the line it came from, so every problem is reported with its line number.
import { isUtf8 } from 'node:buffer';
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { extname } from 'node:path';
import { CsvError, parse } from 'csv-parse';
import type { BatchItem } from '../contract/batch-messages';
import { MAX_INPUT_BYTES, type BrowserTaskInput } from '../contract/input';
import { batchItemsProblems } from '../workflows/batch/items';
import { BatchFingerprint } from './batch-fingerprint';
import type { BatchItemSource } from './batch';

/** An item as read, and where. `input` is unchecked: `checkBatchFile` checks it with the line number. */
export interface FileItem {
  line: number;
  item: BatchItem;
}

/** A line that holds no item, and why. */
export interface FileProblem {
  line: number;
  problem: string;
}

/** The longest line (JSON Lines) or record (CSV) read: 4 times what a task input may hold, so no valid item is refused. */
const MAX_RECORD_BYTES = 4 * MAX_INPUT_BYTES;
/** Problems printed, at most: a file that is wrong throughout needs its first few, not a million lines. */
const MAX_PROBLEMS = 100;

/**
 * The items of a `.csv` file (by its extension) or of a JSON Lines file, in order, and the lines
 * that could not be read. A problem that leaves the rest unreadable (bytes that are not UTF-8, a
 * CSV quote not closed, a line over 1 MiB) is the last thing read. `hash` is given every byte.
 */
export async function* readBatchFile(path: string, hash?: Hash): AsyncGenerator<FileItem | FileProblem> {
  const pieces = utf8Pieces(path, hash);
  try {
    yield* extname(path).toLowerCase() === '.csv' ? readCsv(pieces) : readJsonLines(pieces);
  } catch (err) {
    if (!(err instanceof UnreadableLine)) throw err;
    yield { line: err.line, problem: err.message };
  }
}

/** What `batch run` learns of its file before anything starts. */
export interface BatchFileCheck {
  /** Every problem, each starting `line N:`, in line order (the first 100, and how many more). */
  problems: string[];
  total: number;
  /** The list's fingerprint, for the batch to compare a resume by. */
  fingerprint: string;
  /** SHA-256 of the file's bytes, in hex. */
  contentHash: string;
}

/**
 * Reads the file once and checks every item with the task's input validator and every ID for a
 * repeat: the memory of one item, and of the IDs seen.
 */
export async function checkBatchFile(path: string): Promise<BatchFileCheck> {
  const contentHash = createHash('sha256');
  const fingerprint = new BatchFingerprint();
  const problems: string[] = [];
  let more = 0;
  const report = (found: string[]) => {
    const room = Math.max(0, MAX_PROBLEMS - problems.length);
    problems.push(...found.slice(0, room));
    more += Math.max(0, found.length - room);
  };
  const seen = new Map<string, number>();
  for await (const read of readBatchFile(path, contentHash)) {
    if ('problem' in read) {
      report([`line ${read.line}: ${read.problem}`]);
      continue;
    }
    // The place of an item is its line, so a repeated ID names the line of its first use.
    report(batchItemsProblems([read.item], (line) => `line ${line}`, seen, read.line));
    fingerprint.add(read.item);
  }
  if (more > 0) problems.push(`... and ${more} more problems`);
  return {
    problems,
    total: fingerprint.count,
    fingerprint: fingerprint.digest(),
    contentHash: contentHash.digest('hex'),
  };
}

/** The file's items, read again as the batch takes them: refused if the file is no longer what was checked. */
export function batchFileSource(path: string, check: BatchFileCheck): BatchItemSource {
  const changed = () =>
    new Error(
      `${path} changed after it was checked: the batch keeps the list it was started with. ` +
        'Put the file back and run the command again, or run the new file under another --name.',
    );
  return {
    total: check.total,
    fingerprint: check.fingerprint,
    async *items() {
      const fingerprint = new BatchFingerprint();
      for await (const read of readBatchFile(path)) {
        if ('problem' in read) throw changed();
        fingerprint.add(read.item);
        yield read.item;
      }
      if (fingerprint.digest() !== check.fingerprint) throw changed();
    },
  };
}

/** A line past which the file cannot be read; `line` is where. */
class UnreadableLine extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The file's bytes in pieces that end at a line break (the last one may not), each with the number
 * of its first line. A line break is one byte in UTF-8 and never part of another character, so
 * each piece is checked as UTF-8 on its own; the first line that is not ends the reading.
 */
async function* utf8Pieces(path: string, hash?: Hash): AsyncGenerator<{ line: number; bytes: Buffer }> {
  let line = 1;
  let carried: Buffer = Buffer.alloc(0);
  const piece = (bytes: Buffer) => {
    if (!isUtf8(bytes)) {
      let at = line;
      for (let start = 0; start < bytes.length; at++) {
        const end = bytes.indexOf(0x0a, start) + 1 || bytes.length;
        if (!isUtf8(bytes.subarray(start, end)))
          throw new UnreadableLine(
            at,
            'not UTF-8 text (a Latin-1 or UTF-16 file, say): save the file as UTF-8 and run again',
          );
        start = end;
      }
    }
    const first = line;
    line += countLines(bytes);
    return { line: first, bytes };
  };
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash?.update(chunk);
    const bytes = carried.length > 0 ? Buffer.concat([carried, chunk]) : chunk;
    const end = bytes.lastIndexOf(0x0a) + 1;
    carried = bytes.subarray(end);
    if (carried.length > MAX_RECORD_BYTES)
      throw new UnreadableLine(line + (end > 0 ? countLines(bytes.subarray(0, end)) : 0), tooLong('line'));
    if (end > 0) yield piece(bytes.subarray(0, end));
  }
  if (carried.length > 0) yield piece(carried);
}

function countLines(bytes: Buffer): number {
  let lines = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) lines++;
  return lines;
}

function tooLong(what: string): string {
  return `a ${what} longer than ${MAX_RECORD_BYTES / 1024 / 1024} MiB, more than a task input holds (a quote not closed?): the file is read no further`;
}

async function* readJsonLines(
  pieces: AsyncIterable<{ line: number; bytes: Buffer }>,
): AsyncGenerator<FileItem | FileProblem> {
  for await (const { line: first, bytes } of pieces) {
    const lines = bytes.toString('utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    for (const [index, text] of lines.entries()) {
      const line = first + index;
      // A byte-order mark may open the file; a Windows line break leaves its \r.
      const raw = (line === 1 ? text.replace(/^\uFEFF/, '') : text).replace(/\r$/, '');
      if (raw.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (err) {
        yield { line, problem: `not JSON (${err instanceof Error ? err.message : err})` };
        continue;
      }
      if (!value || typeof value !== 'object' || Array.isArray(value)) {
        yield { line, problem: 'must be a JSON object: a task input, with an optional "id"' };
        continue;
      }
      yield itemOf(line, value as Record<string, unknown>);
    }
  }
}

/**
 * CSV (RFC 4180: quoted fields may hold commas, quotes as "" and line breaks), read by csv-parse,
 * strictly: a stray or unclosed quote stops the reading at its line. The header names each
 * column's field; a dotted name is a nested field (`geoLocation.country`). A cell is JSON when it
 * reads as JSON (a number, true/false, an array or object), else text; an empty cell is left out.
 * `instructions` may be a single instruction's text.
 */
async function* readCsv(
  pieces: AsyncIterable<{ line: number; bytes: Buffer }>,
): AsyncGenerator<FileItem | FileProblem> {
  // Records are taken as the parser makes them, so those before an error in the same piece count.
  const records: Array<{ record: string[]; lines: number }> = [];
  const parser = parse({
    bom: true,
    relax_column_count: true,
    max_record_size: MAX_RECORD_BYTES,
    on_record: (record: string[], { lines }) => void records.push({ record, lines }),
  });
  // Its errors are met where each write and the end are awaited.
  parser.on('error', () => undefined);
  let header: string[] | undefined;
  // The line the last record ended on: the next one starts on the line after.
  let ended = 0;
  /** The records parsed so far, as items and problems; false once the header is refused. */
  function* rows(): Generator<FileItem | FileProblem, boolean> {
    for (const { record, lines } of records.splice(0)) {
      const line = ended + 1;
      ended = lines;
      if (!header) {
        header = record;
        const problems = headerProblems(header);
        for (const problem of problems) yield { line, problem };
        if (problems.length > 0) return false;
      } else if (record.length === 1 && record[0] === '') continue;
      else if (record.length !== header.length)
        yield { line, problem: `${record.length} cells, the header has ${header.length}` };
      else yield itemOf(line, fieldsOf(header, record));
    }
    return true;
  }
  try {
    for await (const { bytes } of pieces) {
      const failure = await new Promise<Error | null | undefined>((done) => parser.write(bytes, done));
      if (!(yield* rows())) return;
      if (failure) throw failure;
    }
    parser.end();
    const failure = await finished(parser, { readable: false }).then(
      () => undefined,
      (err: unknown) => err,
    );
    if (!(yield* rows())) return;
    if (failure) throw failure;
  } catch (err) {
    if (!(err instanceof CsvError)) throw err;
    throw new UnreadableLine(...csvProblem(err, ended + 1, header));
  } finally {
    parser.destroy();
  }
  if (!header)
    yield {
      line: 1,
      problem: 'a CSV batch needs a header row naming the fields (id, instructions, project, geoLocation.country, ...)',
    };
}

/** Where and what a CSV error is, in words that say how to write the line instead. */
function csvProblem(err: CsvError, recordLine: number, header: string[] | undefined): [number, string] {
  const line = typeof err.lines === 'number' ? err.lines : recordLine;
  const column = typeof err.column === 'number' ? err.column : undefined;
  const where = column === undefined ? '' : `column ${column + 1}${header?.[column] ? ` (${header[column]})` : ''}: `;
  const quoting = 'a field holding a comma, a quote or a line break is quoted, and its quotes doubled ("")';
  switch (err.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return [recordLine, `a quoted field is not closed (the file ends at line ${line}): ${quoting}`];
    case 'CSV_MAX_RECORD_SIZE':
      return [recordLine, tooLong('record')];
    case 'INVALID_OPENING_QUOTE':
    case 'CSV_INVALID_CLOSING_QUOTE':
      return [line, `${where}a stray quote: ${quoting}`];
    default:
      return [line, `not CSV: ${err.message}`];
  }
}

/** A header name's parts: letters, digits, `_` or `$`, not starting with a digit. */
const FIELD_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Names that would reach an object's prototype rather than a field of the input. */
const NOT_FIELDS = new Set(['__proto__', 'constructor', 'prototype']);

function headerProblems(header: string[]): string[] {
  const problems: string[] = [];
  header.forEach((name, column) => {
    const where = `column ${column + 1} (${JSON.stringify(name)})`;
    const parts = name.split('.');
    if (name === '')
      problems.push(
        `column ${column + 1} has no name: name it after a task input field (project, geoLocation.country, ...)`,
      );
    else if (parts.some((part) => NOT_FIELDS.has(part)))
      problems.push(`${where} is not a task input field: __proto__, constructor and prototype are refused`);
    else if (!parts.every((part) => FIELD_NAME.test(part)))
      problems.push(
        `${where} is not a field name: letters, digits and _, dotted for a nested field (geoLocation.country)`,
      );
    else if (header.indexOf(name) < column) problems.push(`${where} is column ${header.indexOf(name) + 1} already`);
    else {
      const inside = header.find((other) => other.startsWith(`${name}.`));
      if (inside)
        problems.push(`${where} and ${JSON.stringify(inside)} cannot both be columns: one is inside the other`);
    }
  });
  return problems;
}

function fieldsOf(header: string[], cells: string[]): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  header.forEach((name, column) => {
    const cell = cells[column]!;
    if (cell === '') return;
    let value: unknown = cellValue(cell);
    if (name === 'id') value = cell;
    if (name === 'instructions' && typeof value === 'string') value = [{ action: value }];
    setPath(fields, name.split('.'), value);
  });
  return fields;
}

/**
 * An item's ID: its `id` field, else `line-N` (its line in the file). A derived ID stays the same
 * only while the lines above it do: give IDs if the file may be edited between runs.
 */
function itemOf(line: number, fields: Record<string, unknown>): FileItem {
  const { id, ...input } = fields;
  return {
    line,
    item: { id: id === undefined ? `line-${line}` : (id as string), input: input as unknown as BrowserTaskInput },
  };
}

function cellValue(cell: string): unknown {
  if (/^(-?\d|true$|false$|\[|\{)/.test(cell.trim())) {
    try {
      return JSON.parse(cell);
    } catch {
      return cell;
    }
  }
  return cell;
}

/** Sets a nested field; the header's names were checked (headerProblems), so no part reaches a prototype. */
function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (!node[key] || typeof node[key] !== 'object') node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}
