import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCsv, readCsvValues, streamCsvValues } from '../../../../domain/sample/formats/csvFormat';
import { SampleFormatError } from '../../../../domain/sample/formats/sampleFormat';
import { parseInput } from '../../../support/memorySource';

const parse = (content: string | Buffer) => parseCsv(parseInput(content, { fileName: 'sample.csv', declaredType: 'text/csv' }));

async function refusal(content: string | Buffer): Promise<string> {
  try {
    await parse(content);
  } catch (error) {
    expect(error).toBeInstanceOf(SampleFormatError);
    return (error as Error).message;
  }
  throw new Error('the file was accepted');
}

const ACCELEROMETER = [
  'timestamp,accX (m/s2),accY (m/s2),accZ (m/s2)',
  '0,-9.81,0.03,1.21',
  '10,-9.83,0.04,1.27',
  '20,-9.12,0.03,1.23',
  '30,-9.14,0.01,1.25',
  '',
].join('\n');

describe('a CSV file in the acquisition format', () => {
  it('gives the sensors with their units, the interval and the length', async () => {
    expect(await parse(ACCELEROMETER)).toEqual({
      kind: 'time-series',
      contentType: 'text/csv',
      intervalMs: 10,
      frequency: 100,
      sensors: [
        { name: 'accX', units: 'm/s2' },
        { name: 'accY', units: 'm/s2' },
        { name: 'accZ', units: 'm/s2' },
      ],
      valuesCount: 4,
      totalLengthMs: 40,
      deviceName: null,
      deviceType: null,
      width: null,
      height: null,
      signature: { method: 'none-needed' },
    });
  });

  it('gives its values without the time column', () => {
    expect(readCsvValues(Buffer.from(ACCELEROMETER))).toEqual([
      [-9.81, 0.03, 1.21],
      [-9.83, 0.04, 1.27],
      [-9.12, 0.03, 1.23],
      [-9.14, 0.01, 1.25],
    ]);
  });

  it('gives the first values of a stored file from a stream in small chunks, reading no further than they go', async () => {
    let chunksRead = 0;
    async function* chunks(bytes: Buffer, size: number) {
      for (let at = 0; at < bytes.length; at += size) {
        chunksRead++;
        yield bytes.subarray(at, at + size);
      }
    }
    const bytes = Buffer.from(ACCELEROMETER);
    expect(await streamCsvValues(chunks(bytes, 7), 100)).toEqual(readCsvValues(bytes));
    chunksRead = 0;
    const rows = Array.from({ length: 10_000 }, (_, i) => `${i * 10},${i}`).join('\n');
    const long = Buffer.from(`timestamp,a\n${rows}\n`);
    expect(await streamCsvValues(chunks(long, 1024), 2)).toEqual([[0], [1]]);
    expect(chunksRead).toBeLessThan(long.length / 1024 / 2);
  });

  it('takes sensor columns without units', async () => {
    const sample = await parse('timestamp,accX,accY\n0,1,2\n5,3,4');
    expect(sample.sensors).toEqual([
      { name: 'accX', units: '' },
      { name: 'accY', units: '' },
    ]);
    expect(sample.intervalMs).toBe(5);
  });

  it('names the time column "timestamp" or "time" in any case', async () => {
    expect((await parse('Time,a\n0,1\n2,1\n')).intervalMs).toBe(2);
    expect((await parse('TIMESTAMP,a\n0,1\n2,1\n')).intervalMs).toBe(2);
  });

  it('accepts CRLF line ends, no final newline, a BOM, blank lines and spaces around values', async () => {
    const crlf = 'timestamp,a (g),b (g)\r\n0, 1 ,2\r\n\r\n10,3, 4\r\n20,5,6';
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(crlf)]);
    const sample = await parse(withBom);
    expect(sample.valuesCount).toBe(3);
    expect(sample.sensors[0]).toEqual({ name: 'a', units: 'g' });
    expect(readCsvValues(withBom)).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
  });

  it('accepts quoted cells, with the delimiter inside a quoted header', async () => {
    const csv = '"timestamp","acc, x (g)","y"\n"0","1.5","-2"\n"10","1e3",".5"\n';
    expect((await parse(csv)).sensors).toEqual([
      { name: 'acc, x', units: 'g' },
      { name: 'y', units: '' },
    ]);
    expect(readCsvValues(Buffer.from(csv))).toEqual([
      [1.5, -2],
      [1000, 0.5],
    ]);
  });

  it('accepts semicolons as separators, with decimal commas', async () => {
    const csv = 'timestamp;temp (C);hum (%)\n0;21,5;40\n1000;21,75;41.5\n';
    const sample = await parse(csv);
    expect(sample.intervalMs).toBe(1000);
    expect(sample.frequency).toBe(1);
    expect(readCsvValues(Buffer.from(csv))).toEqual([
      [21.5, 40],
      [21.75, 41.5],
    ]);
  });

  it('takes times since 1970 in milliseconds', async () => {
    const sample = await parse('timestamp,a\n1764000000000,1\n1764000000016,2\n1764000000032,3\n');
    expect(sample.intervalMs).toBe(16);
    expect(sample.totalLengthMs).toBe(48);
  });

  it('takes ISO 8601 date-times', async () => {
    const csv = 'time,a\n2026-01-05T10:00:00.000Z,1\n2026-01-05T10:00:00.020Z,2\n2026-01-05T10:00:00.040Z,3\n';
    expect((await parse(csv)).intervalMs).toBe(20);
  });

  it('scales times given in seconds or microseconds by the time column\u2019s unit', async () => {
    expect((await parse('timestamp (s),a\n0,1\n0.5,2\n1,3\n')).intervalMs).toBe(500);
    expect((await parse('timestamp (us),a\n0,1\n250,2\n')).intervalMs).toBe(0.25);
  });

  it('uses the mean step when the times jitter', async () => {
    const sample = await parse('timestamp,a\n0,1\n9,1\n21,1\n30,1\n');
    expect(sample.intervalMs).toBe(10);
    expect(sample.totalLengthMs).toBe(40);
  });
});

