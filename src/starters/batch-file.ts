// Reading a batch from a file (`batch run FILE`): JSON Lines, or CSV with a header row. Each item
// keeps the line it came from, so every problem is reported with its line number.
import { extname } from 'node:path';
import type { BatchItem } from '../contract/batch-messages';
import type { BrowserTaskInput } from '../contract/input';

/** An item as read, and where. `input` is unchecked: `batchItemsProblems` checks it with the line number. */
export interface FileItem {
  line: number;
  item: BatchItem;
}

/** The items of a `.csv` file (by its extension) or of a JSON Lines file, and the lines that could not be read. */
export function readBatchFile(path: string, text: string): { items: FileItem[]; problems: string[] } {
  return extname(path).toLowerCase() === '.csv' ? readCsv(text) : readJsonLines(text);
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

function readJsonLines(text: string): { items: FileItem[]; problems: string[] } {
  const items: FileItem[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      problems.push(`line ${line}: not JSON (${err instanceof Error ? err.message : err})`);
      return;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      problems.push(`line ${line}: must be a JSON object: a task input, with an optional "id"`);
      return;
    }
    items.push(itemOf(line, value as Record<string, unknown>));
  });
  return { items, problems };
}

/**
 * CSV (RFC 4180: quoted fields may hold commas, quotes as "" and line breaks). The header names
 * each column's field; a dotted name is a nested field (`geoLocation.country`). A cell is JSON when
 * it reads as JSON (a number, true/false, an array or object), else text; an empty cell is left
 * out. `instructions` may be a single instruction's text.
 */
function readCsv(text: string): { items: FileItem[]; problems: string[] } {
  const rows = csvRows(text);
  const header = rows.shift();
  if (!header)
    return {
      items: [],
      problems: [
        'line 1: a CSV batch needs a header row naming the fields (id, instructions, project, geoLocation.country, ...)',
      ],
    };
  const items: FileItem[] = [];
  const problems: string[] = [];
  for (const { line, cells } of rows) {
    if (cells.length === 1 && cells[0] === '') continue;
    if (cells.length !== header.cells.length) {
      problems.push(`line ${line}: ${cells.length} cells, the header has ${header.cells.length}`);
      continue;
    }
    const fields: Record<string, unknown> = {};
    header.cells.forEach((name, column) => {
      const cell = cells[column]!;
      if (cell === '') return;
      let value: unknown = cellValue(cell);
      if (name === 'id') value = cell;
      if (name === 'instructions' && typeof value === 'string') value = [{ action: value }];
      setPath(fields, name.split('.'), value);
    });
    items.push(itemOf(line, fields));
  }
  return { items, problems };
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

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (!node[key] || typeof node[key] !== 'object') node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

/** The rows of a CSV text, each with the line it starts on. */
function csvRows(text: string): Array<{ line: number; cells: string[] }> {
  const rows: Array<{ line: number; cells: string[] }> = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  const endRow = () => {
    cells.push(cell);
    rows.push({ line: rowLine, cells });
    cells = [];
    cell = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        cell += c;
      }
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      cells.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRow();
      line++;
      rowLine = line;
    } else cell += c;
  }
  if (cell !== '' || cells.length > 0) endRow();
  return rows;
}
