import cbor from 'cbor';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { detectContent, parseSampleFile } from '../../../../domain/sample/formats/detectFormat';
import { SampleFormatError } from '../../../../domain/sample/formats/sampleFormat';
import { GIF, JPEG, png } from '../../../support/images';
import { avi, box, ftyp, mp4, wav } from '../../../support/mediaFiles';
import { memorySource, parseInput } from '../../../support/memorySource';

const acquisition = {
  protected: { ver: 'v1', alg: 'none' },
  signature: '00',
  payload: {
    device_name: 'ac:87:a3:0a:2d:1b',
    device_type: 'DISCO-L475VG-IOT01A',
    interval_ms: 10,
    sensors: [
      { name: 'accX', units: 'm/s2' },
      { name: 'accY', units: 'm/s2' },
    ],
    values: [
      [1, 2],
      [3, 4],
      [5, 6],
    ],
  },
};
const JSON_FILE = Buffer.from(JSON.stringify(acquisition));
const CBOR_FILE = cbor.encode(acquisition);
const CSV_FILE = Buffer.from('timestamp,accX,accY\n0,1,2\n10,3,4\n20,5,6\n');
const WAV_FILE = wav({ sampleRate: 1000, frames: [[1], [2], [3], [4]] });
const PNG_FILE = png([10, 20, 30, 255], 3, 2);
const MP4_FILE = mp4({ mdatBytes: 40 });
const AVI_FILE = avi({ moviBytes: 40 });

const file = (bytes: Buffer, fileName: string, declaredType: string | null) => parseSampleFile(parseInput(bytes, { fileName, declaredType }));
const refusal = async (promise: Promise<unknown>): Promise<string> => {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SampleFormatError);
  return (error as Error).message;
};
const detected = async (bytes: Buffer) => detectContent(memorySource(bytes));

describe('detectContent', () => {
  it('tells the formats apart by their first bytes', async () => {
    expect(await detected(JSON_FILE)).toEqual({ format: 'json' });
    expect(await detected(CBOR_FILE)).toEqual({ format: 'cbor' });
    expect(await detected(CSV_FILE)).toEqual({ format: 'csv' });
    expect(await detected(WAV_FILE)).toEqual({ format: 'wav' });
    expect(await detected(AVI_FILE)).toEqual({ format: 'avi' });
    expect(await detected(PNG_FILE)).toEqual({ format: 'png' });
    expect(await detected(JPEG)).toEqual({ format: 'jpeg' });
    expect(await detected(MP4_FILE)).toEqual({ format: 'mp4' });
  });

  it('takes JSON after whitespace and a byte order mark, however long the whitespace', async () => {
    expect(await detected(Buffer.concat([Buffer.from(' \r\n\t'), JSON_FILE]))).toEqual({ format: 'json' });
    expect(await detected(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), JSON_FILE]))).toEqual({ format: 'json' });
    expect(await detected(Buffer.concat([Buffer.alloc(100_000, ' '), JSON_FILE]))).toEqual({ format: 'json' });
  });

  it('takes any CBOR map: definite, indefinite, behind the self-described tag', async () => {
    expect(await detected(Buffer.from([0xa0]))).toEqual({ format: 'cbor' });
    expect(await detected(Buffer.from([0xbf, 0xff]))).toEqual({ format: 'cbor' });
    expect(await detected(Buffer.concat([Buffer.from([0xd9, 0xd9, 0xf7]), CBOR_FILE]))).toEqual({ format: 'cbor' });
  });

  it('takes UTF-8 text as CSV, even when the head cuts a multi-byte character', async () => {
    const text = Buffer.from(`time,${'é'.repeat(5000)}\n0,1\n`);
    expect(await detected(text)).toEqual({ format: 'csv' });
    expect(await detected(Buffer.concat([Buffer.from('x'), text]))).toEqual({ format: 'csv' });
  });

  it('names what it does not take', async () => {
    const seen = async (bytes: Buffer) => {
      const detection = await detected(bytes);
      expect(detection.format).toBeNull();
      return 'seen' in detection ? detection.seen : '';
    };
    expect(await seen(GIF)).toBe('a GIF image');
    expect(await seen(Buffer.from('%PDF-1.7\n'))).toBe('a PDF document');
    expect(await seen(Buffer.from('PK\x03\x04rest', 'latin1'))).toBe('a ZIP archive');
    expect(await seen(Buffer.from('RIFF\0\0\0\0WEBPVP8 ', 'latin1'))).toBe('a WebP image');
    expect(await seen(Buffer.from('RIFF\0\0\0\0ABCD', 'latin1'))).toBe('a RIFF file of form "ABCD"');
    expect(await seen(Buffer.concat([ftyp('heic'), box('meta')]))).toBe('a HEIF image');
    expect(await seen(Buffer.from('\ufeffa,b', 'utf16le'))).toBe('UTF-16 text (save it as UTF-8)');
    expect(await seen(Buffer.from('  [1, 2, 3]'))).toBe('a JSON array (an acquisition file is a JSON object)');
    expect(await seen(Buffer.from(' \n\n  '))).toBe('only whitespace');
    expect(await seen(Buffer.from([0x00, 0x01, 0x02, 0xfe, 0x10, 0x20, 0x30, 0x40, 0x50]))).toBe('binary content starting with 00 01 02 fe 10 20 30 40');
    expect(await seen(Buffer.from('time,temp (\xb0C)\n0,21\n', 'latin1'))).toBe('text that is not UTF-8 (save it as UTF-8)');
  });

  it('refuses an empty file', async () => {
    expect(await refusal(detected(Buffer.alloc(0)))).toBe('the file is empty');
  });
});

