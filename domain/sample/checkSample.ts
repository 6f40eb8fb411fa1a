// Everything a SampleIngested event carries, checked against the sample limits before it may enter
// the log. Parsers check most of it first, with messages about the file; this is the last gate, so
// that no path to IngestSample (a parser with a gap, a future caller) can append a value a
// projection cannot apply: a non-finite length, a 3 MB device name, a label that hides its text.
// The sample decider takes only its result (CheckedSample), so a caller that needs the checked
// description before an effect (the ingestion, before it stores the file) checks it here, once.
import { storableKeyProblem } from '../shared/jsonRules';
import { checkNumber, checkId } from '../shared/numberRules';
import { ValidationError } from '../shared/errors';
import { checkOptionalText, checkText, type TextRule } from '../shared/textRules';
import type { SampleIngested } from './sampleEvents';
import {
  MAX_BOUNDING_BOXES,
  MAX_BOX_COORDINATE,
  MAX_CONTENT_TYPE_LENGTH,
  MAX_DEVICE_TEXT_LENGTH,
  MAX_FREQUENCY_HZ,
  MAX_INTERVAL_MS,
  MAX_METADATA_ENTRIES,
  MAX_METADATA_KEY_LENGTH,
  MAX_METADATA_VALUE_LENGTH,
  MAX_PIXEL_SIDE,
  MAX_SAMPLE_LABEL_LENGTH,
  MAX_SAMPLE_LENGTH_MS,
  MAX_SENSORS,
  MAX_SENSOR_TEXT_LENGTH,
  MAX_STORED_FILE_NAME_LENGTH,
  MAX_STRUCTURED_LABELS,
  MAX_UPLOAD_SOURCE_LENGTH,
  MAX_VALUE_ROWS,
  MIN_FREQUENCY_HZ,
  MIN_INTERVAL_MS,
} from './sampleLimits';

/** A sample as its uploader describes it: the event's data without the ids and time the service adds. */
export type SampleDescription = Omit<SampleIngested['data'], 'sampleId' | 'ingested'>;

export const SAMPLE_CATEGORIES = ['training', 'testing', 'anomaly', 'validation', 'post-processing'] as const;
export const SAMPLE_KINDS = ['time-series', 'audio', 'image', 'video'] as const;
export const SIGNATURE_METHODS = ['HS256', 'none'] as const;

/** The text rules of a sample's fields, for parsers and for generators of accepted values. */
export const SAMPLE_TEXT_RULES = {
  fileName: { max: MAX_STORED_FILE_NAME_LENGTH },
  label: { max: MAX_SAMPLE_LABEL_LENGTH },
  contentType: { max: MAX_CONTENT_TYPE_LENGTH },
  sensorName: { max: MAX_SENSOR_TEXT_LENGTH },
  sensorUnits: { max: MAX_SENSOR_TEXT_LENGTH, allowEmpty: true },
  device: { max: MAX_DEVICE_TEXT_LENGTH },
  metadataKey: { max: MAX_METADATA_KEY_LENGTH },
  metadataValue: { max: MAX_METADATA_VALUE_LENGTH, allowEmpty: true },
  uploadSource: { max: MAX_UPLOAD_SOURCE_LENGTH },
} as const satisfies Record<string, TextRule>;

const SHA256 = /^[0-9a-f]{64}$/;

