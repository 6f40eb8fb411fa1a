import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkFileName,
  checkStructuredLabels,
  isLabelsFile,
  labelFromFileName,
  parseInfoLabels,
  type FileLabels,
} from '../../../../domain/sample/formats/labels';
import { SampleFormatError } from '../../../../domain/sample/formats/sampleFormat';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');
const entries = (map: Map<string, FileLabels>) => Object.fromEntries(map);

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SampleFormatError);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('labelFromFileName', () => {
  it.each([
    ['idle.01.json', 'idle'],
    ['name.01', 'name'],
    ['wave-left_2.cbor', 'wave-left_2'],
    ['glass breaking.wav', 'glass breaking'],
    ['  padded .json', 'padded'],
    ['café.3.json', 'café'],
    ['a+b.json', 'a'],
    ['noextension', 'noextension'],
  ])('takes %j to %j', (fileName, label) => {
    expect(labelFromFileName(fileName)).toBe(label);
  });

  it.each(['.json', '   .json', '+x.json', ''])('gives no label for %j', (fileName) => {
    expect(labelFromFileName(fileName)).toBeNull();
  });
});

describe('checkFileName', () => {
  it('returns an acceptable name unchanged', () => {
    expect(checkFileName('idle.01.json')).toBe('idle.01.json');
    expect(checkFileName('a..b.json')).toBe('a..b.json');
    expect(checkFileName('x'.repeat(255))).toHaveLength(255);
  });

  it.each([
    ['', /empty/],
    ['a/b.json', /path separator/],
    ['..\\b.json', /path separator/],
    ['..', /not allowed/],
    ['.', /not allowed/],
    ['a\u0000b', /control character/],
    ['a\nb', /control character/],
    ['a\u007fb', /control character/],
    ['a\ud800b', /not valid Unicode/],
    ['x'.repeat(256), /256 bytes long; at most 255/],
    ['é'.repeat(128), /256 bytes long/],
  ])('refuses %j', (name, message) => {
    expect(refusal(() => checkFileName(name))).toMatch(message);
  });
});

describe('isLabelsFile', () => {
  it('knows the side files by their extension', () => {
    expect(isLabelsFile('info.labels')).toBe(true);
    expect(isLabelsFile('bounding_boxes.LABELS')).toBe(true);
    expect(isLabelsFile('idle.json')).toBe(false);
  });
});

