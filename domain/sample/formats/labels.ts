import type { BoundingBox, IngestionCategory, StructuredLabel as SampleStructuredLabel } from '../sampleEvents';
import { storableKeyProblem } from '../../shared/jsonRules';
import { numberProblem, type NumberRule } from '../../shared/numberRules';
import { textProblem, type TextRule } from '../../shared/textRules';
import { SAMPLE_TEXT_RULES } from '../checkSample';
import { MAX_BOUNDING_BOXES, MAX_BOX_COORDINATE, MAX_METADATA_ENTRIES, MAX_STRUCTURED_LABELS } from '../sampleLimits';
import { SampleFormatError } from './sampleFormat';

// File names, labels taken from them, and the `.labels` side files the official tools send in the
// same multipart batch as the data (`info.labels` from the uploader's info-file format, and
// `structured_labels.labels`, `bounding_boxes.labels`, `label_map.labels`, `attachments.labels`
// from the Linux CLI, sdk-reference 4.2). Every refusal is a SampleFormatError naming the problem.

const MAX_FILE_NAME_BYTES = 255;

/**
 * The label the spec derives from a file name: the leading run of letters, digits, white space,
 * `-` and `_`, trimmed (`idle.01.json` gives `idle`); null when that run is empty. Letters and
 * digits are Unicode ones, so `café.01.json` gives `café`.
 */
export function labelFromFileName(fileName: string): string | null {
  const match = /^[\p{L}\p{M}\p{N}\s_-]*/u.exec(fileName);
  const label = (match?.[0] ?? '').trim();
  return label === '' ? null : label;
}

/**
 * A stored file name must be a single path component: no `/` or `\`, not `.` or `..`, none of the
 * characters the text rules refuse (control, bidirectional override and isolate characters, lone
 * surrogates), not blank, at most 255 bytes of UTF-8. Returns the name unchanged.
 */
export function checkFileName(name: string): string {
  if (name.length === 0) throw new SampleFormatError('The file name is empty');
  if (/[/\\]/.test(name)) throw new SampleFormatError(`The file name ${quote(name)} contains a path separator`);
  if (name === '.' || name === '..') throw new SampleFormatError(`The file name ${quote(name)} is not allowed`);
  // Not quoted: the name may hold the very characters that would garble the message.
  const problem = textProblem(name, 'The file name', SAMPLE_TEXT_RULES.fileName);
  if (problem !== undefined) throw new SampleFormatError(problem);
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > MAX_FILE_NAME_BYTES) {
    throw new SampleFormatError(`The file name is ${bytes} bytes long; at most ${MAX_FILE_NAME_BYTES} are allowed`);
  }
  return name;
}

/** Whether a part of a batch is a labels side file rather than data (`info.labels`, `*.labels`). */
export function isLabelsFile(fileName: string): boolean {
  return fileName.toLowerCase().endsWith('.labels');
}

export type LabelsCategory = IngestionCategory;
export type { BoundingBox };

/** A structured label as side files give it: row indexes, both inclusive, and an optional label map. */
export interface StructuredLabel extends SampleStructuredLabel {
  labelMap?: Record<string, string>;
}

/** What the side files say about one data file of the batch; absent fields say nothing. */
export interface FileLabels {
  /** A label; null means "no label" (`{type: 'unlabeled'}`). */
  label?: string | null;
  /** Absent for `split` (and when not given): the endpoint's category applies. */
  category?: LabelsCategory;
  /** The sample name given in `info.labels`. */
  name?: string;
  metadata?: Record<string, string>;
  boundingBoxes?: BoundingBox[];
  structuredLabels?: StructuredLabel[];
  /** Key-value labels (`keyvalue-labels` in info.labels, or `label_map.labels`). */
  labelMap?: Record<string, string>;
  /** Names of attachment files sent in the same batch. */
  attachments?: string[];
}

/**
 * Parses a labels side file. Its shape tells which one it is: `{version: 1, files: [...]}` is an
 * `info.labels` file (the uploader's info-file format; also its NDJSON variant), `{version: 1,
 * type, ...}` one of `structured-labels`, `bounding-box-labels`, `label-map-labels` or
 * `attachments`. Returns what it says, keyed by data file name (for `info.labels`, the last
 * component of each entry's `path`). Structured labels are checked against the sample's row count
 * only once that is known: see `checkStructuredLabels`.
 */
