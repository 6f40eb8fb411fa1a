import { createHmac, timingSafeEqual } from 'node:crypto';
import cbor from 'cbor';
import {
  SampleFormatError,
  type ParseInput,
  type ParsedSample,
  type SampleSensor,
  type SignatureCheck,
} from './sampleFormat';

// The Edge Impulse data acquisition format, as JSON or CBOR:
//   {protected: {ver: 'v1', alg: 'HS256'|'none', iat?}, signature: string,
//    payload: {device_name?, device_type?, interval_ms, sensors: [{name, units}], values: number[][]}}
// HS256 signatures are checked the way the device library makes them (sdk-reference 4.1): the
// HMAC-SHA256 of the file's raw bytes with the signature value overwritten by ASCII '0's, as
// lowercase hex. Re-serializing the parsed document would not give the same bytes, so the
// signature is located in the raw bytes instead. A wrong signature is not a refusal: the sample
// is stored and marked invalid, as the real service does.

export type AcquisitionEncoding = 'json' | 'cbor';

/** Most values (rows × sensors) one file may hold. */
export const MAX_ACQUISITION_VALUES = 20_000_000;
export const MAX_SENSOR_NAME_LENGTH = 128;
const MAX_UNITS_LENGTH = 128;
/** Deep enough for the format (root map → payload → values → row is 4), far from stack trouble. */
const CBOR_MAX_DEPTH = 16;

export async function parseAcquisition(input: ParseInput, encoding: AcquisitionEncoding): Promise<ParsedSample> {
  const bytes = await input.source.readAll();
  const document = decode(bytes, encoding);
  const sample = readDocument(document, false);
  const signature = checkSignature(bytes, encoding, sample, input.hmacKeys);
  return {
    kind: 'time-series',
    contentType: encoding === 'json' ? 'application/json' : 'application/cbor',
    intervalMs: sample.intervalMs,
    frequency: 1000 / sample.intervalMs,
    sensors: sample.sensors,
    valuesCount: sample.rowCount,
    totalLengthMs: sample.rowCount * sample.intervalMs,
    deviceName: sample.deviceName,
    deviceType: sample.deviceType,
    width: null,
    height: null,
    signature,
  };
}

/**
 * The value rows of an acquisition file (one array per time step, one number per sensor; a flat
 * single-sensor list comes back as one-value rows). Throws SampleFormatError as the parser does.
 */
export function readAcquisitionValues(bytes: Buffer, encoding: AcquisitionEncoding): number[][] {
  return readDocument(decode(bytes, encoding), true).rows ?? [];
}

// --- decoding ------------------------------------------------------------------------------------

function decode(bytes: Buffer, encoding: AcquisitionEncoding): unknown {
  return encoding === 'json' ? decodeJson(bytes) : decodeCbor(bytes);
}

function decodeJson(bytes: Buffer): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new SampleFormatError('The JSON file is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SampleFormatError(`Malformed JSON: ${(error as Error).message}`);
  }
}

/** Leaves every CBOR tag as a `Tagged` object: none belongs in this format, and none is converted. */
const NO_TAG_CONVERSIONS = new Proxy({}, { get: () => null }) as Record<number, null>;

function decodeCbor(bytes: Buffer): unknown {
  if (bytes.length === 0) throw new SampleFormatError('Malformed CBOR: the file is empty');
  try {
    // decodeFirstSync refuses bytes left over after the first item.
    return cbor.decodeFirstSync(bytes, {
      max_depth: CBOR_MAX_DEPTH,
      preventDuplicateKeys: true,
      tags: NO_TAG_CONVERSIONS as unknown as cbor.Tagged.TagMap,
    }) as unknown;
  } catch (error) {
    throw new SampleFormatError(`Malformed CBOR: ${error instanceof Error ? error.message : String(error)}`);
  }
}

// --- validation ----------------------------------------------------------------------------------

interface AcquisitionDocument {
  alg: 'HS256' | 'none';
  signature: string;
  deviceName: string | null;
  deviceType: string | null;
  intervalMs: number;
  sensors: SampleSensor[];
  rowCount: number;
  rows: number[][] | null;
}

type JsonObject = Record<string, unknown>;

