// Validates the acquisition format from the events of either tokenizer, as they come: the header
// fields, the sensors, and the value rows, counted and checked one at a time and kept only when a
// caller asks for the first few. Memory does not depend on the file: known fields are bounded text
// or numbers, unknown members are skipped with a depth counter.
//
// Problems with a scalar field are reported when the field is read; missing fields when their
// object closes. Problems in the value rows are kept (the first one) until the payload closes, so
// that, as before, an empty or oversized `values` is reported before a bad row.
import { MAX_DEVICE_TEXT_LENGTH, MAX_INTERVAL_MS, MAX_VALUE_ROWS, MIN_INTERVAL_MS } from '../sampleLimits';
import { textProblem, type TextRule } from '../../shared/textRules';
import type { DocumentSink, Scalar, StringToken } from './documentEvents';
import { SampleFormatError, type SampleSensor } from './sampleFormat';
import type { RowSink } from './rowSink';

/** Most values (rows × sensors) one file may hold. */
export const MAX_ACQUISITION_VALUES = 20_000_000;
export const MAX_SENSOR_NAME_LENGTH = 128;
const MAX_UNITS_LENGTH = 128;
/** Most sensors one file may name: far more than any device has, and a bound on what the list holds. */
export const MAX_SENSORS = 10_000;

const NAME_RULE: TextRule = { max: MAX_SENSOR_NAME_LENGTH };
const UNITS_RULE: TextRule = { max: MAX_UNITS_LENGTH, allowEmpty: true };
const DEVICE_RULE: TextRule = { max: MAX_DEVICE_TEXT_LENGTH, allowEmpty: true };

export interface AcquisitionDocument {
  alg: 'HS256' | 'none';
  signature: StringToken;
  deviceName: string | null;
  deviceType: string | null;
  intervalMs: number;
  sensors: SampleSensor[];
  rowCount: number;
}

/** Where the signature's text lies in the file, for the HS256 check. */
export interface SignatureSpanListener {
  start(offset: number, definite: boolean): void;
  end(offset: number): void;
}

// Where the next value goes.
const DOCUMENT = 0;
const PROTECTED = 1;
const PAYLOAD = 2;
const SIGNATURE = 3;
const VER = 4;
const ALG = 5;
const IAT = 6;
const DEVICE_NAME = 7;
const DEVICE_TYPE = 8;
const INTERVAL = 9;
const SENSORS = 10;
const VALUES = 11;
const SENSOR = 12;
const SENSOR_NAME = 13;
const SENSOR_UNITS = 14;
const VALUE_ITEM = 15;
const CELL = 16;
const OTHER = 17;

const ROOT_KEYS: Record<string, number> = { protected: PROTECTED, signature: SIGNATURE, payload: PAYLOAD };
const PROTECTED_KEYS: Record<string, number> = { ver: VER, alg: ALG, iat: IAT };
const PAYLOAD_KEYS: Record<string, number> = { device_name: DEVICE_NAME, device_type: DEVICE_TYPE, interval_ms: INTERVAL, sensors: SENSORS, values: VALUES };
const SENSOR_KEYS: Record<string, number> = { name: SENSOR_NAME, units: SENSOR_UNITS };

interface Frame {
  /** DOCUMENT, PROTECTED, PAYLOAD or SENSOR for objects; SENSORS or VALUES for arrays. */
  slot: number;
  /** Slot of the current member's value (objects). */
  member: number;
  seen: Set<string>;
}

const FLAT = 1;
const ROWS = 2;

export class AcquisitionReader implements DocumentSink {
  private readonly frames: Frame[] = [];
  private otherDepth = 0;
  private tagged: number | bigint | null = null;
  private finished = false;
  /** A root that is not an object: reported after the whole file, so that a malformed file is told as such. */
  private rootProblem: SampleFormatError | null = null;