export function parseInfoLabels(bytes: Buffer, fileName = 'info.labels'): Map<string, FileLabels> {
  const where = quote(fileName);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new SampleFormatError(`${where} is not valid UTF-8`);
  }
  const document = text.startsWith(NDJSON_MARKER) ? parseNdjsonInfo(text, where) : parseJson(text, where);
  if (!isPlainObject(document)) throw new SampleFormatError(`${where} must hold a JSON object`);
  if (document.version !== 1) {
    throw new SampleFormatError(`${where}: "version" must be 1, got ${describe(document.version)}`);
  }
  if (document.type === undefined) return parseUploaderInfo(document, where);
  switch (document.type) {
    case 'structured-labels':
      return perFile(document, 'structuredLabels', where, (value, at) => ({ structuredLabels: structuredLabels(value, at) }));
    case 'bounding-box-labels':
      return perFile(document, 'boundingBoxes', where, (value, at) => ({ boundingBoxes: boundingBoxes(value, at) }));
    case 'label-map-labels':
      return perFile(document, 'labels', where, (value, at) => ({ labelMap: labelMap(value, at) }));
    case 'attachments':
      return perFile(document, 'attachments', where, (value, at) => ({ attachments: attachments(value, at) }));
    default:
      throw new SampleFormatError(
        `${where}: unknown "type" ${describe(document.type)} (expected structured-labels, bounding-box-labels, label-map-labels or attachments)`,
      );
  }
}

/**
 * Structured labels must lie within the sample's rows and cover every row, as the real service
 * requires (no gaps). Throws SampleFormatError naming the first problem.
 */
export function checkStructuredLabels(labels: readonly StructuredLabel[], valuesCount: number): void {
  const covered = new Uint8Array(valuesCount);
  labels.forEach((l, ix) => {
    if (l.endIndex >= valuesCount) {
      throw new SampleFormatError(
        `Structured label ${ix}: endIndex ${l.endIndex} is out of bounds, the last row is ${valuesCount - 1}`,
      );
    }
    covered.fill(1, l.startIndex, l.endIndex + 1);
  });
  const gap = covered.indexOf(0);
  if (gap !== -1) {
    throw new SampleFormatError(`Structured labels: row ${gap} has no label; labels must cover the whole sample`);
  }
}

// ---------------------------------------------------------------------------------------------

const NDJSON_MARKER = '{"__ndjson":true,';
const CATEGORIES: readonly string[] = ['training', 'testing', 'anomaly'];