function readDocument(document: unknown, collectRows: boolean): AcquisitionDocument {
  const root = object(document, 'The document');
  const protectedHeader = object(root.protected, '"protected"');
  if (protectedHeader.ver !== 'v1') {
    throw new SampleFormatError(`"protected.ver" must be "v1", got ${describe(protectedHeader.ver)}`);
  }
  const alg = protectedHeader.alg;
  if (alg !== 'HS256' && alg !== 'none') {
    throw new SampleFormatError(`"protected.alg" must be "HS256" or "none", got ${describe(alg)}`);
  }
  if (protectedHeader.iat !== undefined && !isFiniteNumber(protectedHeader.iat)) {
    throw new SampleFormatError(`"protected.iat" must be a number (seconds since 1970), got ${describe(protectedHeader.iat)}`);
  }
  if (typeof root.signature !== 'string') {
    throw new SampleFormatError(`"signature" must be a string, got ${describe(root.signature)}`);
  }

  const payload = object(root.payload, '"payload"');
  const deviceName = optionalString(payload.device_name, 'payload.device_name');
  const deviceType = optionalString(payload.device_type, 'payload.device_type');
  const intervalMs = payload.interval_ms;
  if (!isFiniteNumber(intervalMs) || intervalMs <= 0) {
    throw new SampleFormatError(`"payload.interval_ms" must be a positive number, got ${describe(intervalMs)}`);
  }
  const sensors = readSensors(payload.sensors);
  const { rowCount, rows } = readValues(payload.values, sensors.length, collectRows);
  return { alg, signature: root.signature, deviceName, deviceType, intervalMs, sensors, rowCount, rows };
}

function readSensors(value: unknown): SampleSensor[] {
  if (!Array.isArray(value)) throw new SampleFormatError(`"payload.sensors" must be an array, got ${describe(value)}`);
  if (value.length === 0) throw new SampleFormatError('"payload.sensors" is empty: a sample needs at least one sensor');
  return value.map((item: unknown, ix) => {
    const at = `payload.sensors[${ix}]`;
    const sensor = object(item, `"${at}"`);
    if (typeof sensor.name !== 'string') throw new SampleFormatError(`"${at}.name" must be a string, got ${describe(sensor.name)}`);
    if (sensor.name.trim() === '') throw new SampleFormatError(`"${at}.name" is empty`);
    if (sensor.name.length > MAX_SENSOR_NAME_LENGTH) {
      throw new SampleFormatError(`"${at}.name" is ${sensor.name.length} characters long; at most ${MAX_SENSOR_NAME_LENGTH} are allowed`);
    }
    if (typeof sensor.units !== 'string') throw new SampleFormatError(`"${at}.units" must be a string, got ${describe(sensor.units)}`);
    if (sensor.units.length > MAX_UNITS_LENGTH) {
      throw new SampleFormatError(`"${at}.units" is ${sensor.units.length} characters long; at most ${MAX_UNITS_LENGTH} are allowed`);
    }
    return { name: sensor.name, units: sensor.units };
  });
}

/**
 * One row per time step with one finite number per sensor. With a single sensor a flat list of
 * numbers is accepted too, each number being a one-value row.
 */
function readValues(value: unknown, sensorCount: number, collectRows: boolean): { rowCount: number; rows: number[][] | null } {
  if (!Array.isArray(value)) throw new SampleFormatError(`"payload.values" must be an array of rows, got ${describe(value)}`);
  if (value.length === 0) throw new SampleFormatError('"payload.values" is empty: a sample needs at least one row');
  const total = value.length * sensorCount;
  if (total > MAX_ACQUISITION_VALUES) {
    throw new SampleFormatError(`The file holds ${total} values; at most ${MAX_ACQUISITION_VALUES} are allowed`);
  }
  const flat = sensorCount === 1 && !Array.isArray(value[0]);
  const rows: number[][] | null = collectRows ? [] : null;
  for (let ix = 0; ix < value.length; ix++) {
    const row: unknown = value[ix];
    if (flat) {
      if (!isFiniteNumber(row)) {
        throw new SampleFormatError(`"payload.values[${ix}]" (row ${ix + 1}) must be a finite number, got ${describe(row)}`);
      }
      rows?.push([row]);
      continue;
    }
    if (!Array.isArray(row)) {
      throw new SampleFormatError(`"payload.values[${ix}]" (row ${ix + 1}) must be an array of ${sensorCount} numbers, got ${describe(row)}`);
    }
    if (row.length !== sensorCount) {
      throw new SampleFormatError(
        `"payload.values[${ix}]" (row ${ix + 1}) has ${row.length} values; expected ${sensorCount} (one per sensor)`,
      );
    }
    for (let col = 0; col < row.length; col++) {
      const cell: unknown = row[col];
      if (!isFiniteNumber(cell)) {
        throw new SampleFormatError(`"payload.values[${ix}][${col}]" (row ${ix + 1}) must be a finite number, got ${describe(cell)}`);
      }
    }
    rows?.push(row as number[]);
  }
  return { rowCount: value.length, rows };
}

