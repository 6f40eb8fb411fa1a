import { createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import cbor from 'cbor';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_ACQUISITION_VALUES,
  parseAcquisition,
  readAcquisitionValues,
  type AcquisitionEncoding,
} from '../../../../domain/sample/formats/acquisitionFormat';
import { SampleFormatError } from '../../../../domain/sample/formats/sampleFormat';
import { parseInput } from '../../../support/memorySource';

const ZEROS = '0'.repeat(64);
const KEY = 'a6d8f5b2e1c94e7bb0a3f4d2c1e0f9a8';

// --- The official device library, run offline ------------------------------------------------
// DataForwarder.upload() builds, signs and POSTs the sample with undici's fetch. Loading undici
// from the library's own folder and installing a MockAgent as the global dispatcher captures the
// exact bytes it would send, with no network.

interface MockAgentLike {
  disableNetConnect(): void;
  get(origin: string): {
    intercept(options: { path: string; method: string }): {
      reply(status: number, body: (options: { body?: unknown }) => string): void;
    };
  };
}
interface UndiciLike {
  MockAgent: new () => MockAgentLike;
  getGlobalDispatcher(): unknown;
  setGlobalDispatcher(dispatcher: unknown): void;
}
interface DataForwarderLike {
  addData(values: number[]): void;
  upload(options: { filename: string; label?: string; category: string }): Promise<string>;
}
interface DataForwarderOptions {
  deviceId: string;
  deviceType: string;
  sensors: { name: string; units: string }[];
  intervalMs?: number;
  frequency?: number;
  apiKey: string;
  hmacKey?: string;
  host?: string;
}

const requireHere = createRequire(import.meta.url);
const dataForwarderPath = requireHere.resolve('edge-impulse-linux/build/library/data-forwarder.js');
const requireInLibrary = createRequire(dataForwarderPath);
const undici = requireInLibrary('undici') as UndiciLike;
const { DataForwarder } = requireInLibrary(dataForwarderPath) as {
  DataForwarder: new (options: DataForwarderOptions) => DataForwarderLike;
};

/** The body the official DataForwarder uploads for these rows, signed with `hmacKey`. */
async function officialUpload(hmacKey: string, rows: number[][], sensors = [{ name: 'accX', units: 'm/s2' }, { name: 'accY', units: 'm/s2' }, { name: 'accZ', units: 'm/s2' }]): Promise<Buffer> {
  const agent = new undici.MockAgent();
  agent.disableNetConnect();
  let body: Buffer | null = null;
  agent
    .get('https://ingestion.studio.test')
    .intercept({ path: '/api/training/data', method: 'POST' })
    .reply(200, (options) => {
      body = Buffer.from(options.body as Uint8Array | string);
      return 'stored.json';
    });
  const previous = undici.getGlobalDispatcher();
  undici.setGlobalDispatcher(agent);
  try {
    const forwarder = new DataForwarder({
      deviceId: 'ac:87:a3:0a:2d:1b',
      deviceType: 'LINUX_X86',
      sensors,
      intervalMs: 16,
      apiKey: 'ei_0123',
      hmacKey,
      host: 'studio.test',
    });
    for (const row of rows) forwarder.addData(row);
    await forwarder.upload({ filename: 'idle.01.json', label: 'idle', category: 'training' });
  } finally {
    undici.setGlobalDispatcher(previous);
  }
  if (body === null) throw new Error('the library sent nothing');
  return body;
}

// --- Signing as the library does, for documents a test shapes itself -------------------------

/** The device library's steps (sdk-reference 4.1): HMAC over the bytes with the 64-zero placeholder, then overwrite the first run of 64 zeros. */
function signBytes(unsigned: Buffer, key: string): Buffer {
  const hex = createHmac('sha256', key).update(unsigned).digest('hex');
  const at = unsigned.indexOf(ZEROS);
  if (at === -1) throw new Error('no placeholder');
  const signed = Buffer.from(unsigned);
  signed.write(hex, at, 'ascii');
  return signed;
}

const signJson = (document: unknown, key: string, space?: number): Buffer =>
  signBytes(Buffer.from(JSON.stringify(document, null, space), 'utf8'), key);

const signCbor = (document: unknown, key: string): Buffer => signBytes(cbor.encode(document), key);