  private ver: Scalar | typeof ABSENT = ABSENT;
  private alg: 'HS256' | 'none' | null = null;
  private signature: StringToken | null = null;
  private signatureSeen = false;
  private protectedSeen = false;
  private payloadSeen = false;
  private deviceName: string | null = null;
  private deviceType: string | null = null;
  private intervalMs: number | null = null;
  private sensors: SampleSensor[] | null = null;
  private sensorName: Scalar | typeof ABSENT = ABSENT;
  private sensorUnits: Scalar | typeof ABSENT = ABSENT;
  private valuesSeen = false;
  private sensorsDone = false;
  /** The rows' shape was decided before the sensors were read: checked against them at the end. */
  private rowsBeforeSensors = false;

  // The value rows.
  private rowCount = 0;
  private mode = 0;
  private firstItem = '';
  private inRow = false;
  private rowWidth = 0;
  private firstWidth = -1;
  private rowProblem: string | null = null;
  private valuesProblem: string | null = null;
  private rowCells: number[] = [];

  /** `sink`: where the rows go (readAcquisitionValues); null: count and check only. */
  constructor(
    private readonly sink: RowSink | null,
    private readonly signatureSpan?: SignatureSpanListener,
  ) {}

  // --- events ---------------------------------------------------------------------------------

  beginObject(): void {
    const slot = this.slot();
    if (slot === OTHER) {
      this.otherDepth++;
      return;
    }
    if (this.tagged !== null) return this.taggedItem(slot, true);
    switch (slot) {
      case DOCUMENT:
      case PROTECTED:
      case PAYLOAD:
      case SENSOR:
        if (slot === PROTECTED) this.protectedSeen = true;
        if (slot === PAYLOAD) this.payloadSeen = true;
        if (slot === SENSOR) {
          this.sensorName = ABSENT;
          this.sensorUnits = ABSENT;
        }
        this.frames.push({ slot, member: OTHER, seen: new Set() });
        return;
      case VALUE_ITEM:
      case CELL:
        this.badItem(slot, 'an object', true);
        return;
      default:
        throw this.wrongType(slot, 'an object');
    }
  }

  /** Anything but an object at the root: skipped, and refused once the file is read. */
  private notAnObject(got: string, container: boolean): void {
    this.rootProblem = this.wrongType(DOCUMENT, got);
    this.finished = true;
    if (container) this.otherDepth++;
  }

  beginArray(): void {
    const slot = this.slot();
    if (slot === OTHER) {
      this.otherDepth++;
      return;
    }
    if (this.tagged !== null) return this.taggedItem(slot, true);
    switch (slot) {
      case DOCUMENT:
        return this.notAnObject('an array', true);
      case SENSORS:
        this.sensors = [];
        this.frames.push({ slot, member: SENSOR, seen: EMPTY_SET });
        return;
      case VALUES:
        this.valuesSeen = true;
        this.frames.push({ slot, member: VALUE_ITEM, seen: EMPTY_SET });
        return;
      case VALUE_ITEM:
        if (this.rowStart(true, 'an array')) {
          this.inRow = true;
          this.rowWidth = 0;
          this.rowProblem = null;
        } else {
          this.otherDepth++;
        }
        return;
      case CELL:
        this.badItem(slot, 'an array', true);
        return;
      default:
        throw this.wrongType(slot, 'an array');
    }
  }

  endObject(): void {
    this.endContainer();
  }

  endArray(): void {
    this.endContainer();
  }

  key(name: StringToken): void {
    if (this.otherDepth > 0) return;
    const frame = this.frames[this.frames.length - 1]!;
    const table = frame.slot === DOCUMENT ? ROOT_KEYS : frame.slot === PROTECTED ? PROTECTED_KEYS : frame.slot === PAYLOAD ? PAYLOAD_KEYS : SENSOR_KEYS;
    const known = name.length === name.text.length && Object.hasOwn(table, name.text) ? table[name.text]! : OTHER;
    if (known !== OTHER) {
      // The format's fields once each: which of two would count is a guess (JSON.parse kept the last).
      if (frame.seen.has(name.text)) throw new SampleFormatError(`${objectName(frame.slot, this.sensorIndex())} has the key "${name.text}" twice`);
      frame.seen.add(name.text);
    }
    frame.member = known;
  }