describe('parseSampleFile', () => {
  it('sends each format to its parser', async () => {
    expect(await file(JSON_FILE, 'a.json', 'application/json')).toMatchObject({ kind: 'time-series', contentType: 'application/json', valuesCount: 3 });
    expect(await file(CBOR_FILE, 'a.cbor', 'application/cbor')).toMatchObject({ kind: 'time-series', contentType: 'application/cbor', valuesCount: 3 });
    expect(await file(CSV_FILE, 'a.csv', 'text/csv')).toMatchObject({ kind: 'time-series', contentType: 'text/csv', valuesCount: 3 });
    expect(await file(WAV_FILE, 'a.wav', 'audio/wav')).toMatchObject({ kind: 'audio', contentType: 'audio/wav', valuesCount: 4 });
    expect(await file(PNG_FILE, 'a.png', 'image/png')).toMatchObject({ kind: 'image', contentType: 'image/png', width: 3, height: 2 });
    expect(await file(JPEG, 'a.jpg', 'image/jpeg')).toMatchObject({ kind: 'image', contentType: 'image/jpeg', width: 2, height: 2 });
    expect(await file(MP4_FILE, 'a.mp4', 'video/mp4')).toMatchObject({ kind: 'video', contentType: 'video/mp4', totalLengthMs: 2500 });
    expect(await file(AVI_FILE, 'a.avi', 'video/avi')).toMatchObject({ kind: 'video', contentType: 'video/avi', totalLengthMs: 2000 });
  });

  it('accepts every type the CLI declares by extension (sdk-reference 4.2), and common aliases', async () => {
    const cases: [Buffer, string, string][] = [
      [WAV_FILE, 'a.wav', 'audio/wav'],
      [WAV_FILE, 'a.wav', 'audio/x-wav'],
      [WAV_FILE, 'a.wav', 'audio/wave'],
      [CBOR_FILE, 'a.cbor', 'application/cbor'],
      [JSON_FILE, 'a.json', 'application/json'],
      [JPEG, 'a.jpg', 'image/jpeg'],
      [JPEG, 'a.jpeg', 'image/jpeg'],
      [JPEG, 'a.JPG', 'image/jpg'],
      [PNG_FILE, 'a.png', 'image/png'],
      [CSV_FILE, 'a.csv', 'text/csv'],
      [CSV_FILE, 'a.csv', 'application/vnd.ms-excel'],
      [CSV_FILE, 'a.txt', 'text/plain'],
      [MP4_FILE, 'a.mp4', 'video/mp4'],
      [AVI_FILE, 'a.avi', 'video/avi'],
      [AVI_FILE, 'a.avi', 'video/x-msvideo'],
    ];
    for (const [bytes, name, type] of cases) await expect(file(bytes, name, type)).resolves.toBeDefined();
  });

  it('lets generic declared types and unknown extensions defer to the content', async () => {
    for (const type of [null, '', 'application/octet-stream', 'text/plain']) {
      expect((await file(WAV_FILE, 'recording', type)).kind).toBe('audio');
      expect((await file(PNG_FILE, 'idle.01', type)).kind).toBe('image');
      expect((await file(JSON_FILE, 'sample.bin', type)).kind).toBe('time-series');
      expect((await file(AVI_FILE, 'clip.dat', type)).kind).toBe('video');
    }
  });

  it('refuses a specific declared type that does not match the content', async () => {
    expect(await refusal(file(WAV_FILE, 'a', 'image/png'))).toBe('declared image/png but the content is a WAV file');
    expect(await refusal(file(PNG_FILE, 'a', 'image/jpeg'))).toBe('declared image/jpeg but the content is a PNG image');
    expect(await refusal(file(CBOR_FILE, 'a', 'application/json'))).toBe('declared application/json but the content is CBOR');
    expect(await refusal(file(JSON_FILE, 'a', 'application/cbor'))).toBe('declared application/cbor but the content is JSON');
    expect(await refusal(file(JSON_FILE, 'a', 'text/csv'))).toBe('declared text/csv but the content is JSON');
    expect(await refusal(file(MP4_FILE, 'a', 'video/avi'))).toBe('declared video/avi but the content is an MP4 video');
    expect(await refusal(file(PNG_FILE, 'a', 'image/gif'))).toBe('declared image/gif but the content is a PNG image');
    expect(await refusal(file(GIF, 'a', 'image/png'))).toBe('declared image/png but the content is a GIF image');
    expect(await refusal(file(CSV_FILE, 'a', 'application/json'))).toBe('declared application/json but the content is not a JSON object (it does not start with "{")');
  });

  it('refuses a file name whose extension names another format', async () => {
    expect(await refusal(file(WAV_FILE, 'photo.png', null))).toBe('the file name ends in .png but the content is a WAV file');
    expect(await refusal(file(JPEG, 'data.CSV', 'application/octet-stream'))).toBe('the file name ends in .csv but the content is a JPEG image');
    expect(await refusal(file(CSV_FILE, 'a.json', 'text/plain'))).toBe('the file name ends in .json but the content is CSV text');
  });

  it('refuses empty and unknown content, naming what was seen', async () => {
    expect(await refusal(file(Buffer.alloc(0), 'a.json', 'application/json'))).toBe('the file is empty');
    expect(await refusal(file(GIF, 'a.bin', null))).toBe('the file is not a supported sample format: it is a GIF image');
    expect(await refusal(file(Buffer.from([0, 1, 2, 3]), 'a', null))).toBe('the file is not a supported sample format: it is binary content starting with 00 01 02 03');
  });

  it("passes the format parsers' refusals through", async () => {
    expect(await refusal(file(WAV_FILE.subarray(0, 50), 'a.wav', 'audio/wav'))).toMatch(/^the WAV file is truncated/);
    expect(await refusal(file(PNG_FILE.subarray(0, 50), 'a.png', 'image/png'))).toMatch(/^the image is not a valid PNG/);
    expect(await refusal(file(MP4_FILE.subarray(0, 50), 'a.mp4', 'video/mp4'))).toMatch(/^the MP4 file is truncated/);
  });
});

