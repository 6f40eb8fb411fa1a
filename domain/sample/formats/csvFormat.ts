import { isUtf8 } from 'node:buffer';
import { Readable } from 'node:stream';
import { CsvError, parse as parseStream, type Options } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import { MAX_ACQUISITION_VALUES, MAX_SENSOR_NAME_LENGTH } from './acquisitionFormat';
import { SampleFormatError, type ParseInput, type ParsedSample, type SampleSensor } from './sampleFormat';

// CSV in the acquisition format: a header row whose first column is the time (`timestamp` or
// `time`, any case) and then one column per sensor (`accX`, or with units `accX (m/s2)`), then
// one row per time step. Times are milliseconds (offsets from the start or since 1970), or ISO
// 8601 date-times; a `(s)` or `(us)` unit on the time column scales them. The interval is the
// mean step between the times, which must increase. Fields are separated by commas, or by
// semicolons (then a decimal comma is accepted in numbers); quotes, CRLF, blank lines and a BOM
// are fine.
//
// Splitting and quoting are csv-parse's work. parseCsv streams the records in chunks, so a large
// file neither blocks the event loop throughout nor holds all its strings at once; csv-parse only
// tells line numbers at a cost per record, so when a record is refused its line is found by a
// second, slower pass that stops there.

/** Longest record accepted, in bytes: a bound on what one bad line can cost. */
const MAX_RECORD_BYTES = 1_000_000;
const CHUNK_BYTES = 1 << 20;

export async function parseCsv(input: ParseInput): Promise<ParsedSample> {
  const bytes = await input.source.readAll();
  const options = csvOptions(bytes);
  const reader = new TableReader(false, options.delimiter === ';');
  try {
    const chunks = (function* () {
      for (let at = 0; at < bytes.length; at += CHUNK_BYTES) yield bytes.subarray(at, at + CHUNK_BYTES);
    })();
    for await (const record of Readable.from(chunks).pipe(parseStream(options))) reader.add(record as string[]);
  } catch (error) {
    // A stream reports a malformed stretch as soon as it reaches it, possibly before records
    // read ahead of it were checked: the in-order pass tells which problem comes first.
    if (error instanceof CsvError) readInOrder(bytes, options, new TableReader(false, options.delimiter === ';'));
    throw formatError(error, bytes, options);
  }
  const table = reader.finish();
  return {
    kind: 'time-series',
    contentType: 'text/csv',
    intervalMs: table.intervalMs,
    frequency: 1000 / table.intervalMs,
    sensors: table.sensors,
    valuesCount: table.rowCount,
    totalLengthMs: table.rowCount * table.intervalMs,
    deviceName: null,
    deviceType: null,
    width: null,
    height: null,
    signature: { method: 'none-needed' },
  };
}

/** The sensor values of an accepted CSV file, one row per time step (the time column left out). */
export function readCsvValues(bytes: Buffer): number[][] {
  const options = csvOptions(bytes);
  const reader = new TableReader(true, options.delimiter === ';');
  readInOrder(bytes, options, reader);
  return reader.finish().rows ?? [];
}

/** Feeds every record to `reader` in file order; throws the first problem as SampleFormatError. */
function readInOrder(bytes: Buffer, options: CsvOptions, reader: TableReader): void {
  try {
    parseSync(bytes, { ...options, on_record: (record: string[]) => reader.add(record) });
  } catch (error) {
    throw formatError(error, bytes, options);
  }
}

// ---------------------------------------------------------------------------------------------

type CsvOptions = Options & { delimiter: string };

function csvOptions(bytes: Buffer): CsvOptions {
  if (!isUtf8(bytes)) throw new SampleFormatError('The CSV file is not valid UTF-8');
  return {
    delimiter: guessDelimiter(bytes),
    bom: true,
    trim: true,
    skip_empty_lines: true,
    relax_column_count: true,
    max_record_size: MAX_RECORD_BYTES,
  };
}

/** A record refused by the reader; the line is looked up only then. */
class RecordProblem extends Error {
  constructor(
    readonly recordIndex: number,
    readonly explain: (where: string) => string,
  ) {
    super(explain(`Record ${recordIndex + 1}`));
  }
}