interface Doc {
  protected: Record<string, unknown>;
  signature: unknown;
  payload: Record<string, unknown>;
}

function document(overrides: { protected?: Record<string, unknown>; payload?: Record<string, unknown>; signature?: unknown } = {}): Doc {
  return {
    protected: { ver: 'v1', alg: 'HS256', iat: 1_764_000_000, ...overrides.protected },
    signature: 'signature' in overrides ? overrides.signature : ZEROS,
    payload: {
      device_name: 'ac:87:a3:0a:2d:1b',
      device_type: 'LINUX_X86',
      interval_ms: 10,
      sensors: [
        { name: 'accX', units: 'm/s2' },
        { name: 'accY', units: 'm/s2' },
      ],
      values: [
        [1.5, -2],
        [0.25, 7],
        [3, 4],
      ],
      ...overrides.payload,
    },
  };
}

const unsignedJson = (doc: unknown): Buffer => Buffer.from(JSON.stringify(doc), 'utf8');

async function parse(bytes: Buffer, encoding: AcquisitionEncoding = 'json', hmacKeys: string[] = [KEY]) {
  return parseAcquisition(parseInput(bytes, { hmacKeys, fileName: `sample.${encoding}` }), encoding);
}

async function refusal(bytes: Buffer, encoding: AcquisitionEncoding = 'json'): Promise<string> {
  try {
    await parse(bytes, encoding);
  } catch (error) {
    expect(error).toBeInstanceOf(SampleFormatError);
    return (error as Error).message;
  }
  throw new Error('the file was accepted');
}

function withPayload(payload: Record<string, unknown>): Buffer {
  return unsignedJson(document({ protected: { alg: 'none' }, payload }));
}

describe('a sample signed by the official device library (DataForwarder)', () => {
  const rows = [
    [0.12, -9.81, 0.5],
    [0.1, -9.79, 0.52],
    [0.08, -9.8, 0.49],
    [0.11, -9.82, 0.51],
  ];
  let signed: Buffer;
  beforeAll(async () => {
    signed = await officialUpload(KEY, rows);
  });

  it('is the library\u2019s compact JSON with the signature in place of the zeros', () => {
    const text = signed.toString('utf8');
    expect(text.startsWith('{"protected":{"ver":"v1","alg":"HS256","iat":')).toBe(true);
    expect(text).toMatch(/"signature":"[0-9a-f]{64}","payload":/);
  });

  it('is valid with the key that signed it, found among several keys', async () => {
    const sample = await parse(signed, 'json', ['first-key', KEY, 'third-key']);
    expect(sample.signature).toEqual({ method: 'HS256', valid: true, keyIndex: 1 });
  });

  it('is invalid, and still parsed, with another key', async () => {
    const sample = await parse(signed, 'json', ['another-key', 'yet-another']);
    expect(sample.signature).toEqual({ method: 'HS256', valid: false, keyIndex: null });
    expect(sample.valuesCount).toBe(4);
  });

  it('is invalid when the project has no HMAC key', async () => {
    expect((await parse(signed, 'json', [])).signature).toEqual({ method: 'HS256', valid: false, keyIndex: null });
  });

  it('is invalid once a value of the payload is changed', async () => {
    const tampered = Buffer.from(signed.toString('utf8').replace('-9.79', '-9.78'), 'utf8');
    expect(tampered.equals(signed)).toBe(false);
    expect((await parse(tampered)).signature).toEqual({ method: 'HS256', valid: false, keyIndex: null });
  });

  it('is invalid once its signature is changed', async () => {
    const text = signed.toString('utf8');
    const signature = /"signature":"([0-9a-f]{64})"/.exec(text)?.[1] ?? '';
    const flipped = (signature[0] === 'a' ? 'b' : 'a') + signature.slice(1);
    const tampered = Buffer.from(text.replace(signature, flipped), 'utf8');
    expect((await parse(tampered)).signature).toEqual({ method: 'HS256', valid: false, keyIndex: null });
  });

  it('verifies with the key "0" the tools use when they have none', async () => {
    const body = await officialUpload('0', rows);
    expect((await parse(body, 'json', ['0'])).signature).toEqual({ method: 'HS256', valid: true, keyIndex: 0 });
  });

  it('reports what its payload says', async () => {
    const sample = await parse(signed);
    expect(sample).toEqual({
      kind: 'time-series',
      contentType: 'application/json',
      intervalMs: 16,
      frequency: 62.5,
      sensors: [
        { name: 'accX', units: 'm/s2' },
        { name: 'accY', units: 'm/s2' },
        { name: 'accZ', units: 'm/s2' },
      ],
      valuesCount: 4,
      totalLengthMs: 64,
      deviceName: 'ac:87:a3:0a:2d:1b',
      deviceType: 'LINUX_X86',
      width: null,
      height: null,
      signature: { method: 'HS256', valid: true, keyIndex: 0 },
    });
    expect(readAcquisitionValues(signed, 'json')).toEqual(rows);
  });
});