describe('parseSampleFile under fuzzing', () => {
  const DECLARED = [null, 'application/octet-stream', 'text/plain', 'application/json', 'application/cbor', 'text/csv', 'audio/wav', 'image/png', 'image/jpeg', 'video/mp4', 'video/avi'];
  const NAMES = ['sample', 'a.json', 'a.cbor', 'a.csv', 'a.wav', 'a.png', 'a.jpg', 'a.mp4', 'a.avi', 'a.txt'];
  const SEEDS = [JSON_FILE, CBOR_FILE, CSV_FILE, WAV_FILE, wav({ bitsPerSample: 8, extensible: true, frames: [[1, 2]] }), PNG_FILE, JPEG, MP4_FILE, mp4({ moovAfterMdat: true, largeMdat: true, version: 1 }), AVI_FILE];

  /** Resolves to a ParsedSample, or rejects with SampleFormatError: anything else fails the property. */
  const parsesOrRefuses = async (bytes: Buffer, fileName = 'sample', declaredType: string | null = null) => {
    try {
      const sample = await parseSampleFile(parseInput(bytes, { fileName, declaredType }));
      expect(['time-series', 'audio', 'image', 'video']).toContain(sample.kind);
      expect(Number.isFinite(sample.totalLengthMs)).toBe(true);
    } catch (error) {
      if (!(error instanceof SampleFormatError)) throw error;
    }
  };

  it('answers arbitrary bytes with a sample or a SampleFormatError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 600 }), fc.constantFrom(...DECLARED), fc.constantFrom(...NAMES), async (bytes, type, name) =>
        parsesOrRefuses(Buffer.from(bytes), name, type),
      ),
      { numRuns: 6000, timeout: 2000 },
    );
  });

  it('answers arbitrary bytes behind every magic number the same way', async () => {
    const magics = ['{', '\ufeff {', '\xa2', '\xbf', 'RIFF\x40\0\0\0WAVE', 'RIFF\x40\0\0\0AVI ', '\x89PNG\r\n\x1a\n', '\xff\xd8\xff', '\0\0\0\x18ftypisom', 'timestamp,a\n'].map((m) =>
      Buffer.from(m, 'latin1'),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...magics), fc.uint8Array({ maxLength: 400 }), async (magic, tail) => parsesOrRefuses(Buffer.concat([magic, tail]))),
      { numRuns: 6000, timeout: 2000 },
    );
  });

  it('answers mutated valid files (flipped, overwritten, inserted and cut bytes) the same way', async () => {
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.nat(7) }),
      fc.record({ kind: fc.constant('set32' as const), at: fc.nat(), value: fc.constantFrom(0, 1, 7, 8, 16, 0x7fffffff, 0xffffffff, 0xfffffff0), bigEndian: fc.boolean() }),
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 9 }) }),
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.nat(SEEDS.length - 1), fc.array(mutation, { minLength: 1, maxLength: 4 }), fc.constantFrom(...DECLARED), async (seed, mutations, type) => {
        let bytes = Buffer.from(SEEDS[seed]!);
        for (const m of mutations) {
          if (bytes.length === 0) break;
          const at = m.at % bytes.length;
          if (m.kind === 'flip') bytes[at] = bytes[at]! ^ (1 << m.bit);
          else if (m.kind === 'set32') {
            // A size or count field set to an edge value, in either byte order (RIFF is little-endian, MP4 big-endian).
            if (bytes.length >= 4) bytes[m.bigEndian ? 'writeUInt32BE' : 'writeUInt32LE'](m.value, Math.min(at, bytes.length - 4));
          }
          else if (m.kind === 'insert') bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(m.bytes), bytes.subarray(at)]);
          else bytes = bytes.subarray(0, at);
        }
        await parsesOrRefuses(bytes, 'sample', type);
      }),
      { numRuns: 10000, timeout: 2000 },
    );
  });
});