  nonTextKey(): void {
    if (this.otherDepth > 0) return;
    const frame = this.frames[this.frames.length - 1]!;
    throw this.wrongType(frame.slot, 'a map whose keys are not all text');
  }

  tag(tag: number | bigint): void {
    if (this.otherDepth > 0 || this.slot() === OTHER) return;
    this.tagged = tag;
  }

  stringStart(offset: number, definite: boolean): void {
    if (this.signatureSpan && this.otherDepth === 0 && this.tagged === null && this.slot() === SIGNATURE) this.signatureSpan.start(offset, definite);
  }

  stringEnd(offset: number): void {
    if (this.signatureSpan && this.otherDepth === 0 && this.tagged === null && this.slot() === SIGNATURE) this.signatureSpan.end(offset);
  }

  value(scalar: Scalar): void {
    if (this.otherDepth > 0) return;
    if (this.inRow) return this.cell(scalar);
    const slot = this.slot();
    if (slot === OTHER) return;
    if (this.tagged !== null) return this.taggedItem(slot, false);
    switch (slot) {
      case DOCUMENT:
        return this.notAnObject(describe(scalar), false);
      case VALUE_ITEM:
        return this.flatItem(scalar);
      case SIGNATURE:
        this.signatureSeen = true;
        if (!isString(scalar)) throw this.wrongType(slot, describe(scalar));
        this.signature = scalar;
        break;
      case VER:
        if (!isString(scalar) || scalar.text !== 'v1') throw this.wrongType(slot, describe(scalar));
        this.ver = scalar;
        break;
      case ALG:
        if (!isString(scalar) || (scalar.text !== 'HS256' && scalar.text !== 'none')) throw this.wrongType(slot, describe(scalar));
        this.alg = scalar.text;
        break;
      case IAT:
        if (scalar !== undefined && !isFiniteNumber(scalar)) throw this.wrongType(slot, describe(scalar));
        break;
      case DEVICE_NAME:
        this.deviceName = this.optionalText(scalar, '"payload.device_name"', DEVICE_RULE, slot);
        break;
      case DEVICE_TYPE:
        this.deviceType = this.optionalText(scalar, '"payload.device_type"', DEVICE_RULE, slot);
        break;
      case INTERVAL:
        this.intervalMs = checkInterval(scalar);
        break;
      case SENSOR_NAME:
        this.sensorName = scalar;
        break;
      case SENSOR_UNITS:
        this.sensorUnits = scalar;
        break;
      default:
        throw this.wrongType(slot, describe(scalar));
    }
    this.afterValue();
  }

  // --- the end --------------------------------------------------------------------------------

  /** The document's fields once the whole file was read. */
  result(): AcquisitionDocument {
    if (this.rootProblem) throw this.rootProblem;
    if (!this.finished) throw new SampleFormatError('The document must be an object, but is missing');
    return {
      alg: this.alg!,
      signature: this.signature!,
      deviceName: this.deviceName,
      deviceType: this.deviceType,
      intervalMs: this.intervalMs!,
      sensors: this.sensors!,
      rowCount: this.rowCount,
    };
  }

  private endContainer(): void {
    if (this.otherDepth > 0) {
      this.otherDepth--;
      if (this.otherDepth === 0) this.afterValue();
      return;
    }
    if (this.inRow) return this.endRow();
    const frame = this.frames.pop()!;
    switch (frame.slot) {
      case DOCUMENT:
        this.endDocument();
        break;
      case PROTECTED:
        if (this.ver === ABSENT || this.ver === undefined) throw this.wrongType(VER, 'nothing');
        if (this.alg === null) throw this.wrongType(ALG, 'nothing');
        break;
      case PAYLOAD:
        this.endPayload();
        break;
      case SENSOR:
        this.endSensor();
        break;
      case SENSORS:
        if (this.sensors!.length === 0) throw new SampleFormatError('"payload.sensors" is empty: a sample needs at least one sensor');
        this.sensorsDone = true;
        break;
      default:
        break;
    }
    this.afterValue();
  }