type JsonObject = Record<string, unknown>;

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SampleFormatError(`${where} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * The exporter's NDJSON variant for very large datasets: a header object carrying the marker and
 * the small properties, then one `{"__key": "files", "__item": {...}}` line per file.
 */
function parseNdjsonInfo(text: string, where: string): JsonObject {
  const lines = text.split(/\r?\n/);
  const header = parseJson(lines[0] ?? '', `${where} (line 1)`);
  if (!isPlainObject(header)) throw new SampleFormatError(`${where} (line 1) must be a JSON object`);
  const files: unknown[] = [];
  for (let ix = 1; ix < lines.length; ix++) {
    const line = (lines[ix] ?? '').trim();
    if (line === '') continue;
    const row = parseJson(line, `${where} (line ${ix + 1})`);
    if (!isPlainObject(row) || row.__key !== 'files' || !('__item' in row)) {
      throw new SampleFormatError(`${where} (line ${ix + 1}) must be {"__key": "files", "__item": {...}}`);
    }
    files.push(row.__item);
  }
  const { __ndjson: _marker, ...rest } = header;
  return { ...rest, files };
}

function parseUploaderInfo(document: JsonObject, where: string): Map<string, FileLabels> {
  if (!Array.isArray(document.files)) throw new SampleFormatError(`${where}: "files" must be an array`);
  const result = new Map<string, FileLabels>();
  document.files.forEach((entry: unknown, ix) => {
    const at = `${where}: files[${ix}]`;
    if (!isPlainObject(entry)) throw new SampleFormatError(`${at} must be an object`);
    if (typeof entry.path !== 'string' || entry.path === '') {
      throw new SampleFormatError(`${at}: "path" must be a non-empty string`);
    }
    const dataFile = fileKey(entry.path.split(/[/\\]/).pop() ?? '', `${at}.path`);
    if (result.has(dataFile)) throw new SampleFormatError(`${at}: the file ${quote(dataFile)} is listed twice`);
    const labels: FileLabels = {};
    if (entry.name !== undefined && entry.name !== null) {
      if (typeof entry.name !== 'string') throw new SampleFormatError(`${at}: "name" must be a string`);
      labels.name = entry.name;
    }
    if (entry.category !== undefined && entry.category !== null && entry.category !== 'split') {
      if (typeof entry.category !== 'string' || !CATEGORIES.includes(entry.category)) {
        throw new SampleFormatError(
          `${at}: "category" must be training, testing, anomaly or split, got ${describe(entry.category)}`,
        );
      }
      labels.category = entry.category as LabelsCategory;
    }
    Object.assign(labels, uploaderLabel(entry.label, `${at}.label`));
    if (entry.metadata !== undefined && entry.metadata !== null) {
      labels.metadata = metadataRecord(entry.metadata, `${at}.metadata`);
    }
    if (entry.boundingBoxes !== undefined && entry.boundingBoxes !== null) {
      labels.boundingBoxes = boundingBoxes(entry.boundingBoxes, `${at}.boundingBoxes`);
    }
    if (entry.attachments !== undefined && entry.attachments !== null) {
      const names = entry.attachments;
      if (!Array.isArray(names)) throw new SampleFormatError(`${at}.attachments must be an array of file names`);
      labels.attachments = names.map((name: unknown, i) => {
        if (typeof name !== 'string') throw new SampleFormatError(`${at}.attachments[${i}] must be a string`);
        return checkFileName(name.split(/[/\\]/).pop() ?? '');
      });
    }
    result.set(dataFile, labels);
  });
  return result;
}

/** `{type: 'unlabeled'|'infer'|'label'|'multi-label'|'keyvalue-labels', ...}`, or a plain string. */
function uploaderLabel(value: unknown, at: string): FileLabels {
  if (value === undefined || value === null) return {};
  if (typeof value === 'string') return { label: labelText(value, at) };
  if (!isPlainObject(value)) throw new SampleFormatError(`${at} must be an object with a "type"`);
  switch (value.type) {
    case 'unlabeled':
      return { label: null };
    case 'infer':
      return {};
    case 'label':
      if (typeof value.label !== 'string') throw new SampleFormatError(`${at}.label must be a string`);
      return { label: labelText(value.label, `${at}.label`) };
    case 'multi-label':
      return { structuredLabels: structuredLabels(value.labels, `${at}.labels`) };
    case 'keyvalue-labels':
      return { labelMap: stringRecord(value.labels, `${at}.labels`) };
    default:
      throw new SampleFormatError(
        `${at}.type must be unlabeled, label, multi-label or keyvalue-labels, got ${describe(value.type)}`,
      );
  }
}

function labelText(label: string, at: string): string | null {
  const trimmed = label.trim();
  return trimmed === '' ? null : checkedText(trimmed, at, SAMPLE_TEXT_RULES.label);
}

/** Text bound for the log: refused here, naming where it is in the side file, when the text rules refuse it. */
function checkedText(value: string, at: string, rule: TextRule): string {
  const problem = textProblem(value, at, rule);
  if (problem !== undefined) throw new SampleFormatError(problem);
  return value;
}

function checkedNumber(value: number, at: string, rule: NumberRule): number {
  const problem = numberProblem(value, at, rule);
  if (problem !== undefined) throw new SampleFormatError(problem);
  return value;
}

function listAtMost(value: unknown[], at: string, max: number): void {
  if (value.length > max) throw new SampleFormatError(`${at} has ${value.length} entries; at most ${max} are allowed`);
}

/** A `{version: 1, type, <key>: {<data file name>: ...}}` side file. */
function perFile(
  document: JsonObject,
  key: string,
  where: string,
  read: (value: unknown, at: string) => FileLabels,
): Map<string, FileLabels> {
  const map = document[key];
  if (!isPlainObject(map)) throw new SampleFormatError(`${where}: "${key}" must be an object keyed by file name`);
  const result = new Map<string, FileLabels>();
  for (const [name, value] of Object.entries(map)) {
    const at = `${where}: ${key}[${JSON.stringify(name)}]`;
    result.set(fileKey(name, at), read(value, at));
  }
  return result;
}

function fileKey(name: string, at: string): string {
  try {
    return checkFileName(name);
  } catch (error) {
    throw new SampleFormatError(`${at}: ${(error as Error).message}`);
  }
}

function structuredLabels(value: unknown, at: string): StructuredLabel[] {
  if (!Array.isArray(value)) throw new SampleFormatError(`${at} must be an array`);
  listAtMost(value, at, MAX_STRUCTURED_LABELS);
  let labelMapKeys: string | null = null;
  return value.map((item: unknown, ix) => {
    const here = `${at}[${ix}]`;
    if (!isPlainObject(item)) throw new SampleFormatError(`${here} must be an object`);
    if (typeof item.label !== 'string') throw new SampleFormatError(`${here}: "label" must be a string`);
    for (const field of ['startIndex', 'endIndex'] as const) {
      const n = item[field];
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
        throw new SampleFormatError(`${here}: "${field}" must be an integer >= 0, got ${describe(n)}`);
      }
    }
    const startIndex = item.startIndex as number;
    const endIndex = item.endIndex as number;
    if (startIndex > endIndex) {
      throw new SampleFormatError(`${here}: "endIndex" (${endIndex}) is before "startIndex" (${startIndex})`);
    }
    const label: StructuredLabel = { label: checkedText(item.label, `${here}.label`, SAMPLE_TEXT_RULES.label), startIndex, endIndex };
    if (item.labelMap !== undefined && item.labelMap !== null) {
      // The CLI's external form wraps the map as {type: 'key-values', labels: {...}}.
      const raw = isPlainObject(item.labelMap) && item.labelMap.type === 'key-values' ? item.labelMap.labels : item.labelMap;
      label.labelMap = stringRecord(raw, `${here}.labelMap`);
      const keys = JSON.stringify(Object.keys(label.labelMap).sort());
      if (labelMapKeys !== null && keys !== labelMapKeys) {
        throw new SampleFormatError(`${here}.labelMap must have the same keys as the other labels`);
      }
      labelMapKeys = keys;
    }
    return label;
  });
}

function boundingBoxes(value: unknown, at: string): BoundingBox[] {
  if (!Array.isArray(value)) throw new SampleFormatError(`${at} must be an array`);
  listAtMost(value, at, MAX_BOUNDING_BOXES);
  return value.map((item: unknown, ix) => {
    const here = `${at}[${ix}]`;
    if (!isPlainObject(item)) throw new SampleFormatError(`${here} must be an object`);
    if (typeof item.label !== 'string') throw new SampleFormatError(`${here}: "label" must be a string`);
    for (const field of ['x', 'y', 'width', 'height'] as const) {
      const n = item[field];
      if (typeof n !== 'number' || !Number.isFinite(n)) {
        throw new SampleFormatError(`${here}: "${field}" must be a finite number, got ${describe(n)}`);
      }
    }
    const box = { label: item.label, x: item.x, y: item.y, width: item.width, height: item.height } as BoundingBox;
    if (box.width <= 0) throw new SampleFormatError(`${here}: "width" must be > 0`);
    if (box.height <= 0) throw new SampleFormatError(`${here}: "height" must be > 0`);
    checkedText(box.label, `${here}.label`, SAMPLE_TEXT_RULES.label);
    for (const field of ['x', 'y', 'width', 'height'] as const) {
      checkedNumber(box[field], `${here}.${field}`, { min: -MAX_BOX_COORDINATE, max: MAX_BOX_COORDINATE });
    }
    return box;
  });
}

/** A `{key: value}` object of strings, or (as the real service accepts) a string array keyed by index. */
function labelMap(value: unknown, at: string): Record<string, string> {
  if (Array.isArray(value)) {
    const map: Record<string, string> = {};
    value.forEach((item: unknown, ix) => {
      if (typeof item !== 'string') throw new SampleFormatError(`${at}[${ix}] must be a string`);
      map[String(ix)] = item;
    });
    return map;
  }
  return stringRecord(value, at);
}

function attachments(value: unknown, at: string): string[] {
  if (!Array.isArray(value)) throw new SampleFormatError(`${at} must be an array`);
  return value.map((item: unknown, ix) => {
    if (!isPlainObject(item) || typeof item.filename !== 'string') {
      throw new SampleFormatError(`${at}[${ix}] must be {"filename": string}`);
    }
    return fileKey(item.filename, `${at}[${ix}].filename`);
  });
}

/** Sample metadata: a bounded string record whose keys and values the text rules accept. */
function metadataRecord(value: unknown, at: string): Record<string, string> {
  const record = stringRecord(value, at);
  const entries = Object.entries(record);
  if (entries.length > MAX_METADATA_ENTRIES) throw new SampleFormatError(`${at} has ${entries.length} entries; at most ${MAX_METADATA_ENTRIES} are allowed`);
  for (const [key, item] of entries) {
    checkedText(key, `${at}: a key`, SAMPLE_TEXT_RULES.metadataKey);
    const storable = storableKeyProblem(key, at);
    if (storable !== undefined) throw new SampleFormatError(storable);
    checkedText(item, `${at}[${JSON.stringify(key.slice(0, 64))}]`, SAMPLE_TEXT_RULES.metadataValue);
  }
  return record;
}

/** A plain object whose values are all strings; returned as a null-prototype copy. */
function stringRecord(value: unknown, at: string): Record<string, string> {
  if (!isPlainObject(value)) throw new SampleFormatError(`${at} must be an object of strings`);
  const copy: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') {
      throw new SampleFormatError(`${at}[${JSON.stringify(key)}] must be a string, got ${describe(item)}`);
    }
    copy[key] = item;
  }
  return copy;
}

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}

function quote(name: string): string {
  return JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
}