describe('the HS256 check on JSON', () => {
  it('matches a file signed by reproducing the library\u2019s steps', async () => {
    expect((await parse(signJson(document(), KEY))).signature).toEqual({ method: 'HS256', valid: true, keyIndex: 0 });
  });

  it('works on the raw bytes, so pretty-printed JSON verifies too', async () => {
    const pretty = signJson(document(), KEY, 2);
    expect(pretty.toString('utf8')).toContain('\n  "signature": "');
    expect((await parse(pretty)).signature).toMatchObject({ valid: true });
  });

  it('uses the top-level signature, not a nested "signature" key that comes first', async () => {
    const doc = {
      protected: { ver: 'v1', alg: 'HS256' },
      payload: { ...document().payload, signature: 'a'.repeat(64) },
      signature: ZEROS,
    };
    const signed = signJson(doc, KEY);
    expect(signed.indexOf('"signature"')).toBeLessThan(signed.lastIndexOf('"signature"'));
    expect((await parse(signed)).signature).toMatchObject({ valid: true });
  });

  it('finds a signature key written with escapes', async () => {
    const unsigned = Buffer.from(JSON.stringify(document()).replace('"signature"', '"sig\\u006eature"'), 'utf8');
    expect((await parse(signBytes(unsigned, KEY))).signature).toMatchObject({ valid: true });
  });

  it('is invalid when the signature is not 64 hex characters', async () => {
    const doc = document({ signature: 'abc' });
    expect((await parse(unsignedJson(doc))).signature).toEqual({ method: 'HS256', valid: false, keyIndex: null });
  });

  it('compares the lowercase hex the library writes: the same signature in capitals is invalid', async () => {
    const text = signJson(document(), KEY).toString('utf8');
    const upper = text.replace(/"signature":"([0-9a-f]{64})"/, (_all, hex: string) => `"signature":"${hex.toUpperCase()}"`);
    expect(upper).not.toBe(text);
    expect((await parse(Buffer.from(upper, 'utf8'))).signature).toMatchObject({ valid: false });
  });

  it('is invalid for the zero placeholder itself', async () => {
    expect((await parse(unsignedJson(document()))).signature).toMatchObject({ valid: false });
  });
});

describe('an unsigned sample (alg none)', () => {
  it('is accepted and marked unsigned, as in the spec\u2019s example', async () => {
    const bytes = unsignedJson(document({ protected: { alg: 'none' }, signature: '00' }));
    const sample = await parse(bytes);
    expect(sample.signature).toEqual({ method: 'none', valid: false });
    expect(sample.valuesCount).toBe(3);
  });

  it('may leave out iat, device_name and device_type', async () => {
    const doc = document({ protected: { alg: 'none' } });
    delete doc.protected.iat;
    delete doc.payload.device_name;
    delete doc.payload.device_type;
    const sample = await parse(unsignedJson(doc));
    expect(sample.deviceName).toBeNull();
    expect(sample.deviceType).toBeNull();
  });
});