function formatError(error: unknown, bytes: Buffer, options: CsvOptions): unknown {
  if (error instanceof SampleFormatError) return error;
  if (error instanceof RecordProblem) {
    return new SampleFormatError(error.explain(`Line ${lineOfRecord(bytes, options, error.recordIndex)}`));
  }
  if (error instanceof CsvError) return new SampleFormatError(`Malformed CSV: ${error.message}`);
  return error;
}

/** The line (1-based) where record `recordIndex` (0 is the header) ends, counting as the reader does. */
function lineOfRecord(bytes: Buffer, options: CsvOptions, recordIndex: number): number {
  let index = -1;
  let line = 0;
  const found = new Error('found');
  try {
    parseSync(bytes, {
      ...options,
      on_record: (record: string[], context) => {
        if (isBlank(record)) return null;
        index++;
        if (index === recordIndex) {
          line = context.lines;
          throw found;
        }
        return null;
      },
    });
  } catch (error) {
    if (error !== found) throw error;
  }
  return line;
}

/** A line of white space only (trimmed to one empty field): skipped like an empty line. */
function isBlank(record: string[]): boolean {
  return record.length === 1 && record[0] === '';
}

interface Table {
  sensors: SampleSensor[];
  intervalMs: number;
  rowCount: number;
  rows: number[][] | null;
}

interface Header {
  sensors: SampleSensor[];
  columns: string[];
  /** Multiplier from the time column's numbers to milliseconds. */
  timeScale: number;
}

/** Checks records one at a time and keeps only what the answer needs. */
class TableReader {
  private header: Header | null = null;
  private recordIndex = -1;
  private timeKind: 'number' | 'date' | null = null;
  private firstTime = 0;
  private previousTime = 0;
  private rowCount = 0;
  private readonly rows: number[][] | null;

  constructor(
    collectRows: boolean,
    private readonly decimalComma: boolean,
  ) {
    this.rows = collectRows ? [] : null;
  }

  /** Returns null so that csv-parse keeps nothing. */
  add(record: string[]): null {
    if (isBlank(record)) return null;
    this.recordIndex++;
    if (this.header === null) {
      this.header = readHeader(record, (explain) => this.problem(explain));
      return null;
    }
    const { columns, sensors, timeScale } = this.header;
    if (record.length !== columns.length) {
      const got = record.length;
      throw this.problem(
        (where) =>
          `${where} has ${got} values; expected ${columns.length} (the time and ${sensors.length} sensor${sensors.length === 1 ? '' : 's'})`,
      );
    }
    this.rowCount++;
    if (this.rowCount * sensors.length > MAX_ACQUISITION_VALUES) {
      throw new SampleFormatError(`The file holds more than ${MAX_ACQUISITION_VALUES} values`);
    }

    const timeCell = record[0] ?? '';
    const kind = this.timeKind ?? (parseNumber(timeCell, this.decimalComma) === null ? 'date' : 'number');
    this.timeKind = kind;
    const time = kind === 'number' ? parseNumber(timeCell, this.decimalComma) : parseDate(timeCell);
    if (time === null) {
      const expected =
        this.rowCount === 1
          ? 'a number of milliseconds or an ISO 8601 date-time'
          : `${kind === 'number' ? 'a number' : 'an ISO 8601 date-time'} like the times above it`;
      throw this.problem((where) => `${where}, column ${JSON.stringify(columns[0])}: ${cellText(timeCell)} is not ${expected}`);
    }
    const ms = kind === 'number' ? time * timeScale : time;
    if (this.rowCount === 1) {
      this.firstTime = ms;
    } else if (!(ms > this.previousTime)) {
      throw this.problem((where) => `${where}: the time ${timeCell} is not after the one before it; times must increase`);
    }
    this.previousTime = ms;

    const values = new Array<number>(sensors.length);
    for (let col = 1; col < record.length; col++) {
      const cell = record[col] ?? '';
      const value = parseNumber(cell, this.decimalComma);
      if (value === null) {
        throw this.problem((where) => `${where}, column ${JSON.stringify(columns[col])}: ${cellText(cell)} is not a number`);
      }
      values[col - 1] = value;
    }
    this.rows?.push(values);
    return null;
  }