describe('a CSV file is refused, saying why, when', () => {
  const cases: [string, string | Buffer, RegExp][] = [
    ['it is empty', '', /^The CSV file is empty$/],
    ['it holds only white space', ' \n\r\n ', /^The CSV file is empty$/],
    ['it is not UTF-8', Buffer.from([0x74, 0x69, 0xff, 0x0a]), /not valid UTF-8/],
    ['it has a header only', 'timestamp,a,b\n', /has a header but no data rows/],
    ['it has a single data row', 'timestamp,a\n0,1\n', /one data row; at least two are needed/],
    ['the first column is not the time', 'accX,accY\n0,1\n1,2\n', /first column of the header must be "timestamp" or "time", got "accX"/],
    ['the header has no sensor column', 'timestamp\n0\n1\n', /needs a time column and at least one sensor column/],
    ['a sensor column has no name', 'timestamp,a,\n0,1,2\n1,1,2\n', /Column 3 of the header has no name/],
    ['a sensor name is too long', `timestamp,${'x'.repeat(129)}\n0,1\n1,2\n`, /column 2 is 129 characters long; at most 128/],
    ['the time column has an unknown unit', 'timestamp (h),a\n0,1\n1,2\n', /unit "h" is not ms, s or us/],
    ['a row has too few values', 'timestamp,a,b\n0,1,2\n10,1\n', /^Line 3 has 2 values; expected 3 \(the time and 2 sensors\)$/],
    ['a row has too many values', 'timestamp,a\n0,1\n10,1,2\n', /^Line 3 has 3 values; expected 2 \(the time and 1 sensor\)$/],
    ['a value is not a number', 'timestamp,a,b\n0,1,2\n10,1,abc\n', /^Line 3, column "b": "abc" is not a number$/],
    ['a value is empty', 'timestamp,a,b\n0,1,2\n10,,2\n', /^Line 3, column "a": the empty value is not a number$/],
    ['a value is hexadecimal', 'timestamp,a\n0,1\n10,0x10\n', /"0x10" is not a number/],
    ['a value is infinite', 'timestamp,a\n0,1\n10,Infinity\n', /"Infinity" is not a number/],
    ['a value overflows a double', 'timestamp,a\n0,1\n10,1e999\n', /"1e999" is not a number/],
    ['a time is not a time', 'timestamp,a\nnoon,1\n10,1\n', /^Line 2, column "timestamp": "noon" is not a number of milliseconds or an ISO 8601 date-time$/],
    ['numeric and date times are mixed', 'timestamp,a\n0,1\n2026-01-01T00:00:00Z,1\n', /Line 3.*is not a number like the times above it/],
    ['times repeat', 'timestamp,a\n0,1\n10,1\n10,1\n', /^Line 4: the time 10 is not after the one before it; times must increase$/],
    ['times go back', 'timestamp,a\n0,1\n10,1\n5,1\n', /Line 4: the time 5 is not after/],
    ['a quote is not closed', 'timestamp,a\n0,"1\n10,2\n', /^Malformed CSV: Quote Not Closed/],
    ['a quote is followed by text', 'timestamp,a\n0,"1"x\n10,2\n', /^Malformed CSV: Invalid Closing Quote/],
    ['a line is absurdly long', `timestamp,a\n0,${'1'.repeat(1_100_000)}\n`, /^Malformed CSV: Max Record Size/],
  ];
  it.each(cases)('%s', async (_name, content, message) => {
    expect(await refusal(content)).toMatch(message);
  });

  it('readCsvValues refuses the same way', () => {
    expect(() => readCsvValues(Buffer.from('timestamp,a\n0,x\n1,2\n'))).toThrow(SampleFormatError);
  });

  it('counts blank lines and quoted line breaks in the line number it gives', async () => {
    // The line break is in the time column's header: a sensor's name may not hold one (below).
    const csv = '"timestamp\n(ms)",a\n\n0,1\n   \n10,1\n20,oops\n';
    expect(await refusal(csv)).toBe('Line 7, column "a": "oops" is not a number');
    expect(() => readCsvValues(Buffer.from(csv))).toThrow('Line 7, column "a": "oops" is not a number');
  });

  it('refuses a sensor name or unit holding a control or direction-override character, naming the column', async () => {
    expect(await refusal('timestamp,"a\nb"\n0,1\n10,1\n')).toBe('The name of column 2 contains a control character (U+000A)');
    expect(await refusal('timestamp,accX (m\u202e/s)\n0,1\n10,1\n')).toBe('The units of column 2 contains an invisible formatting character (U+202E)');
  });

  it('refuses times whose mean step is outside the allowed interval range, and accepts the edges', async () => {
    expect(await refusal('timestamp,a\n0,1\n86400001,2\n')).toMatch(/interval must be from 0\.000001 to 86400000 ms/);
    expect((await parse(Buffer.from('timestamp,a\n0,1\n86400000,2\n'))).intervalMs).toBe(86_400_000);
  });
});