function object(value: unknown, what: string): JsonObject {
  // CBOR maps whose keys are not all text come back as Map instances: not this format.
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.getPrototypeOf(value) !== Object.prototype) {
    throw new SampleFormatError(`${what} must be an object${value === undefined ? ', but is missing' : `, got ${describe(value)}`}`);
  }
  return value as JsonObject;
}

function optionalString(value: unknown, what: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new SampleFormatError(`"${what}" must be a string, got ${describe(value)}`);
  return value;
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
    case 'number':
      return String(value);
    case 'boolean':
      return String(value);
    case 'bigint':
      return `the integer ${value.toString().slice(0, 40)}`;
    case 'object':
      if (value instanceof Map) return 'a map whose keys are not all text';
      if (value instanceof Uint8Array) return 'a byte string';
      if (value instanceof cbor.Tagged) return `a value with CBOR tag ${String(value.tag)}`;
      return Object.getPrototypeOf(value) === Object.prototype ? 'an object' : 'a value that is not plain data';
    default:
      return `a value of type ${typeof value}`;
  }
}

// --- signature -----------------------------------------------------------------------------------

/** Byte range of the signature text, without its quotes (JSON) or head (CBOR). */
interface Span {
  start: number;
  end: number;
}

function checkSignature(
  bytes: Buffer,
  encoding: AcquisitionEncoding,
  document: AcquisitionDocument,
  hmacKeys: readonly string[],
): SignatureCheck {
  if (document.alg === 'none') return { method: 'none', valid: false };
  const span = encoding === 'json' ? findJsonSignature(bytes) : findCborSignature(bytes);
  const given = Buffer.from(document.signature, 'utf8');
  if (span === null || given.length !== 64) return { method: 'HS256', valid: false, keyIndex: null };

  // The bytes as signed: the signature's own bytes turned back into '0's (without copying the file).
  const before = bytes.subarray(0, span.start);
  const zeros = Buffer.alloc(span.end - span.start, 0x30);
  const after = bytes.subarray(span.end);
  let keyIndex: number | null = null;
  hmacKeys.forEach((key, ix) => {
    const hmac = createHmac('sha256', key).update(before).update(zeros).update(after);
    const expected = Buffer.from(hmac.digest('hex'), 'ascii');
    if (timingSafeEqual(expected, given) && keyIndex === null) keyIndex = ix;
  });
  return { method: 'HS256', valid: keyIndex !== null, keyIndex };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Finds the string value of the top-level `signature` key by walking the JSON tokens of the root
 * object (keys compared after unescaping; nested `signature` keys and look-alike values elsewhere
 * do not count). The bytes were already accepted by JSON.parse, so the walk can trust the grammar.
 */
function findJsonSignature(bytes: Buffer): Span | null {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  i = skipJsonSpace(bytes, i);
  if (bytes[i] !== 0x7b) return null;
  i = skipJsonSpace(bytes, i + 1);
  if (bytes[i] === 0x7d) return null;
  let found: Span | null = null;
  for (;;) {
    if (bytes[i] !== QUOTE) return null;
    const keyEnd = skipJsonString(bytes, i);
    const key = JSON.parse(bytes.toString('utf8', i, keyEnd)) as string;
    i = skipJsonSpace(bytes, keyEnd);
    if (bytes[i] !== 0x3a) return null;
    i = skipJsonSpace(bytes, i + 1);
    const valueEnd = skipJsonValue(bytes, i);
    // JSON.parse keeps the last of duplicate keys; so does this.
    if (key === 'signature') found = bytes[i] === QUOTE ? { start: i + 1, end: valueEnd - 1 } : null;
    i = skipJsonSpace(bytes, valueEnd);
    if (bytes[i] !== 0x2c) return found;
    i = skipJsonSpace(bytes, i + 1);
  }
}

function skipJsonSpace(bytes: Buffer, i: number): number {
  while (i < bytes.length) {
    const c = bytes[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}

/** From an opening quote to just past the closing one. */
function skipJsonString(bytes: Buffer, i: number): number {
  for (let j = i + 1; j < bytes.length; j++) {
    const c = bytes[j];
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  return bytes.length;
}

function skipJsonValue(bytes: Buffer, i: number): number {
  const first = bytes[i];
  if (first === QUOTE) return skipJsonString(bytes, i);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    for (let j = i; j < bytes.length; j++) {
      const c = bytes[j];
      if (c === QUOTE) {
        j = skipJsonString(bytes, j) - 1;
      } else if (c === 0x7b || c === 0x5b) {
        depth++;
      } else if (c === 0x7d || c === 0x5d) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return bytes.length;
  }
  let j = i;
  while (j < bytes.length) {
    const c = bytes[j];
    if (c === 0x2c || c === 0x7d || c === 0x5d || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) break;
    j++;
  }
  return j;
}

const SIGNATURE_KEY = Buffer.from('signature', 'utf8');
const INDEFINITE = -1;

/**
 * Finds the content bytes of the definite-length text string that is the value of the `signature`
 * key in the top-level CBOR map. The bytes were already accepted by the decoder.
 */
function findCborSignature(bytes: Buffer): Span | null {
  const root = readCborHead(bytes, 0);
  if (root === null || root.major !== 5) return null;
  let pos = root.next;
  let found: Span | null = null;
  for (let pair = 0; root.argument === INDEFINITE || pair < root.argument; pair++) {
    if (root.argument === INDEFINITE && bytes[pos] === 0xff) break;
    const key = readCborHead(bytes, pos);
    if (key === null) return null;
    const isSignatureKey =
      key.major === 3 &&
      key.argument === SIGNATURE_KEY.length &&
      bytes.subarray(key.next, key.next + key.argument).equals(SIGNATURE_KEY);
    pos = skipCborItem(bytes, pos);
    const value = readCborHead(bytes, pos);
    if (value === null) return null;
    if (isSignatureKey) {
      found = value.major === 3 && value.argument !== INDEFINITE ? { start: value.next, end: value.next + value.argument } : null;
    }
    pos = skipCborItem(bytes, pos);
  }
  return found;
}

interface CborHead {
  major: number;
  /** The head's argument (a length or count), INDEFINITE for indefinite-length items. */
  argument: number;
  /** Offset just after the head. */
  next: number;
}

function readCborHead(bytes: Buffer, pos: number): CborHead | null {
  const initial = bytes[pos];
  if (initial === undefined) return null;
  const major = initial >> 5;
  const info = initial & 0x1f;
  if (info < 24) return { major, argument: info, next: pos + 1 };
  if (info === 31) return { major, argument: INDEFINITE, next: pos + 1 };
  const size = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : info === 27 ? 8 : 0;
  if (size === 0 || pos + 1 + size > bytes.length) return null;
  const argument = size === 8 ? Number(bytes.readBigUInt64BE(pos + 1)) : bytes.readUIntBE(pos + 1, size);
  return { major, argument, next: pos + 1 + size };
}

/** Offset just past the item starting at `pos`; iterative, so nesting cannot exhaust the stack. */
function skipCborItem(bytes: Buffer, pos: number): number {
  // Items still to read at each open level; INDEFINITE levels end at a break byte (0xff).
  const pending: number[] = [1];
  while (pending.length > 0) {
    const level = pending.length - 1;
    const left = pending[level] ?? 0;
    if (left === 0) {
      pending.pop();
      continue;
    }
    if (left === INDEFINITE && bytes[pos] === 0xff) {
      pos++;
      pending.pop();
      continue;
    }
    if (left !== INDEFINITE) pending[level] = left - 1;
    const head = readCborHead(bytes, pos);
    if (head === null) return bytes.length;
    pos = head.next;
    switch (head.major) {
      case 2:
      case 3:
        if (head.argument === INDEFINITE) pending.push(INDEFINITE);
        else pos += head.argument;
        break;
      case 4:
        pending.push(head.argument);
        break;
      case 5:
        pending.push(head.argument === INDEFINITE ? INDEFINITE : head.argument * 2);
        break;
      case 6:
        pending.push(1);
        break;
      default:
        // Integers and simple values / floats: the head is the whole item.
        break;
    }
    if (pos > bytes.length) return bytes.length;
  }
  return pos;
}