  private endDocument(): void {
    if (!this.protectedSeen) throw new SampleFormatError('"protected" must be an object, but is missing');
    if (!this.signatureSeen || this.signature === null) throw this.wrongType(SIGNATURE, 'nothing');
    if (!this.payloadSeen) throw new SampleFormatError('"payload" must be an object, but is missing');
    this.finished = true;
  }

  private endPayload(): void {
    if (this.intervalMs === null) throw this.wrongType(INTERVAL, 'nothing');
    if (this.sensors === null) throw this.wrongType(SENSORS, 'nothing');
    if (!this.valuesSeen) throw this.wrongType(VALUES, 'nothing');
    const sensorCount = this.sensors.length;
    if (this.rowCount === 0) throw new SampleFormatError('"payload.values" is empty: a sample needs at least one row');
    const total = this.rowCount * sensorCount;
    if (total > MAX_ACQUISITION_VALUES) throw new SampleFormatError(`The file holds ${total} values; at most ${MAX_ACQUISITION_VALUES} are allowed`);
    // Rows read before the sensors were checked against the first row's shape; now against the sensors.
    if (this.rowsBeforeSensors && this.mode === FLAT && sensorCount !== 1) {
      throw new SampleFormatError(`"payload.values[0]" (row 1) must be an array of ${sensorCount} numbers, got ${this.firstItem}`);
    }
    if (this.rowsBeforeSensors && this.mode === ROWS && this.firstWidth !== -1 && this.firstWidth !== sensorCount) {
      throw new SampleFormatError(`"payload.values[0]" (row 1) has ${this.firstWidth} values; expected ${sensorCount} (one per sensor)`);
    }
    if (this.valuesProblem !== null) throw new SampleFormatError(this.valuesProblem);
  }

  private endSensor(): void {
    const at = `"payload.sensors[${this.sensors!.length}]`;
    const name = this.sensorName;
    if (name === ABSENT || !isString(name)) throw new SampleFormatError(`${at}.name" must be a string, got ${describe(name === ABSENT ? undefined : name)}`);
    const units = this.sensorUnits;
    if (units === ABSENT || !isString(units)) throw new SampleFormatError(`${at}.units" must be a string, got ${describe(units === ABSENT ? undefined : units)}`);
    checkText(name, `${at}.name"`, NAME_RULE);
    checkText(units, `${at}.units"`, UNITS_RULE);
    if (this.sensors!.length === MAX_SENSORS) throw new SampleFormatError(`"payload.sensors" names more than ${MAX_SENSORS} sensors`);
    this.sensors!.push({ name: name.text, units: units.text });
  }

  // --- value rows -----------------------------------------------------------------------------

  /** A new item of `values`; answers whether it is read as a row (an array in rows mode). */
  private rowStart(isArray: boolean, what: string): boolean {
    const index = this.rowCount++;
    if (this.rowCount > MAX_VALUE_ROWS) throw new SampleFormatError(`"payload.values" has more than ${MAX_VALUE_ROWS} rows; at most ${MAX_VALUE_ROWS} are allowed`);
    if (this.mode === 0) {
      // As before: a flat list only for a single sensor; when the sensors come later, the first item decides and is checked then.
      this.rowsBeforeSensors = !this.sensorsDone;
      this.mode = isArray || (this.sensorsDone && this.sensors!.length !== 1) ? ROWS : FLAT;
      this.firstItem = what;
    }
    if (this.mode === ROWS && !isArray) return false;
    if (this.mode === FLAT && isArray) {
      this.problem(`"payload.values[${index}]" (row ${index + 1}) must be a finite number, got an array`);
      return false;
    }
    return isArray;
  }