function oneOf<T extends string>(value: T, field: string, allowed: readonly T[]): T {
  if (!allowed.includes(value)) throw new ValidationError(`${field} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  return value;
}

function listOf<T>(value: readonly T[], field: string, max: number): readonly T[] {
  if (!Array.isArray(value)) throw new ValidationError(`${field} must be a list`);
  if (value.length > max) throw new ValidationError(`${field} has ${value.length} entries; at most ${max} are allowed`);
  return value;
}

declare const checked: unique symbol;

/**
 * A description checkSample returned: only it makes one (the brand exists for the type checker
 * alone), so the sample decider takes it as checked and the check runs once per sample.
 */
export type CheckedSample = SampleDescription & { readonly [checked]: true };

/**
 * Returns the sample as it may be logged (every -0 as 0), or throws a ValidationError naming the
 * first field out of range.
 */
export function checkSample(s: SampleDescription): CheckedSample {
  const kind = oneOf(s.kind, 'kind', SAMPLE_KINDS);
  // Images and videos have no sampling rate: the parsers give 0.
  const noRate = (kind === 'image' || kind === 'video') && s.intervalMs === 0 && s.frequency === 0;
  const intervalMs = noRate ? 0 : checkNumber(s.intervalMs, 'intervalMs', { min: MIN_INTERVAL_MS, max: MAX_INTERVAL_MS });
  const frequency = noRate ? 0 : checkNumber(s.frequency, 'frequency', { min: MIN_FREQUENCY_HZ, max: MAX_FREQUENCY_HZ });
  const valuesCount = checkNumber(s.valuesCount, 'valuesCount', { min: 0, max: MAX_VALUE_ROWS, integer: true });
  const totalLengthMs = checkNumber(s.totalLengthMs, 'totalLengthMs', { min: 0, max: MAX_SAMPLE_LENGTH_MS });
  const side = (value: number | null, field: string) => (value === null ? null : checkNumber(value, field, { min: 1, max: MAX_PIXEL_SIDE, integer: true }));

  const metadataEntries = Object.entries(s.metadata ?? {});
  if (metadataEntries.length > MAX_METADATA_ENTRIES) throw new ValidationError(`metadata has ${metadataEntries.length} entries; at most ${MAX_METADATA_ENTRIES} are allowed`);
  // fromEntries defines own properties, so a key such as `__proto__` stays a key.
  const metadata: Record<string, string> = Object.fromEntries(
    metadataEntries.map(([key, value]) => {
      checkText(key, 'metadata key', SAMPLE_TEXT_RULES.metadataKey);
      const storable = storableKeyProblem(key, 'metadata');
      if (storable !== undefined) throw new ValidationError(storable);
      const field = `metadata value of ${JSON.stringify(key.slice(0, 64))}`;
      if (typeof value !== 'string') throw new ValidationError(`${field} must be text`);
      return [key, checkText(value, field, SAMPLE_TEXT_RULES.metadataValue)];
    }),
  );

  const coordinate = { min: -MAX_BOX_COORDINATE, max: MAX_BOX_COORDINATE };
  const extent = { min: Number.MIN_VALUE, max: MAX_BOX_COORDINATE };
  const boundingBoxes = listOf(s.boundingBoxes, 'boundingBoxes', MAX_BOUNDING_BOXES).map((box, ix) => ({
    label: checkText(box.label, `boundingBoxes[${ix}].label`, SAMPLE_TEXT_RULES.label),
    x: checkNumber(box.x, `boundingBoxes[${ix}].x`, coordinate),
    y: checkNumber(box.y, `boundingBoxes[${ix}].y`, coordinate),
    width: checkNumber(box.width, `boundingBoxes[${ix}].width`, extent),
    height: checkNumber(box.height, `boundingBoxes[${ix}].height`, extent),
  }));

  const structuredLabels = listOf(s.structuredLabels, 'structuredLabels', MAX_STRUCTURED_LABELS).map((l, ix) => {
    const row = { min: 0, max: valuesCount - 1, integer: true };
    if (valuesCount === 0) throw new ValidationError(`structuredLabels[${ix}]: this sample has no rows to label`);
    const startIndex = checkNumber(l.startIndex, `structuredLabels[${ix}].startIndex`, row);
    const endIndex = checkNumber(l.endIndex, `structuredLabels[${ix}].endIndex`, row);
    if (endIndex < startIndex) throw new ValidationError(`structuredLabels[${ix}].endIndex (${endIndex}) is before its startIndex (${startIndex})`);
    return { label: checkText(l.label, `structuredLabels[${ix}].label`, SAMPLE_TEXT_RULES.label), startIndex, endIndex };
  });

  const sensors = listOf(s.sensors, 'sensors', MAX_SENSORS).map((sensor, ix) => ({
    name: checkText(sensor.name, `sensors[${ix}].name`, SAMPLE_TEXT_RULES.sensorName),
    units: checkText(sensor.units, `sensors[${ix}].units`, SAMPLE_TEXT_RULES.sensorUnits),
  }));

  if (typeof s.sha256 !== 'string' || !SHA256.test(s.sha256)) throw new ValidationError(`sha256 must be 64 lowercase hexadecimal digits, got ${JSON.stringify(String(s.sha256).slice(0, 80))}`);
  if (typeof s.signatureValidate !== 'boolean') throw new ValidationError('signatureValidate must be true or false');

  return {
    projectId: checkId(s.projectId, 'projectId'),
    category: oneOf(s.category, 'category', SAMPLE_CATEGORIES),
    fileName: checkText(s.fileName, 'fileName', SAMPLE_TEXT_RULES.fileName),
    label: checkOptionalText(s.label, 'label', SAMPLE_TEXT_RULES.label),
    sha256: s.sha256,
    size: checkNumber(s.size, 'size', { min: 0, max: Number.MAX_SAFE_INTEGER, integer: true }),
    contentType: checkText(s.contentType, 'contentType', SAMPLE_TEXT_RULES.contentType),
    kind,
    intervalMs,
    frequency,
    sensors,
    valuesCount,
    totalLengthMs,
    deviceName: checkOptionalText(s.deviceName, 'deviceName', SAMPLE_TEXT_RULES.device),
    deviceType: checkOptionalText(s.deviceType, 'deviceType', SAMPLE_TEXT_RULES.device),
    width: side(s.width, 'width'),
    height: side(s.height, 'height'),
    signatureMethod: s.signatureMethod === null ? null : oneOf(s.signatureMethod, 'signatureMethod', SIGNATURE_METHODS),
    signatureValidate: s.signatureValidate,
    signatureKeyId: s.signatureKeyId === null ? null : checkId(s.signatureKeyId, 'signatureKeyId'),
    metadata,
    boundingBoxes,
    structuredLabels,
    uploadSource: checkOptionalText(s.uploadSource, 'uploadSource', SAMPLE_TEXT_RULES.uploadSource),
  } as CheckedSample;
}
