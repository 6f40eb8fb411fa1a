// Acquisition files are read as streams: whatever the chunking, the answer (signature check
// included) is the one the whole file gets; values come out exactly as JSON.parse and the cbor
// library decode them; the ranges of sampleLimits.ts are enforced naming the field.
import { createHmac } from 'node:crypto';
import cbor from 'cbor';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAcquisition, readAcquisitionValues, type AcquisitionEncoding } from '../../../../domain/sample/formats/acquisitionFormat';
import { KEPT_STRING_CHARS } from '../../../../domain/sample/formats/documentEvents';
import { SampleFormatError, type ParseInput, type SampleSource } from '../../../../domain/sample/formats/sampleFormat';
import { MAX_DEVICE_TEXT_LENGTH, MAX_INTERVAL_MS, MIN_INTERVAL_MS } from '../../../../domain/sample/sampleLimits';

const KEY = 'b0a3f4d2c1e0f9a8a6d8f5b2e1c94e7b';
const ZEROS = '0'.repeat(64);

/** A source that answers every read only up to the next cut: the parser sees the file in those pieces. */
function cutSource(bytes: Buffer, cuts: number[]): SampleSource {
  const ends = [...cuts.filter((c) => c > 0 && c < bytes.length), bytes.length].sort((a, b) => a - b);
  return {
    size: bytes.length,
    async read(offset, length) {
      const end = Math.min(offset + length, ends.find((e) => e > offset) ?? bytes.length);
      return Buffer.from(bytes.subarray(offset, end));
    },
    async readAll() {
      throw new Error('the whole file was asked for');
    },
  };
}

const input = (source: SampleSource, encoding: AcquisitionEncoding, hmacKeys = [KEY]): ParseInput => ({
  source,
  fileName: `sample.${encoding}`,
  declaredType: null,
  hmacKeys,
});

async function parseCut(bytes: Buffer, encoding: AcquisitionEncoding, cuts: number[], hmacKeys = [KEY]) {
  return parseAcquisition(input(cutSource(bytes, cuts), encoding, hmacKeys), encoding);
}

async function refusalCut(bytes: Buffer, encoding: AcquisitionEncoding, cuts: number[] = []): Promise<string> {
  try {
    await parseCut(bytes, encoding, cuts);
  } catch (error) {
    expect(error).toBeInstanceOf(SampleFormatError);
    return (error as Error).message;
  }
  throw new Error('the file was accepted');
}

/** Signs as the device library does (sdk-reference 4.1): HMAC over the bytes with the zero placeholder, then the hex in its place. */
function sign(unsigned: Buffer): Buffer {
  const hex = createHmac('sha256', KEY).update(unsigned).digest('hex');
  const at = unsigned.indexOf(ZEROS);
  const signed = Buffer.from(unsigned);
  signed.write(hex, at, 'ascii');
  return signed;
}

function document(payload: Record<string, unknown> = {}, alg = 'HS256') {
  return {
    protected: { ver: 'v1', alg, iat: 1_764_000_000 },
    signature: ZEROS,
    payload: {
      // Two-, three- and four-byte UTF-8 sequences, so that cuts fall inside them.
      device_name: 'Gerät ✓ 𝄞',
      device_type: 'LINUX',
      interval_ms: 16,
      sensors: [
        { name: 'accX', units: 'µm/s²' },
        { name: 'accY', units: 'm/s2' },
      ],
      values: [
        [0.1, -9.81],
        [1e-7, 123456789012345680000],
        [-0, 3.141592653589793],
        [2.5e-300, -1.7976931348623157e308],
      ],
      ...payload,
    },
  };
}

const signedJson = sign(Buffer.from(JSON.stringify(document(), null, 1).replace('"accY"', '"acc\\u0059"'), 'utf8'));
const signedCbor = sign(cbor.encode(document()));