describe('an info.labels file (the uploader\u2019s info-file format)', () => {
  const info = {
    version: 1,
    files: [
      {
        path: 'training/idle.01.json',
        name: 'idle.01',
        category: 'training',
        label: { type: 'label', label: 'idle' },
        metadata: { site: 'lab', batch: '7' },
      },
      { path: 'testing/wave.02.json', name: 'wave.02', category: 'testing', label: { type: 'unlabeled' }, metadata: {} },
      {
        path: 'training\\cars.jpg',
        category: 'split',
        label: { type: 'label', label: 'car' },
        boundingBoxes: [{ label: 'car', x: 1, y: 2, width: 30, height: 40 }],
      },
      {
        path: 'run.csv',
        category: 'anomaly',
        label: {
          type: 'multi-label',
          labels: [
            { startIndex: 0, endIndex: 9, label: 'idle' },
            { startIndex: 10, endIndex: 19, label: 'run' },
          ],
        },
      },
      { path: 'kv.json', label: { type: 'keyvalue-labels', labels: { env: 'indoor', speed: 'slow' } }, attachments: ['notes/kv.txt'] },
      { path: 'inferred.json', label: { type: 'infer' } },
    ],
  };

  it('gives what it says per data file, keyed by the last part of each path', () => {
    expect(entries(parseInfoLabels(json(info)))).toEqual({
      'idle.01.json': { name: 'idle.01', category: 'training', label: 'idle', metadata: { site: 'lab', batch: '7' } },
      'wave.02.json': { name: 'wave.02', category: 'testing', label: null, metadata: {} },
      'cars.jpg': { label: 'car', boundingBoxes: [{ label: 'car', x: 1, y: 2, width: 30, height: 40 }] },
      'run.csv': {
        category: 'anomaly',
        structuredLabels: [
          { startIndex: 0, endIndex: 9, label: 'idle' },
          { startIndex: 10, endIndex: 19, label: 'run' },
        ],
      },
      'kv.json': { labelMap: { env: 'indoor', speed: 'slow' }, attachments: ['kv.txt'] },
      'inferred.json': {},
    });
  });

  it('is read in its NDJSON form too', () => {
    const [first, second] = info.files;
    const ndjson = [
      '{"__ndjson":true,"version":1}',
      JSON.stringify({ __key: 'files', __item: first }),
      '',
      JSON.stringify({ __key: 'files', __item: second }),
      '',
    ].join('\n');
    expect([...parseInfoLabels(Buffer.from(ndjson)).keys()]).toEqual(['idle.01.json', 'wave.02.json']);
  });

  it('keeps a file named __proto__ as data, not as a prototype', () => {
    const map = parseInfoLabels(Buffer.from('{"version":1,"files":[{"path":"__proto__","metadata":{"__proto__":"x"}}]}'));
    expect(map.get('__proto__')?.metadata?.['__proto__']).toBe('x');
  });

  const bad = (files: unknown[]) => json({ version: 1, files });
  it.each([
    ['it is not JSON', Buffer.from('{"version":1,'), /"info\.labels" is not valid JSON/],
    ['it is not UTF-8', Buffer.from([0x7b, 0xff, 0x7d]), /not valid UTF-8/],
    ['it is not an object', json([1]), /must hold a JSON object/],
    ['the version is not 1', json({ version: 2, files: [] }), /"version" must be 1, got 2/],
    ['files is not an array', json({ version: 1, files: {} }), /"files" must be an array/],
    ['an entry has no path', bad([{ category: 'training' }]), /files\[0\]: "path" must be a non-empty string/],
    ['a path ends in ..', bad([{ path: 'a/..' }]), /files\[0\]\.path: The file name "\.\." is not allowed/],
    ['a path ends in a separator', bad([{ path: 'a/' }]), /files\[0\]\.path: The file name is empty/],
    ['a file is listed twice', bad([{ path: 'a/x.json' }, { path: 'b/x.json' }]), /files\[1\]: the file "x\.json" is listed twice/],
    ['a category is unknown', bad([{ path: 'x.json', category: 'validation' }]), /"category" must be training, testing, anomaly or split, got "validation"/],
    ['a label type is unknown', bad([{ path: 'x.json', label: { type: 'guess' } }]), /files\[0\]\.label\.type must be unlabeled, label, multi-label or keyvalue-labels, got "guess"/],
    ['a label is not a string', bad([{ path: 'x.json', label: { type: 'label', label: 3 } }]), /files\[0\]\.label\.label must be a string/],
    ['a metadata value is not a string', bad([{ path: 'x.json', metadata: { n: 1 } }]), /files\[0\]\.metadata\["n"\] must be a string, got 1/],
    ['metadata is an array', bad([{ path: 'x.json', metadata: ['a'] }]), /files\[0\]\.metadata must be an object of strings/],
    ['a bounding box has no width', bad([{ path: 'x.jpg', boundingBoxes: [{ label: 'a', x: 0, y: 0, width: 0, height: 1 }] }]), /boundingBoxes\[0\]: "width" must be > 0/],
    ['a bounding box coordinate is a string', bad([{ path: 'x.jpg', boundingBoxes: [{ label: 'a', x: '0', y: 0, width: 1, height: 1 }] }]), /boundingBoxes\[0\]: "x" must be a finite number, got "0"/],
    ['a bounding box has no label', bad([{ path: 'x.jpg', boundingBoxes: [{ x: 0, y: 0, width: 1, height: 1 }] }]), /boundingBoxes\[0\]: "label" must be a string/],
    ['a structured label ends before it starts', bad([{ path: 'x.json', label: { type: 'multi-label', labels: [{ label: 'a', startIndex: 5, endIndex: 4 }] } }]), /"endIndex" \(4\) is before "startIndex" \(5\)/],
    ['a structured label index is not an integer', bad([{ path: 'x.json', label: { type: 'multi-label', labels: [{ label: 'a', startIndex: 0.5, endIndex: 4 }] } }]), /"startIndex" must be an integer >= 0, got 0\.5/],
    ['a structured label index is negative', bad([{ path: 'x.json', label: { type: 'multi-label', labels: [{ label: 'a', startIndex: -1, endIndex: 4 }] } }]), /"startIndex" must be an integer >= 0, got -1/],
    ['an attachment is not a name', bad([{ path: 'x.json', attachments: [4] }]), /attachments\[0\] must be a string/],
  ])('is refused when %s', (_name, bytes, message) => {
    expect(refusal(() => parseInfoLabels(bytes))).toMatch(message);
  });
});