  private flatItem(scalar: Scalar): void {
    const index = this.rowCount;
    this.rowStart(false, describe(scalar));
    if (this.mode === ROWS) {
      this.problem(`"payload.values[${index}]" (row ${index + 1}) must be an array of ${this.expectedWidth()} numbers, got ${describe(scalar)}`);
      return;
    }
    if (!isFiniteNumber(scalar)) {
      this.problem(`"payload.values[${index}]" (row ${index + 1}) must be a finite number, got ${describe(scalar)}`);
      return;
    }
    this.collect([scalar]);
  }

  /** Something else where a number or a row belongs: counted, skipped, and the first such problem kept. */
  private badItem(slot: number, what: string, container: boolean): void {
    if (slot === CELL) {
      this.cellProblem(this.rowWidth++, what);
    } else {
      const index = this.rowCount;
      this.rowStart(false, what);
      this.problem(
        this.mode === FLAT
          ? `"payload.values[${index}]" (row ${index + 1}) must be a finite number, got ${what}`
          : `"payload.values[${index}]" (row ${index + 1}) must be an array of ${this.expectedWidth()} numbers, got ${what}`,
      );
    }
    if (container) this.otherDepth++;
  }

  /** A CBOR tag where the format has a field: not this format (tags are never interpreted). */
  private taggedItem(slot: number, container: boolean): void {
    const what = `a value with CBOR tag ${String(this.tagged)}`;
    this.tagged = null;
    if (slot === DOCUMENT) return this.notAnObject(what, container);
    if (slot !== VALUE_ITEM && slot !== CELL) throw this.wrongType(slot, what);
    this.badItem(slot, what, container);
  }

  private cell(scalar: Scalar): void {
    if (this.tagged !== null) return this.taggedItem(CELL, false);
    const col = this.rowWidth++;
    if (!isFiniteNumber(scalar)) return this.cellProblem(col, describe(scalar));
    if (this.sink !== null) this.rowCells.push(scalar);
  }

  private cellProblem(col: number, what: string): void {
    const index = this.rowCount - 1;
    this.rowProblem ??= `"payload.values[${index}][${col}]" (row ${index + 1}) must be a finite number, got ${what}`;
  }

  private endRow(): void {
    this.inRow = false;
    const index = this.rowCount - 1;
    const width = this.rowWidth;
    if (this.firstWidth === -1) this.firstWidth = width;
    const expected = this.expectedWidth();
    if (width !== expected) {
      this.problem(`"payload.values[${index}]" (row ${index + 1}) has ${width} values; expected ${expected} (one per sensor)`);
    } else if (this.rowProblem !== null) {
      this.problem(this.rowProblem);
    }
    if (this.sink === null) return;
    const cells = this.rowCells;
    this.rowCells = [];
    if (this.valuesProblem === null) this.collect(cells);
  }

  private expectedWidth(): number {
    return this.sensorsDone ? this.sensors!.length : this.firstWidth === -1 ? 1 : this.firstWidth;
  }

  private problem(message: string): void {
    this.valuesProblem ??= message;
  }

  private collect(row: number[]): void {
    this.sink?.add(row);
  }

  // --- helpers --------------------------------------------------------------------------------

  private slot(): number {
    if (this.otherDepth > 0) return OTHER;
    if (this.inRow) return CELL;
    const frame = this.frames[this.frames.length - 1];
    if (frame === undefined) return this.finished ? OTHER : DOCUMENT;
    return frame.member;
  }

  private afterValue(): void {
    const frame = this.frames[this.frames.length - 1];
    if (frame !== undefined && frame.slot !== SENSORS && frame.slot !== VALUES) frame.member = OTHER;
  }

  private sensorIndex(): number {
    return this.sensors?.length ?? 0;
  }

  private optionalText(scalar: Scalar, field: string, rule: TextRule, slot: number): string | null {
    if (scalar === undefined || scalar === null) return null;
    if (!isString(scalar)) throw this.wrongType(slot, describe(scalar));
    checkText(scalar, field, rule);
    return scalar.text;
  }