describe('a signed file cut into two chunks at every byte offset', () => {
  it.each([
    ['JSON', signedJson, 'json'],
    ['CBOR', signedCbor, 'cbor'],
  ] as const)('%s gets the answer the whole file gets, signature valid, whether the cut falls in the signature, a number, a UTF-8 sequence or a CBOR head', async (_name, bytes, encoding) => {
    const whole = await parseCut(bytes, encoding, []);
    expect(whole.signature).toEqual({ method: 'HS256', valid: true, keyIndex: 0 });
    expect(whole.deviceName).toBe('Gerät ✓ 𝄞');
    expect(whole.sensors[0]).toEqual({ name: 'accX', units: 'µm/s²' });
    expect(whole.sensors[1]?.name).toBe('accY');
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(await parseCut(bytes, encoding, [cut]), `cut at byte ${cut}`).toEqual(whole);
    }
  });

  it.each([
    ['JSON', signedJson, 'json'],
    ['CBOR', signedCbor, 'cbor'],
  ] as const)('%s read one byte at a time gets the same answer', async (_name, bytes, encoding) => {
    const whole = await parseCut(bytes, encoding, []);
    const everyByte = Array.from({ length: bytes.length }, (_, i) => i);
    expect(await parseCut(bytes, encoding, everyByte)).toEqual(whole);
  });

  it.each([
    ['JSON', signedJson, 'json'],
    ['CBOR', signedCbor, 'cbor'],
  ] as const)('%s with one signature character changed is invalid wherever the cuts fall in the signature', async (_name, bytes, encoding) => {
    const text = bytes.toString('latin1');
    const at = text.search(/[0-9a-f]{64}/);
    expect(at).toBeGreaterThan(0);
    const tampered = Buffer.from(bytes);
    tampered[at + 10] = tampered[at + 10] === 0x61 ? 0x62 : 0x61;
    for (let cut = at - 1; cut <= at + 65; cut++) {
      expect((await parseCut(tampered, encoding, [cut, cut + 3])).signature, `cut at byte ${cut}`).toEqual({ method: 'HS256', valid: false, keyIndex: null });
    }
  });

  it('verifies a JSON file that starts with a UTF-8 byte order mark, signed over the mark too, wherever the first cuts fall', async () => {
    const withBom = sign(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(document()), 'utf8')]));
    for (const cuts of [[], [1], [2], [3], [1, 2], [4]]) {
      expect((await parseCut(withBom, 'json', cuts)).signature, `cuts ${cuts.join(',')}`).toEqual({ method: 'HS256', valid: true, keyIndex: 0 });
    }
  });

  it('refuses invalid UTF-8 in JSON wherever the cut falls around the bad sequence', async () => {
    const bad = Buffer.concat([Buffer.from('{"a":"é', 'utf8'), Buffer.from([0xe2, 0x28, 0xa1]), Buffer.from('"}', 'utf8')]);
    for (let cut = 1; cut < bad.length; cut++) expect(await refusalCut(bad, 'json', [cut])).toBe('The JSON file is not valid UTF-8');
    const truncated = Buffer.concat([Buffer.from('{"a":"', 'utf8'), Buffer.from([0xf0, 0x9d, 0x84])]);
    expect(await refusalCut(truncated, 'json', [7])).toBe('The JSON file is not valid UTF-8');
  });

  it('refuses a CBOR text string that is not UTF-8, and trailing bytes, wherever the cuts fall', async () => {
    const badText = Buffer.concat([Buffer.from([0xa1, 0x61, 0x61, 0x63]), Buffer.from([0x61, 0xc3, 0x28])]);
    for (let cut = 1; cut < badText.length; cut++) expect(await refusalCut(badText, 'cbor', [cut])).toMatch(/^Malformed CBOR: a text string is not valid UTF-8/);
    const trailing = Buffer.concat([signedCbor, Buffer.from([0x00])]);
    expect(await refusalCut(trailing, 'cbor', [trailing.length - 1])).toMatch(/^Malformed CBOR: bytes follow the data item/);
  });
});