describe('the side files the Linux CLI sends (sdk-reference 4.2)', () => {
  // Built as edge-impulse-linux's build/cli-common/make-image.js builds them.
  it('structured_labels.labels gives structured labels, with their label maps', () => {
    const labelsFile = {
      type: 'structured-labels',
      version: 1,
      structuredLabels: {
        'walk.01.json': [
          { startIndex: 0, endIndex: 4, label: 'walk', labelMap: { type: 'key-values', labels: { pace: 'slow' } } },
          { startIndex: 5, endIndex: 9, label: 'run', labelMap: { pace: 'fast' } },
        ],
      },
    };
    expect(entries(parseInfoLabels(json(labelsFile), 'structured_labels.labels'))).toEqual({
      'walk.01.json': {
        structuredLabels: [
          { startIndex: 0, endIndex: 4, label: 'walk', labelMap: { pace: 'slow' } },
          { startIndex: 5, endIndex: 9, label: 'run', labelMap: { pace: 'fast' } },
        ],
      },
    });
  });

  it('bounding_boxes.labels gives bounding boxes', () => {
    const bbsFile = {
      version: 1,
      type: 'bounding-box-labels',
      boundingBoxes: { 'cars.jpg': [{ label: 'car', x: 10, y: 20, width: 50, height: 40 }] },
    };
    expect(entries(parseInfoLabels(json(bbsFile), 'bounding_boxes.labels'))).toEqual({
      'cars.jpg': { boundingBoxes: [{ label: 'car', x: 10, y: 20, width: 50, height: 40 }] },
    });
  });

  it('label_map.labels gives key-value labels, a list of strings keyed by position', () => {
    const labelMapFile = { version: 1, type: 'label-map-labels', labels: { 'a.json': { env: 'indoor' }, 'b.json': ['x', 'y'] } };
    expect(entries(parseInfoLabels(json(labelMapFile), 'label_map.labels'))).toEqual({
      'a.json': { labelMap: { env: 'indoor' } },
      'b.json': { labelMap: { 0: 'x', 1: 'y' } },
    });
  });

  it('attachments.labels gives the attachment names', () => {
    const attachmentsFile = { version: 1, type: 'attachments', attachments: { 'a.json': [{ filename: 'a.txt' }] } };
    expect(entries(parseInfoLabels(json(attachmentsFile), 'attachments.labels'))).toEqual({ 'a.json': { attachments: ['a.txt'] } });
  });

  it.each([
    ['the type is unknown', { version: 1, type: 'polygons', polygons: {} }, /"bounding_boxes\.labels": unknown "type" "polygons"/],
    ['the map is missing', { version: 1, type: 'bounding-box-labels' }, /"boundingBoxes" must be an object keyed by file name/],
    ['a file name has a separator', { version: 1, type: 'bounding-box-labels', boundingBoxes: { 'a/b.jpg': [] } }, /boundingBoxes\["a\/b\.jpg"\]: The file name "a\/b\.jpg" contains a path separator/],
    ['the boxes are not a list', { version: 1, type: 'bounding-box-labels', boundingBoxes: { 'b.jpg': {} } }, /boundingBoxes\["b\.jpg"\] must be an array/],
    ['label map keys differ between labels', { version: 1, type: 'structured-labels', structuredLabels: { 'w.json': [{ startIndex: 0, endIndex: 0, label: 'a', labelMap: { k: 'v' } }, { startIndex: 1, endIndex: 1, label: 'b', labelMap: { j: 'v' } }] } }, /labelMap must have the same keys/],
    ['a label map value is not a string', { version: 1, type: 'label-map-labels', labels: { 'a.json': ['x', 1] } }, /labels\["a\.json"\]\[1\] must be a string/],
    ['an attachment has no file name', { version: 1, type: 'attachments', attachments: { 'a.json': [{ name: 'x' }] } }, /attachments\["a\.json"\]\[0\] must be \{"filename": string\}/],
  ])('are refused when %s', (_name, file, message) => {
    expect(refusal(() => parseInfoLabels(json(file), 'bounding_boxes.labels'))).toMatch(message);
  });
});