  private wrongType(slot: number, got: string): SampleFormatError {
    const sensor = `payload.sensors[${this.sensorIndex()}]`;
    switch (slot) {
      case DOCUMENT:
        return new SampleFormatError(`The document must be an object, got ${got}`);
      case PROTECTED:
        return new SampleFormatError(`"protected" must be an object, got ${got}`);
      case PAYLOAD:
        return new SampleFormatError(`"payload" must be an object, got ${got}`);
      case SIGNATURE:
        return new SampleFormatError(`"signature" must be a string, got ${got}`);
      case VER:
        return new SampleFormatError(`"protected.ver" must be "v1", got ${got}`);
      case ALG:
        return new SampleFormatError(`"protected.alg" must be "HS256" or "none", got ${got}`);
      case IAT:
        return new SampleFormatError(`"protected.iat" must be a number (seconds since 1970), got ${got}`);
      case DEVICE_NAME:
        return new SampleFormatError(`"payload.device_name" must be a string, got ${got}`);
      case DEVICE_TYPE:
        return new SampleFormatError(`"payload.device_type" must be a string, got ${got}`);
      case INTERVAL:
        return new SampleFormatError(`"payload.interval_ms" must be a positive number, got ${got}`);
      case SENSORS:
        return new SampleFormatError(`"payload.sensors" must be an array, got ${got}`);
      case VALUES:
        return new SampleFormatError(`"payload.values" must be an array of rows, got ${got}`);
      case SENSOR:
        return new SampleFormatError(`"${sensor}" must be an object, got ${got}`);
      case SENSOR_NAME:
        return new SampleFormatError(`"${sensor}.name" must be a string, got ${got}`);
      case SENSOR_UNITS:
        return new SampleFormatError(`"${sensor}.units" must be a string, got ${got}`);
      default:
        return new SampleFormatError(`unexpected ${got}`);
    }
  }
}

const ABSENT = Symbol('absent');
const EMPTY_SET: Set<string> = new Set();

function objectName(slot: number, sensorIndex: number): string {
  switch (slot) {
    case DOCUMENT:
      return 'The document';
    case PROTECTED:
      return '"protected"';
    case PAYLOAD:
      return '"payload"';
    default:
      return `"payload.sensors[${sensorIndex}]"`;
  }
}

function checkInterval(scalar: Scalar): number {
  if (!isFiniteNumber(scalar) || scalar <= 0) throw new SampleFormatError(`"payload.interval_ms" must be a positive number, got ${describe(scalar)}`);
  if (scalar < MIN_INTERVAL_MS || scalar > MAX_INTERVAL_MS) {
    throw new SampleFormatError(`"payload.interval_ms" is ${scalar}; it must be from ${MIN_INTERVAL_MS} to ${MAX_INTERVAL_MS} (milliseconds)`);
  }
  return scalar;
}

/** textProblem on a token that may hold only the start of a long string. */
function checkText(token: StringToken, field: string, rule: TextRule): void {
  if (token.length > rule.max) throw new SampleFormatError(`${field} is ${token.length} characters long; at most ${rule.max} are allowed`);
  const problem = textProblem(token.text, field, rule);
  if (problem !== undefined) throw new SampleFormatError(problem);
}

function isString(scalar: Scalar): scalar is StringToken {
  return typeof scalar === 'object' && scalar !== null && scalar.kind === 'string';
}

function isFiniteNumber(scalar: Scalar): scalar is number {
  return typeof scalar === 'number' && Number.isFinite(scalar);
}

export function describe(scalar: Scalar): string {
  if (scalar === undefined) return 'nothing';
  if (scalar === null) return 'null';
  if (typeof scalar === 'number' || typeof scalar === 'boolean') return String(scalar);
  if (scalar.kind === 'other') return scalar.description;
  return JSON.stringify(scalar.length > 40 ? `${scalar.text.slice(0, 40)}…` : scalar.text);
}