// --- Fuzzing: whatever the bytes, the parser answers or refuses with SampleFormatError --------

/** Both entry points answer, or refuse with SampleFormatError, and they agree. */
async function parsesOrRefuses(bytes: Buffer): Promise<void> {
  let parsed: string;
  try {
    parsed = `rows ${(await parse(bytes)).valuesCount}`;
  } catch (error) {
    if (!(error instanceof SampleFormatError)) throw error;
    parsed = error.message;
  }
  let read: string;
  try {
    read = `rows ${readCsvValues(bytes).length}`;
  } catch (error) {
    if (!(error instanceof SampleFormatError)) throw error;
    read = error.message;
  }
  expect(read).toBe(parsed);
}

/** Text made of what CSV files are made of, so the fuzz reaches past the header. */
const csvish = fc
  .array(
    fc.constantFrom('0', '1', '9', '.', '-', 'e', ',', ';', '"', ' ', '\n', '\r\n', 'timestamp', 'time', 'a', '(', ')', 'x', '2026-01-01T00:00:00Z', '\ufeff'),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(''));

describe('fuzzed input', () => {
  it('arbitrary bytes are parsed or refused with SampleFormatError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => parsesOrRefuses(Buffer.from(bytes))),
      { numRuns: 2000 },
    );
  });

  it('CSV-like text, with or without a valid header, is parsed or refused', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), csvish, async (withHeader, body) =>
        parsesOrRefuses(Buffer.from((withHeader ? 'timestamp,a (g),b\n' : '') + body, 'utf8')),
      ),
      { numRuns: 3000 },
    );
  });

  it('mutated valid files are parsed or refused', async () => {
    const valid = Buffer.from(ACCELEROMETER);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ at: fc.nat(), byte: fc.constantFrom(0x2c, 0x3b, 0x22, 0x0a, 0x0d, 0x30, 0x2e, 0x2d, 0x61, 0x00, 0xff) }), { minLength: 1, maxLength: 4 }),
        async (mutations) => {
          const bytes = Buffer.from(valid);
          for (const m of mutations) bytes[m.at % bytes.length] = m.byte;
          await parsesOrRefuses(bytes);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