  private problem(explain: (where: string) => string): RecordProblem {
    return new RecordProblem(this.recordIndex, explain);
  }

  finish(): Table {
    if (this.header === null) throw new SampleFormatError('The CSV file is empty');
    if (this.rowCount === 0) throw new SampleFormatError('The CSV file has a header but no data rows');
    if (this.rowCount === 1) {
      throw new SampleFormatError('The CSV file has one data row; at least two are needed to know the interval between values');
    }
    const intervalMs = (this.previousTime - this.firstTime) / (this.rowCount - 1);
    if (!Number.isFinite(intervalMs) || intervalMs <= 0) {
      throw new SampleFormatError('The times of the CSV file do not give a usable interval');
    }
    return { sensors: this.header.sensors, intervalMs, rowCount: this.rowCount, rows: this.rows };
  }
}

/** `;` when the first line has more semicolons than commas, else `,`. */
function guessDelimiter(bytes: Buffer): string {
  const end = bytes.indexOf(0x0a);
  const firstLine = bytes.toString('utf8', 0, end === -1 ? bytes.length : end);
  const semicolons = firstLine.split(';').length - 1;
  const commas = firstLine.split(',').length - 1;
  return semicolons > commas ? ';' : ',';
}

const TIME_UNITS: Record<string, number> = { ms: 1, s: 1000, sec: 1000, us: 0.001, 'µs': 0.001 };

function readHeader(record: string[], problem: (explain: (where: string) => string) => RecordProblem): Header {
  if (record.length < 2) {
    throw problem((where) => `The header (${where.toLowerCase()}) needs a time column and at least one sensor column`);
  }
  const time = splitUnits(record[0] ?? '');
  if (!/^(timestamp|time)$/i.test(time.name)) {
    throw new SampleFormatError(
      `The first column of the header must be "timestamp" or "time", got ${JSON.stringify(record[0])}`,
    );
  }
  const timeScale = time.units === '' ? 1 : TIME_UNITS[time.units.toLowerCase()];
  if (timeScale === undefined) {
    throw new SampleFormatError(`The time column's unit ${JSON.stringify(time.units)} is not ms, s or us`);
  }
  const sensors = record.slice(1).map((column, ix) => {
    const sensor = splitUnits(column);
    if (sensor.name === '') throw new SampleFormatError(`Column ${ix + 2} of the header has no name`);
    if (sensor.name.length > MAX_SENSOR_NAME_LENGTH) {
      throw new SampleFormatError(
        `The name of column ${ix + 2} is ${sensor.name.length} characters long; at most ${MAX_SENSOR_NAME_LENGTH} are allowed`,
      );
    }
    return sensor;
  });
  return { sensors, columns: record, timeScale };
}

/** `accX (m/s2)` → name `accX`, units `m/s2`; `accX` → units ''. (No regex: linear on any input.) */
function splitUnits(column: string): SampleSensor {
  const open = column.lastIndexOf('(');
  if (!column.endsWith(')') || open === -1 || column.indexOf(')') !== column.length - 1) {
    return { name: column.trim(), units: '' };
  }
  return { name: column.slice(0, open).trim(), units: column.slice(open + 1, -1).trim() };
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const DECIMAL_COMMA_NUMBER = /^[+-]?\d+,\d+$/;

/** A plain decimal number (no hex, no `Infinity`, no empty string); null otherwise. */
function parseNumber(cell: string, decimalComma: boolean): number | null {
  let text = cell;
  if (decimalComma && DECIMAL_COMMA_NUMBER.test(text)) text = text.replace(',', '.');
  if (!NUMBER.test(text)) return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Milliseconds since 1970 of an ISO 8601 date-time; null otherwise. */
function parseDate(cell: string): number | null {
  if (!ISO_DATE.test(cell)) return null;
  const ms = Date.parse(cell.replace(' ', 'T'));
  return Number.isFinite(ms) ? ms : null;
}

function cellText(cell: string): string {
  if (cell === '') return 'the empty value';
  return JSON.stringify(cell.length > 40 ? `${cell.slice(0, 40)}…` : cell);
}