describe('a CBOR sample', () => {
  const doc = document({ payload: { values: [[1.5, -2], [0.25, 7], [3, 7]] } });

  it('signed the same way is valid with the right key', async () => {
    const sample = await parse(signCbor(doc, KEY), 'cbor', ['other', KEY]);
    expect(sample.contentType).toBe('application/cbor');
    expect(sample.signature).toEqual({ method: 'HS256', valid: true, keyIndex: 1 });
    expect(sample.valuesCount).toBe(3);
    expect(sample.intervalMs).toBe(10);
  });

  it('is invalid with another key', async () => {
    expect((await parse(signCbor(doc, 'wrong'), 'cbor')).signature).toEqual({ method: 'HS256', valid: false, keyIndex: null });
  });

  it('is invalid once a value is changed', async () => {
    const signed = signCbor(doc, KEY);
    const tampered = Buffer.from(signed);
    expect(tampered[tampered.length - 1]).toBe(7); // the last value, a one-byte integer
    tampered[tampered.length - 1] = 8;
    expect(readAcquisitionValues(tampered, 'cbor').at(-1)).toEqual([3, 8]);
    expect((await parse(tampered, 'cbor')).signature).toMatchObject({ valid: false });
  });

  it('uses the top-level signature, not one nested in the payload', async () => {
    const nested = { protected: doc.protected, payload: { ...doc.payload, signature: 'b'.repeat(64) }, signature: ZEROS };
    expect((await parse(signCbor(nested, KEY), 'cbor')).signature).toMatchObject({ valid: true });
  });

  it('with indefinite-length map and arrays, signed the same way, is valid', async () => {
    const enc = (value: unknown) => cbor.encode(value);
    const indefiniteValues = Buffer.concat([Buffer.from([0x9f]), enc([1, 2]), Buffer.from([0x9f]), enc(3), enc(4.5), Buffer.from([0xff, 0xff])]);
    const payload = Buffer.concat([
      Buffer.from([0xbf]),
      enc('interval_ms'), enc(20),
      enc('sensors'), enc([{ name: 'a', units: '' }, { name: 'b', units: '' }]),
      enc('values'), indefiniteValues,
      Buffer.from([0xff]),
    ]);
    const unsigned = Buffer.concat([
      Buffer.from([0xbf]),
      enc('protected'), enc({ ver: 'v1', alg: 'HS256' }),
      enc('payload'), payload,
      enc('signature'), enc(ZEROS),
      Buffer.from([0xff]),
    ]);
    const signed = signBytes(unsigned, KEY);
    expect(readAcquisitionValues(signed, 'cbor')).toEqual([[1, 2], [3, 4.5]]);
    expect((await parse(signed, 'cbor')).signature).toEqual({ method: 'HS256', valid: true, keyIndex: 0 });
  });

  it('gives its values back, single-sensor flat lists as one-value rows', () => {
    const flat = document({ payload: { sensors: [{ name: 'audio', units: 'wav' }], values: [1, 2, 3] } });
    expect(readAcquisitionValues(cbor.encode(flat), 'cbor')).toEqual([[1], [2], [3]]);
    expect(readAcquisitionValues(cbor.encode(doc), 'cbor')).toEqual([[1.5, -2], [0.25, 7], [3, 7]]);
  });

  it('refuses bytes that are not CBOR, truncated CBOR and trailing data', async () => {
    const signed = signCbor(doc, KEY);
    expect(await refusal(Buffer.alloc(0), 'cbor')).toMatch(/Malformed CBOR/);
    expect(await refusal(Buffer.from([0xff, 0x00]), 'cbor')).toMatch(/Malformed CBOR/);
    expect(await refusal(signed.subarray(0, signed.length - 3), 'cbor')).toMatch(/Malformed CBOR/);
    expect(await refusal(Buffer.concat([signed, Buffer.from([0x01])]), 'cbor')).toMatch(/Malformed CBOR/);
  });

  it('refuses nesting deeper than the format needs', async () => {
    const deep = Buffer.concat([Buffer.alloc(1000, 0x81), Buffer.from([0x01])]);
    expect(await refusal(deep, 'cbor')).toMatch(/Malformed CBOR.*depth/i);
  });

  it('refuses duplicate keys, maps with non-text keys and tagged values', async () => {
    const duplicate = Buffer.concat([Buffer.from([0xa2]), cbor.encode('signature'), cbor.encode('a'), cbor.encode('signature'), cbor.encode('b')]);
    expect(await refusal(duplicate, 'cbor')).toMatch(/Malformed CBOR.*[Dd]uplicate/);
    const numericKeys = cbor.encode(new Map<unknown, unknown>([[1, 'x']]));
    expect(await refusal(numericKeys, 'cbor')).toMatch(/The document must be an object, got a map whose keys are not all text/);
    const tagged = cbor.encode(document({ payload: { interval_ms: new cbor.Tagged(2, Buffer.from([1, 0])) } }));
    expect(await refusal(tagged, 'cbor')).toMatch(/interval_ms.*CBOR tag 2/);
  });

  it('refuses NaN and infinite values', async () => {
    const nan = cbor.encode(document({ protected: { alg: 'none' }, payload: { values: [[1, Number.NaN]] } }));
    expect(await refusal(nan, 'cbor')).toMatch(/payload\.values\[0\]\[1\].*finite number, got NaN/);
    const inf = cbor.encode(document({ protected: { alg: 'none' }, payload: { values: [[Number.POSITIVE_INFINITY, 1]] } }));
    expect(await refusal(inf, 'cbor')).toMatch(/finite number, got Infinity/);
  });
});

