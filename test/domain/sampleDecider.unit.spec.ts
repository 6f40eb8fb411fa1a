import { describe, expect, it } from 'vitest';
import { checkSample } from '../../domain/sample/checkSample';
import { sampleDecider, type SampleCommand } from '../../domain/sample/sampleDecider';
import type { SampleEvent, SampleIngested } from '../../domain/sample/sampleEvents';
import {
  MAX_BOUNDING_BOXES,
  MAX_DEVICE_TEXT_LENGTH,
  MAX_INTERVAL_MS,
  MAX_METADATA_ENTRIES,
  MAX_PIXEL_SIDE,
  MAX_SAMPLE_LENGTH_MS,
  MAX_SENSORS,
  MAX_STRUCTURED_LABELS,
  MAX_VALUE_ROWS,
  MIN_INTERVAL_MS,
} from '../../domain/sample/sampleLimits';
import { ConflictError, ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(sampleDecider);
type Data = SampleIngested['data'];

const timeSeries: Data = {
  sampleId: 7,
  projectId: 3,
  category: 'training',
  fileName: 'idle.01.json',
  label: 'idle',
  sha256: 'a'.repeat(64),
  size: 1234,
  contentType: 'application/json',
  kind: 'time-series',
  intervalMs: 10,
  frequency: 100,
  sensors: [{ name: 'accX', units: 'm/s2' }],
  valuesCount: 2,
  totalLengthMs: 20,
  deviceName: 'ac:87:a3',
  deviceType: 'LINUX',
  width: null,
  height: null,
  signatureMethod: 'none',
  signatureValidate: false,
  signatureKeyId: null,
  metadata: { site: 'lab 2' },
  boundingBoxes: [],
  structuredLabels: [],
  uploadSource: null,
  ingested: '2026-11-25T10:00:00.000Z',
};

const image: Data = {
  ...timeSeries,
  fileName: 'cat.01.png',
  label: 'cat',
  contentType: 'image/png',
  kind: 'image',
  intervalMs: 0,
  frequency: 0,
  sensors: [],
  valuesCount: 0,
  totalLengthMs: 0,
  deviceName: null,
  deviceType: null,
  width: 640,
  height: 480,
  signatureMethod: null,
  boundingBoxes: [{ label: 'cat', x: 10, y: 20, width: 100, height: 50 }],
};

/** The one way in: the description checked by checkSample, then decided with the id and time. */
const ingest = (data: Data): SampleCommand => {
  const { sampleId, ingested: at, ...description } = data;
  return { type: 'IngestSample', data: { ...checkSample(description), sampleId, ingested: at } };
};
const ingested = (data: Data): SampleEvent => ({ type: 'SampleIngested', data });
const refused = (data: Data, message: RegExp) => {
  const attempt = () => sampleDecider.decide(ingest(data), sampleDecider.initialState());
  expect(attempt).toThrow(ValidationError);
  expect(attempt).toThrow(message);
};

describe('a sample that does not exist yet', () => {
  it('is ingested as described when every value is in range', () => {
    spec.given([]).when(ingest(timeSeries)).then([ingested(timeSeries)]);
    spec.given([]).when(ingest(image)).then([ingested(image)]);
  });

  it('is ingested at the edges of every range', () => {
    const edges: Data = {
      ...timeSeries,
      intervalMs: MAX_INTERVAL_MS,
      frequency: 1000 / MAX_INTERVAL_MS,
      valuesCount: MAX_VALUE_ROWS,
      totalLengthMs: MAX_SAMPLE_LENGTH_MS,
      size: Number.MAX_SAFE_INTEGER,
      deviceName: 'd'.repeat(MAX_DEVICE_TEXT_LENGTH),
    };
    spec.given([]).when(ingest(edges)).then([ingested(edges)]);
    const fastest: Data = { ...timeSeries, intervalMs: MIN_INTERVAL_MS, frequency: 1000 / MIN_INTERVAL_MS };
    spec.given([]).when(ingest(fastest)).then([ingested(fastest)]);
    const largest: Data = { ...image, width: MAX_PIXEL_SIDE, height: 1 };
    spec.given([]).when(ingest(largest)).then([ingested(largest)]);
  });

  it('is ingested when it is the longest audio a 100 MB upload can hold (8-bit mono WAV)', () => {
    const audio: Data = { ...timeSeries, kind: 'audio', contentType: 'audio/wav', intervalMs: 0.0625, frequency: 16000, valuesCount: 100_000_000 - 44, totalLengthMs: (100_000_000 - 44) * 0.0625 };
    spec.given([]).when(ingest(audio)).then([ingested(audio)]);
  });

  it('stores -0 as 0, the value a replay of the JSON log would give', () => {
    spec
      .given([])
      .when(ingest({ ...image, intervalMs: -0, frequency: -0, totalLengthMs: -0, boundingBoxes: [{ label: 'cat', x: -0, y: -0, width: 1, height: 1 }] }))
      .thenMatches(([event]) => {
        const data = (event as SampleIngested).data;
        expect(Object.is(data.intervalMs, 0)).toBe(true);
        expect(Object.is(data.frequency, 0)).toBe(true);
        expect(Object.is(data.totalLengthMs, 0)).toBe(true);
        expect(Object.is(data.boundingBoxes[0]!.x, 0)).toBe(true);
      });
  });
});

describe('a sample whose numbers a projection could not apply', () => {
  it('is refused when its interval is 1e308, whose length overflows to Infinity (an upload once accepted)', () => {
    refused({ ...timeSeries, intervalMs: 1e308, frequency: 1000 / 1e308, totalLengthMs: 2 * 1e308 }, /intervalMs must be from .* got 1e\+308/);
    refused({ ...timeSeries, totalLengthMs: Infinity }, /totalLengthMs must be a finite number, got Infinity/);
  });

  it.each([
    ['intervalMs', Number.NaN, /intervalMs must be a number, got NaN/],
    ['intervalMs', Infinity, /intervalMs must be a finite number/],
    ['intervalMs', 0, /intervalMs must be from/],
    ['intervalMs', -10, /intervalMs must be from/],
    ['intervalMs', MIN_INTERVAL_MS / 2, /intervalMs must be from/],
    ['intervalMs', MAX_INTERVAL_MS * 2, /intervalMs must be from/],
    ['frequency', Number.NaN, /frequency must be a number/],
    ['frequency', -Infinity, /frequency must be a finite number/],
    ['frequency', 0, /frequency must be from/],
    ['frequency', 1e12, /frequency must be from/],
    ['valuesCount', 1.5, /valuesCount must be a whole number/],
    ['valuesCount', -1, /valuesCount must be from 0/],
    ['valuesCount', MAX_VALUE_ROWS + 1, /valuesCount must be from 0/],
    ['valuesCount', Number.NaN, /valuesCount must be a number/],
    ['totalLengthMs', -1, /totalLengthMs must be from 0/],
    ['totalLengthMs', Number.NaN, /totalLengthMs must be a number/],
    ['totalLengthMs', MAX_SAMPLE_LENGTH_MS * 2, /totalLengthMs must be from 0/],
    ['size', -1, /size must be from 0/],
    ['size', 2 ** 53, /size must be from 0 to 9007199254740991/],
    ['size', 1.5, /size must be a whole number/],
    ['projectId', 0, /projectId must be from 1/],
    ['sampleId', Number.NaN, /sampleId must be a number/],
  ] as const)('is refused with %s = %s, naming the field', (field, value, message) => {
    refused({ ...timeSeries, [field]: value }, message);
  });

  it('is refused a sampling rate of 0 unless it is an image or a video', () => {
    refused({ ...timeSeries, intervalMs: 0, frequency: 0 }, /intervalMs must be from/);
    refused({ ...timeSeries, kind: 'audio', intervalMs: 0, frequency: 0 }, /intervalMs must be from/);
    const video: Data = { ...image, kind: 'video', contentType: 'video/mp4', totalLengthMs: 4000, boundingBoxes: [] };
    spec.given([]).when(ingest(video)).then([ingested(video)]);
    refused({ ...video, totalLengthMs: Infinity }, /totalLengthMs must be a finite number/);
    refused({ ...image, intervalMs: Number.NaN, frequency: 0 }, /intervalMs must be a number/);
  });

  it.each([
    ['width', 0],
    ['width', -1],
    ['width', 1.5],
    ['height', MAX_PIXEL_SIDE + 1],
    ['height', Infinity],
  ] as const)('is refused an image %s of %s', (field, value) => {
    refused({ ...image, [field]: value }, new RegExp(`${field} must be`));
  });

  it('is refused bounding boxes that are not finite, out of range, too many, or labelled with hidden characters', () => {
    const box = image.boundingBoxes[0]!;
    refused({ ...image, boundingBoxes: [{ ...box, x: Number.NaN }] }, /boundingBoxes\[0\]\.x must be a number/);
    refused({ ...image, boundingBoxes: [{ ...box, y: 1e308 }] }, /boundingBoxes\[0\]\.y must be from/);
    refused({ ...image, boundingBoxes: [{ ...box, width: 0 }] }, /boundingBoxes\[0\]\.width must be from/);
    refused({ ...image, boundingBoxes: [{ ...box, height: -Infinity }] }, /boundingBoxes\[0\]\.height must be a finite number/);
    refused({ ...image, boundingBoxes: [box, { ...box, label: 'c\u202Eat' }] }, /boundingBoxes\[1\]\.label contains an invisible formatting character \(U\+202E\)/);
    refused({ ...image, boundingBoxes: [{ ...box, label: 'x'.repeat(257) }] }, /boundingBoxes\[0\]\.label is 257 characters long/);
    refused({ ...image, boundingBoxes: Array.from({ length: MAX_BOUNDING_BOXES + 1 }, () => box) }, /boundingBoxes has 10001 entries/);
  });

  it('is refused structured labels outside its rows, with fractional indices, too many, or with control characters', () => {
    const rows = { ...timeSeries, valuesCount: 10 };
    const label = { label: 'idle', startIndex: 0, endIndex: 9 };
    spec.given([]).when(ingest({ ...rows, structuredLabels: [label] })).then([ingested({ ...rows, structuredLabels: [label] })]);
    refused({ ...rows, structuredLabels: [{ ...label, endIndex: 10 }] }, /structuredLabels\[0\]\.endIndex must be from 0 to 9/);
    refused({ ...rows, structuredLabels: [{ ...label, startIndex: 0.5 }] }, /structuredLabels\[0\]\.startIndex must be a whole number/);
    refused({ ...rows, structuredLabels: [{ ...label, startIndex: 5, endIndex: 4 }] }, /endIndex \(4\) is before its startIndex \(5\)/);
    refused({ ...rows, structuredLabels: [{ ...label, label: 'a\u0007' }] }, /structuredLabels\[0\]\.label contains a control character \(U\+0007\)/);
    refused({ ...image, structuredLabels: [label] }, /structuredLabels\[0\]: this sample has no rows/);
    refused({ ...rows, structuredLabels: Array.from({ length: MAX_STRUCTURED_LABELS + 1 }, () => label) }, /structuredLabels has 10001 entries/);
  });
});

describe('a sample whose texts are unbounded or hide characters', () => {
  it('is refused a device name of 3 MB, naming the field', () => {
    refused({ ...timeSeries, deviceName: 'd'.repeat(3_000_000) }, /deviceName is 3000000 characters long; at most 256/);
    refused({ ...timeSeries, deviceType: 't'.repeat(MAX_DEVICE_TEXT_LENGTH + 1) }, /deviceType is 257 characters long/);
  });

  it.each([
    ['label', 'idle\u0000'],
    ['label', 'id\u202Ele'],
    ['label', 'idle\n'],
    ['fileName', 'idle\u2066.json'],
    ['fileName', 'idle\u0085.json'],
    ['deviceName', 'dev\u0008'],
    ['deviceType', 'LINUX\u2028'],
    ['contentType', 'application/json\r'],
    ['uploadSource', 'cli\u001b[31m'],
  ] as const)('is refused a %s holding %j', (field, value) => {
    refused({ ...timeSeries, [field]: value }, new RegExp(`^${field} contains`));
  });

  it('is refused a label that is half a surrogate pair, which a UTF-8 store cannot keep', () => {
    refused({ ...timeSeries, label: 'a\ud800' }, /label is not valid Unicode/);
  });

  it('is refused sensors that are too many or whose names and units break the text rules', () => {
    refused({ ...timeSeries, sensors: [{ name: '', units: 'g' }] }, /sensors\[0\]\.name is empty/);
    refused({ ...timeSeries, sensors: [{ name: 'accX', units: 'm/s\u202E2' }] }, /sensors\[0\]\.units contains an invisible/);
    refused({ ...timeSeries, sensors: Array.from({ length: MAX_SENSORS + 1 }, () => ({ name: 'a', units: '' })) }, /sensors has 10001 entries/);
    const unitless = { ...timeSeries, sensors: [{ name: 'accX', units: '' }] };
    spec.given([]).when(ingest(unitless)).then([ingested(unitless)]);
  });

  it('is refused metadata with too many entries or hidden characters in a key or a value', () => {
    refused({ ...timeSeries, metadata: { 'si\u0000te': 'lab' } }, /metadata key contains a control character/);
    refused({ ...timeSeries, metadata: { site: 'lab\u202E' } }, /metadata value of "site" contains an invisible/);
    refused({ ...timeSeries, metadata: { site: 'x'.repeat(16_385) } }, /metadata value of "site" is 16385 characters long/);
    refused({ ...timeSeries, metadata: Object.fromEntries(Array.from({ length: MAX_METADATA_ENTRIES + 1 }, (_, i) => [`k${i}`, 'v'])) }, /metadata has 257 entries/);
  });

  it('is refused a metadata key a read model cannot take as a field name (a leading $, a dot)', () => {
    refused({ ...timeSeries, metadata: { $where: 'x' } }, /metadata: the key "\$where" must not start with "\$" or contain "\."/);
    refused({ ...timeSeries, metadata: { 'site.name': 'lab' } }, /metadata: the key "site\.name" must not/);
  });

  it('keeps a metadata key named __proto__ as a key', () => {
    const metadata = JSON.parse('{"__proto__":"x"}') as Record<string, string>;
    spec
      .given([])
      .when(ingest({ ...timeSeries, metadata }))
      .thenMatches(([event]) => expect(Object.entries((event as SampleIngested).data.metadata)).toEqual([['__proto__', 'x']]));
  });
});

describe('a sample whose identity or time is malformed', () => {
  it('is refused a sha256 that is not 64 lowercase hex digits', () => {
    refused({ ...timeSeries, sha256: 'A'.repeat(64) }, /sha256 must be 64 lowercase hexadecimal digits/);
    refused({ ...timeSeries, sha256: 'a'.repeat(63) }, /sha256 must be/);
  });

  it('is refused an ingestion time that is not an ISO timestamp', () => {
    refused({ ...timeSeries, ingested: 'yesterday' }, /ingested must be an ISO 8601 timestamp/);
    refused({ ...timeSeries, ingested: '2026-11-25T10:00:00Z' }, /ingested must be an ISO 8601 timestamp/);
    refused({ ...timeSeries, ingested: '+275760-09-13T00:00:00.000Z' }, /ingested must be between 1970 and 9999/);
  });

  it('is refused an unknown category, kind or signature method', () => {
    refused({ ...timeSeries, category: 'bogus' as Data['category'] }, /category must be one of/);
    refused({ ...timeSeries, kind: 'hologram' as Data['kind'] }, /kind must be one of/);
    refused({ ...timeSeries, signatureMethod: 'RS256' as Data['signatureMethod'] }, /signatureMethod must be one of/);
  });
});

describe('a sample that exists', () => {
  it('cannot be ingested again', () => {
    spec.given([ingested(timeSeries)]).when(ingest(timeSeries)).thenThrows(ConflictError, /already exists/);
  });

  it('is deleted once; a second delete changes nothing', () => {
    const now = new Date('2026-11-26T10:00:00.000Z');
    const deleted: SampleEvent = { type: 'SampleDeleted', data: { sampleId: 7, projectId: 3, deleted: now.toISOString() } };
    spec.given([ingested(timeSeries)]).when({ type: 'DeleteSample', data: { now } }).then([deleted]);
    spec.given([ingested(timeSeries), deleted]).when({ type: 'DeleteSample', data: { now } }).then([]);
  });
});