describe('checkStructuredLabels', () => {
  const labels = [
    { startIndex: 0, endIndex: 4, label: 'idle' },
    { startIndex: 5, endIndex: 9, label: 'run' },
  ];

  it('accepts labels covering every row', () => {
    expect(() => checkStructuredLabels(labels, 10)).not.toThrow();
  });

  it('refuses a gap, naming the first unlabeled row', () => {
    expect(refusal(() => checkStructuredLabels(labels, 12))).toBe('Structured labels: row 10 has no label; labels must cover the whole sample');
  });

  it('refuses labels past the last row', () => {
    expect(refusal(() => checkStructuredLabels(labels, 8))).toBe('Structured label 1: endIndex 9 is out of bounds, the last row is 7');
  });
});

describe('fuzzed labels files', () => {
  const parsesOrRefuses = (bytes: Buffer) => {
    try {
      parseInfoLabels(bytes);
    } catch (error) {
      if (!(error instanceof SampleFormatError)) throw error;
    }
  };

  it('arbitrary bytes and JSON values are parsed or refused with SampleFormatError', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => parsesOrRefuses(Buffer.from(bytes))), { numRuns: 1000 });
    fc.assert(fc.property(fc.jsonValue(), (value) => parsesOrRefuses(json(value))), { numRuns: 1000 });
  });

  it('files near the formats are parsed or refused', () => {
    const anyValue = fc.oneof(fc.jsonValue(), fc.string(), fc.constant(null));
    const entry = fc.record(
      {
        path: fc.oneof(fc.string(), fc.constantFrom('a.json', 'x/y.jpg', '..', 'a/', '__proto__')),
        name: anyValue,
        category: fc.oneof(fc.constantFrom('training', 'testing', 'anomaly', 'split', 'validation'), anyValue),
        label: fc.oneof(
          fc.record({ type: fc.constantFrom('label', 'unlabeled', 'infer', 'multi-label', 'keyvalue-labels', 'other'), label: anyValue, labels: anyValue }),
          anyValue,
        ),
        metadata: fc.oneof(fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer())), anyValue),
        boundingBoxes: fc.oneof(fc.array(fc.record({ label: anyValue, x: fc.double(), y: fc.integer(), width: fc.double(), height: fc.integer() })), anyValue),
        attachments: anyValue,
      },
      { requiredKeys: [] },
    );
    const file = fc.oneof(
      fc.record({ version: fc.constantFrom(1, 2), files: fc.oneof(fc.array(entry, { maxLength: 5 }), anyValue) }),
      fc.record({
        version: fc.constant(1),
        type: fc.constantFrom('structured-labels', 'bounding-box-labels', 'label-map-labels', 'attachments', 'x'),
        structuredLabels: fc.dictionary(fc.string(), fc.oneof(fc.array(fc.record({ startIndex: fc.integer(), endIndex: fc.integer(), label: anyValue, labelMap: anyValue }), { maxLength: 4 }), anyValue)),
        boundingBoxes: fc.dictionary(fc.string(), anyValue),
        labels: fc.dictionary(fc.string(), fc.oneof(fc.array(fc.string()), anyValue)),
        attachments: fc.dictionary(fc.string(), fc.oneof(fc.array(fc.record({ filename: anyValue })), anyValue)),
      }),
    );
    fc.assert(fc.property(file, (value) => parsesOrRefuses(json(value))), { numRuns: 2000 });
  });
});