describe('values', () => {
  it('may be a flat list of numbers for a single sensor', async () => {
    const bytes = withPayload({ sensors: [{ name: 'audio', units: 'wav' }], interval_ms: 0.0625, values: [1, 2, 3, 4] });
    const sample = await parse(bytes);
    expect(sample.valuesCount).toBe(4);
    expect(sample.frequency).toBe(16000);
    expect(sample.totalLengthMs).toBe(0.25);
    expect(readAcquisitionValues(bytes, 'json')).toEqual([[1], [2], [3], [4]]);
  });

  it('may be rows of one number for a single sensor', async () => {
    const bytes = withPayload({ sensors: [{ name: 'audio', units: 'wav' }], values: [[1], [2]] });
    expect(readAcquisitionValues(bytes, 'json')).toEqual([[1], [2]]);
  });

  it('must be rows when there are several sensors', async () => {
    expect(await refusal(withPayload({ values: [1, 2] }))).toMatch(/payload\.values\[0\]" \(row 1\) must be an array of 2 numbers/);
  });

  it('must have one number per sensor in every row, and the message says which row', async () => {
    expect(await refusal(withPayload({ values: [[1, 2], [3, 4, 5]] }))).toBe(
      '"payload.values[1]" (row 2) has 3 values; expected 2 (one per sensor)',
    );
    expect(await refusal(withPayload({ values: [[1, 2], [3]] }))).toMatch(/row 2\) has 1 values; expected 2/);
  });

  it('must be numbers', async () => {
    expect(await refusal(withPayload({ values: [[1, '2']] }))).toMatch(/"payload\.values\[0\]\[1\]" \(row 1\) must be a finite number, got "2"/);
    expect(await refusal(withPayload({ values: [[1, null]] }))).toMatch(/got null/);
    expect(await refusal(withPayload({ values: [[1, [2]]] }))).toMatch(/got an array/);
    expect(await refusal(withPayload({ sensors: [{ name: 'a', units: '' }], values: [1, 'x'] }))).toMatch(/payload\.values\[1\]" \(row 2\) must be a finite number/);
  });

  it('must be finite (a JSON number too large for a double is not)', async () => {
    const bytes = Buffer.from(withPayload({ values: [[1, 2]] }).toString('utf8').replace('[[1,2]]', '[[1,1e999]]'), 'utf8');
    expect(await refusal(bytes)).toMatch(/finite number, got Infinity/);
  });

  it('must not be empty', async () => {
    expect(await refusal(withPayload({ values: [] }))).toMatch(/"payload\.values" is empty/);
  });

  it(`must not hold more than ${MAX_ACQUISITION_VALUES} values`, async () => {
    const sensors = Array.from({ length: 4001 }, (_, ix) => ({ name: `s${ix}`, units: '' }));
    const values = Array.from({ length: 5000 }, () => []);
    expect(await refusal(withPayload({ sensors, values }))).toBe('The file holds 20005000 values; at most 20000000 are allowed');
  });
});

describe('an acquisition file is refused, saying why, when', () => {
  const cases: [string, Buffer, RegExp][] = [
    ['it is not JSON', Buffer.from('{"protected":', 'utf8'), /^Malformed JSON/],
    ['it is empty', Buffer.alloc(0), /^Malformed JSON/],
    ['it is not UTF-8', Buffer.concat([Buffer.from('{"a":"', 'utf8'), Buffer.from([0xc3, 0x28]), Buffer.from('"}', 'utf8')]), /not valid UTF-8/],
    ['it is not an object', unsignedJson([1, 2]), /The document must be an object, got an array/],
    ['"protected" is missing', unsignedJson({ payload: document().payload, signature: ZEROS }), /"protected" must be an object, but is missing/],
    ['"protected.ver" is not v1', unsignedJson(document({ protected: { ver: 'v2' } })), /"protected\.ver" must be "v1", got "v2"/],
    ['"protected.alg" is another algorithm', unsignedJson(document({ protected: { alg: 'RS256' } })), /"protected\.alg" must be "HS256" or "none", got "RS256"/],
    ['"protected.alg" is missing', unsignedJson(document({ protected: { alg: undefined } })), /"protected\.alg" must be "HS256" or "none", got nothing/],
    ['"protected.iat" is not a number', unsignedJson(document({ protected: { iat: '1764000000' } })), /"protected\.iat" must be a number/],
    ['"signature" is not a string', unsignedJson(document({ signature: 42 })), /"signature" must be a string, got 42/],
    ['"signature" is missing', unsignedJson(document({ signature: undefined })), /"signature" must be a string, got nothing/],
    ['"payload" is not an object', unsignedJson({ ...document(), payload: 'x' }), /"payload" must be an object, got "x"/],
    ['"payload.device_name" is not a string', withPayload({ device_name: 5 }), /"payload\.device_name" must be a string, got 5/],
    ['"payload.device_type" is not a string', withPayload({ device_type: {} }), /"payload\.device_type" must be a string, got an object/],
    ['"payload.interval_ms" is missing', withPayload({ interval_ms: undefined }), /"payload\.interval_ms" must be a positive number, got nothing/],
    ['"payload.interval_ms" is a string', withPayload({ interval_ms: '10' }), /"payload\.interval_ms" must be a positive number, got "10"/],
    ['"payload.interval_ms" is zero', withPayload({ interval_ms: 0 }), /"payload\.interval_ms" must be a positive number, got 0/],
    ['"payload.interval_ms" is negative', withPayload({ interval_ms: -5 }), /got -5/],
    ['"payload.sensors" is not an array', withPayload({ sensors: { name: 'a' } }), /"payload\.sensors" must be an array/],
    ['there are no sensors', withPayload({ sensors: [] }), /"payload\.sensors" is empty/],
    ['a sensor is not an object', withPayload({ sensors: ['accX', 'accY'] }), /"payload\.sensors\[0\]" must be an object, got "accX"/],
    ['a sensor name is missing', withPayload({ sensors: [{ units: 'g' }, { name: 'b', units: 'g' }] }), /"payload\.sensors\[0\]\.name" must be a string, got nothing/],
    ['a sensor name is empty', withPayload({ sensors: [{ name: 'a', units: 'g' }, { name: '  ', units: 'g' }] }), /"payload\.sensors\[1\]\.name" is empty/],
    ['a sensor name is too long', withPayload({ sensors: [{ name: 'x'.repeat(129), units: 'g' }, { name: 'b', units: 'g' }] }), /"payload\.sensors\[0\]\.name" is 129 characters long; at most 128/],
    ['sensor units are not a string', withPayload({ sensors: [{ name: 'a', units: 1 }, { name: 'b', units: 'g' }] }), /"payload\.sensors\[0\]\.units" must be a string, got 1/],
    ['"payload.values" is missing', withPayload({ values: undefined }), /"payload\.values" must be an array of rows, got nothing/],
  ];
  it.each(cases)('%s', async (_name, bytes, message) => {
    expect(await refusal(bytes)).toMatch(message);
  });

  it('accepts a 128-character sensor name', async () => {
    const bytes = withPayload({ sensors: [{ name: 'x'.repeat(128), units: 'g' }, { name: 'b', units: 'g' }] });
    expect((await parse(bytes)).sensors[0]?.name).toHaveLength(128);
  });

  it('readAcquisitionValues refuses the same way', () => {
    expect(() => readAcquisitionValues(withPayload({ values: [[1]] }), 'json')).toThrow(SampleFormatError);
  });
});

// --- Fuzzing: whatever the bytes, the parser answers or refuses with SampleFormatError --------

async function parsesOrRefuses(bytes: Buffer, encoding: AcquisitionEncoding): Promise<void> {
  try {
    await parse(bytes, encoding, [KEY, 'other']);
  } catch (error) {
    if (!(error instanceof SampleFormatError)) throw error;
  }
  try {
    readAcquisitionValues(bytes, encoding);
  } catch (error) {
    if (!(error instanceof SampleFormatError)) throw error;
  }
}

/** Byte-level damage: overwrite, insert, delete or truncate. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 8 }) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 16 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(bytes: Buffer, mutations: Mutation[]): Buffer {
  let out = Buffer.from(bytes);
  for (const m of mutations) {
    const at = out.length === 0 ? 0 : m.at % (out.length + 1);
    if (m.kind === 'set' && at < out.length) out[at] = m.byte;
    if (m.kind === 'insert') out = Buffer.concat([out.subarray(0, at), Buffer.from(m.bytes), out.subarray(at)]);
    if (m.kind === 'delete') out = Buffer.concat([out.subarray(0, at), out.subarray(at + m.length)]);
    if (m.kind === 'truncate') out = out.subarray(0, at);
  }
  return out;
}

/** Documents near the format: each field right, wrong-typed or missing. */
const nearDocument = fc.record(
  {
    protected: fc.oneof(
      fc.record({ ver: fc.constantFrom('v1', 'v2'), alg: fc.constantFrom('HS256', 'none', 'RS256'), iat: fc.oneof(fc.integer(), fc.string()) }, { requiredKeys: ['ver', 'alg'] }),
      fc.jsonValue(),
    ),
    signature: fc.oneof(fc.constant(ZEROS), fc.string(), fc.jsonValue()),
    payload: fc.oneof(
      fc.record(
        {
          device_name: fc.oneof(fc.string(), fc.jsonValue()),
          interval_ms: fc.oneof(fc.double(), fc.integer(), fc.jsonValue()),
          sensors: fc.oneof(
            fc.array(fc.record({ name: fc.string({ maxLength: 140 }), units: fc.oneof(fc.string(), fc.integer()) }), { maxLength: 4 }),
            fc.jsonValue(),
          ),
          values: fc.oneof(
            fc.array(fc.array(fc.oneof(fc.double(), fc.integer(), fc.string()), { maxLength: 4 }), { maxLength: 20 }),
            fc.array(fc.double(), { maxLength: 20 }),
            fc.jsonValue(),
          ),
        },
        { requiredKeys: [] },
      ),
      fc.jsonValue(),
    ),
  },
  { requiredKeys: [] },
);

describe('fuzzed input', () => {
  const validJson = signJson(document(), KEY);
  const validCbor = signCbor(document(), KEY);

  it('arbitrary bytes are parsed or refused with SampleFormatError, as JSON and as CBOR', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
        await parsesOrRefuses(Buffer.from(bytes), 'json');
        await parsesOrRefuses(Buffer.from(bytes), 'cbor');
      }),
      { numRuns: 2000 },
    );
  });

  it('arbitrary JSON values are parsed or refused, as JSON text and as CBOR', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        await parsesOrRefuses(Buffer.from(JSON.stringify(value) ?? 'null', 'utf8'), 'json');
        await parsesOrRefuses(cbor.encode(structuredClone(value)), 'cbor');
      }),
      { numRuns: 1000 },
    );
  });

  it('documents near the format are parsed or refused', async () => {
    await fc.assert(
      fc.asyncProperty(nearDocument, async (doc) => {
        await parsesOrRefuses(Buffer.from(JSON.stringify(doc), 'utf8'), 'json');
        // structuredClone gives plain prototypes back, which the CBOR encoder needs.
        await parsesOrRefuses(cbor.encode(structuredClone(doc)), 'cbor');
      }),
      { numRuns: 1000 },
    );
  });

  it('mutated signed files are parsed or refused, and a changed file never verifies', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 4 }), async (mutations) => {
        for (const [valid, encoding] of [[validJson, 'json'], [validCbor, 'cbor']] as const) {
          const bytes = mutate(valid, mutations);
          await parsesOrRefuses(bytes, encoding);
          if (!bytes.equals(valid)) {
            const sample = await parse(bytes, encoding).catch(() => null);
            if (sample !== null) expect(sample.signature).not.toMatchObject({ valid: true });
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});