describe('values come out exactly as the reference decoders give them', () => {
  it('JSON numbers (any double, in any notation JSON.stringify writes) equal JSON.parse', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.double({ noNaN: true, noDefaultInfinity: true })), { minLength: 1, maxLength: 50 }), (rows) => {
        const bytes = Buffer.from(JSON.stringify(document({ values: rows }, 'none')), 'utf8');
        const expected = (JSON.parse(bytes.toString('utf8')) as { payload: { values: number[][] } }).payload.values;
        expect(readAcquisitionValues(bytes, 'json')).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('JSON number spellings JSON.stringify never writes (exponents, long digit runs, zeros) equal JSON.parse', () => {
    const spellings = ['1E3', '1e+3', '-0.000001e6', '0.1000000000000000055511151231257827', '123456789012345678901234567890', '1e22', '1e23', '4.9e-324', '2e-324', '0e999', '-0', '1.5e-7'];
    const text = `{"protected":{"ver":"v1","alg":"none"},"signature":"","payload":{"interval_ms":1,"sensors":[{"name":"a","units":""}],"values":[${spellings.join(',')}]}}`;
    expect(readAcquisitionValues(Buffer.from(text), 'json')).toEqual(spellings.map((s) => [JSON.parse(s) as number]));
  });

  it('JSON numbers that are not JSON are refused', async () => {
    for (const bad of ['01', '1.', '.5', '+1', '-', '1e', '1e+', '0x10', 'NaN', 'Infinity', '1.2.3', '--1']) {
      const text = `{"protected":{"ver":"v1","alg":"none"},"signature":"","payload":{"interval_ms":1,"sensors":[{"name":"a","units":""}],"values":[${bad}]}}`;
      expect(await refusalCut(Buffer.from(text), 'json'), bad).toMatch(/^Malformed JSON/);
    }
  });

  it('CBOR integers, half, single and double floats equal the cbor library’s decoding', () => {
    const cell = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.float({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0.5, -2, 65504, 1e-5));
    fc.assert(
      fc.property(fc.array(fc.tuple(cell, cell), { minLength: 1, maxLength: 50 }), (rows) => {
        const bytes = cbor.encode(document({ values: rows }, 'none'));
        const expected = (cbor.decodeFirstSync(bytes) as { payload: { values: number[][] } }).payload.values;
        expect(readAcquisitionValues(bytes, 'cbor')).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the ranges every sample value must fall in', () => {
  const poison = '{"protected":{"ver":"v1","alg":"none"},"signature":"0","payload":{"interval_ms":1e308,"sensors":[{"name":"x","units":"u"}],"values":[[1],[2]]}}';

  it('refuses the issue’s poison file (interval 1e308, whose length overflowed), naming payload.interval_ms', async () => {
    expect(await refusalCut(Buffer.from(poison), 'json')).toBe(`"payload.interval_ms" is 1e+308; it must be from ${MIN_INTERVAL_MS} to ${MAX_INTERVAL_MS} (milliseconds)`);
  });

  it('accepts intervals at both ends of the range and refuses just outside them', async () => {
    const withInterval = (ms: number) => Buffer.from(poison.replace('1e308', String(ms)));
    expect((await parseCut(withInterval(MIN_INTERVAL_MS), 'json', [])).intervalMs).toBe(MIN_INTERVAL_MS);
    expect((await parseCut(withInterval(MAX_INTERVAL_MS), 'json', [])).totalLengthMs).toBe(2 * MAX_INTERVAL_MS);
    expect(await refusalCut(withInterval(MIN_INTERVAL_MS / 2), 'json')).toMatch(/^"payload\.interval_ms" is 5e-7; it must be from/);
    expect(await refusalCut(withInterval(MAX_INTERVAL_MS + 1), 'json')).toMatch(/^"payload\.interval_ms" is 86400001;/);
  });

  it('refuses a 3 MB device_name as it streams, telling its length, and keeps only a bounded prefix of any string', async () => {
    const huge = 'n'.repeat(3_000_000);
    const bytes = Buffer.from(JSON.stringify(document({ device_name: huge }, 'none')));
    expect(await refusalCut(bytes, 'json')).toBe(`"payload.device_name" is 3000000 characters long; at most ${MAX_DEVICE_TEXT_LENGTH} are allowed`);
    expect(await refusalCut(cbor.encode(document({ device_type: huge }, 'none')), 'cbor')).toBe(`"payload.device_type" is 3000000 characters long; at most ${MAX_DEVICE_TEXT_LENGTH} are allowed`);
    expect(KEPT_STRING_CHARS).toBeLessThan(4096);
  });

  it('refuses control and direction-override characters in device and sensor text, naming the field', async () => {
    expect(await refusalCut(Buffer.from(JSON.stringify(document({ device_name: 'a\u0007b' }, 'none'))), 'json')).toBe('"payload.device_name" contains a control character (U+0007)');
    const sensors = [{ name: 'acc\u202eX', units: '' }, { name: 'b', units: '' }];
    expect(await refusalCut(cbor.encode(document({ sensors }, 'none')), 'cbor')).toBe('"payload.sensors[0].name" contains an invisible formatting character (U+202E)');
    const units = [{ name: 'a', units: 'm\n' }, { name: 'b', units: '' }];
    expect(await refusalCut(Buffer.from(JSON.stringify(document({ sensors: units }, 'none'))), 'json')).toBe('"payload.sensors[0].units" contains a control character (U+000A)');
  });
});

describe('the document read in file order', () => {
  it('checks rows that come before the sensors against the sensors once they are read', async () => {
    const rowsFirst = (values: unknown) =>
      Buffer.from(`{"protected":{"ver":"v1","alg":"none"},"signature":"","payload":{"values":${JSON.stringify(values)},"interval_ms":10,"sensors":[{"name":"a","units":""},{"name":"b","units":""}]}}`);
    expect((await parseCut(rowsFirst([[1, 2], [3, 4]]), 'json', [])).valuesCount).toBe(2);
    expect(await refusalCut(rowsFirst([[1], [2]]), 'json')).toBe('"payload.values[0]" (row 1) has 1 values; expected 2 (one per sensor)');
    expect(await refusalCut(rowsFirst([1, 2]), 'json')).toBe('"payload.values[0]" (row 1) must be an array of 2 numbers, got 1');
    expect(await refusalCut(rowsFirst([[1, 2], [3]]), 'json')).toBe('"payload.values[1]" (row 2) has 1 values; expected 2 (one per sensor)');
  });

  it('refuses a field of the format given twice in JSON, where which one counts would be a guess', async () => {
    const twice = Buffer.from('{"protected":{"ver":"v1","alg":"none"},"signature":"","payload":{"interval_ms":10,"interval_ms":20,"sensors":[{"name":"a","units":""}],"values":[1]}}');
    expect(await refusalCut(twice, 'json')).toBe('"payload" has the key "interval_ms" twice');
  });

  it('ignores unknown members of any shape, but refuses duplicate keys anywhere in CBOR, as before', async () => {
    const extra = { meta: { deep: [[{ a: 1 }], 'x', null], other: new Map<unknown, unknown>([[1, 2]]) } };
    expect((await parseCut(cbor.encode(document(extra, 'none')), 'cbor', [])).valuesCount).toBe(4);
    expect((await parseCut(Buffer.from(JSON.stringify(document({ meta: { a: [1, { b: 'c' }] } }, 'none'))), 'json', [])).valuesCount).toBe(4);
    const duplicate = Buffer.concat([Buffer.from([0xa1]), cbor.encode('meta'), Buffer.from([0xa2]), cbor.encode('k'), cbor.encode(1), cbor.encode('k'), cbor.encode(2)]);
    expect(await refusalCut(duplicate, 'cbor')).toMatch(/^Malformed CBOR: Duplicate key in a map: "k"/);
  });

  it('marks a CBOR signature written as an indefinite-length string invalid, as before (its bytes are not one run), and still parses the file', async () => {
    const enc = (value: unknown) => cbor.encode(value);
    const indefinite = Buffer.concat([Buffer.from([0x7f]), enc('0'.repeat(32)), enc('0'.repeat(32)), Buffer.from([0xff])]);
    const bytes = Buffer.concat([Buffer.from([0xa3]), enc('protected'), enc({ ver: 'v1', alg: 'HS256' }), enc('signature'), indefinite, enc('payload'), enc(document().payload)]);
    const parsed = await parseCut(bytes, 'cbor', [40]);
    expect(parsed.signature).toEqual({ method: 'HS256', valid: false, keyIndex: null });
    expect(parsed.valuesCount).toBe(4);
  });

  it('bounds what one file can make the tokenizers hold: nesting, number length and map size are refused past their limits', async () => {
    const deepJson = Buffer.from(`{"protected":{"ver":"v1","alg":"none"},"x":${'['.repeat(300)}${']'.repeat(300)}}`);
    expect(await refusalCut(deepJson, 'json')).toMatch(/^Malformed JSON: nested deeper than 256 levels/);
    const longNumber = Buffer.from(`{"x":1${'0'.repeat(600)}}`);
    expect(await refusalCut(longNumber, 'json')).toMatch(/^Malformed JSON: a number longer than 512 characters/);
    const bigMap = Buffer.concat([Buffer.from([0xb9, 0x13, 0x88]), ...Array.from({ length: 5000 }, (_, i) => Buffer.concat([cbor.encode(`k${i}`), cbor.encode(i)]))]);
    expect(await refusalCut(bigMap, 'cbor')).toMatch(/^Malformed CBOR: a map of 5000 entries; at most 4096/);
  });

  it('readAcquisitionValues stops at the rows asked for, without reading what follows', () => {
    const text = '{"protected":{"ver":"v1","alg":"none"},"signature":"","payload":{"interval_ms":10,"sensors":[{"name":"a","units":""}],"values":[[1],[2],[3],oops';
    expect(readAcquisitionValues(Buffer.from(text), 'json', 2)).toEqual([[1], [2]]);
    expect(() => readAcquisitionValues(Buffer.from(text), 'json')).toThrow(SampleFormatError);
  });
});
