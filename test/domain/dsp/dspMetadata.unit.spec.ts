import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classList, DspMetadataBuilder, featureLabels } from '../../../domain/dsp/dspMetadata';
import type { OutputConfig } from '../../../domain/dsp/processingBlock';
import type { TimeSeriesWindowing } from '../../../domain/dsp/windows';

const windowing: TimeSeriesWindowing = { windowSizeMs: 2000, windowIncreaseMs: 80, frequencyHz: 62.5, padZeros: true, labelMethod: 'end-of-window' };
const flat = (width: number): OutputConfig => ({ type: 'flat', shape: { width } });
const result = (n: number, labels: string[] = ['RMS', 'Stdev']) => ({ features: new Float32Array(n), labels, outputConfig: flat(n), fftUsed: [] as number[] });

describe('classList', () => {
  it('lists every label once, sorted, structured labels instead of the sample label where a sample has them', () => {
    expect(
      classList([
        { label: 'wave', structuredLabels: [] },
        { label: 'idle', structuredLabels: [] },
        { label: 'ignored', structuredLabels: [{ label: 'snake' }, { label: 'idle' }] },
        { label: null, structuredLabels: [] },
        { label: 'Updown', structuredLabels: [] },
      ]),
    ).toEqual(['Updown', 'idle', 'snake', 'wave']);
  });
});

describe('featureLabels', () => {
  it('prefixes per-axis labels with the axis names in the block layout [axis0 …, axis1 …]', () => {
    expect(featureLabels(['accX', 'accY'], ['RMS', 'Stdev'], 4, false)).toEqual(['accX RMS', 'accX Stdev', 'accY RMS', 'accY Stdev']);
    expect(featureLabels(['audio'], ['RMS'], 1, false)).toEqual(['audio RMS']);
  });

  it('keeps labels that already name every feature, and names unlabelled features by axis and row (raw) or by index', () => {
    expect(featureLabels(['accX', 'accY'], ['a', 'b', 'c'], 3, false)).toEqual(['a', 'b', 'c']);
    expect(featureLabels(['accX', 'accY'], [], 4, true)).toEqual(['accX 0', 'accY 0', 'accX 1', 'accY 1']);
    expect(featureLabels(['image'], [], 3, false)).toEqual(['Feature 0', 'Feature 1', 'Feature 2']);
  });

  it('always gives exactly one name per feature', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 4 }), fc.array(fc.string(), { maxLength: 6 }), fc.integer({ min: 0, max: 40 }), fc.boolean(), (axes, labels, n, interleaved) => {
        expect(featureLabels(axes, labels, n, interleaved)).toHaveLength(n);
      }),
    );
  });
});

describe('DspMetadataBuilder', () => {
  const builder = () => new DspMetadataBuilder({ dspConfig: { 'scale-axes': '1' }, classes: ['idle', 'wave'], axes: ['accX', 'accY'], windowing, interleaved: false });

  it('describes the features, the windows per sample in row order and the settings they were made with', () => {
    const b = builder();
    b.addWindow(12, { ...result(4), fftUsed: [16] });
    b.addWindow(12, result(4, ['other']));
    b.addWindow(3, result(4));
    expect(b.windowCount).toBe(3);
    expect(b.build(new Date('2026-11-26T04:00:00Z'))).toEqual({
      created: '2026-11-26T04:00:00.000Z',
      dspConfig: { 'scale-axes': '1' },
      labels: ['idle', 'wave'],
      featureLabels: ['accX RMS', 'accX Stdev', 'accY RMS', 'accY Stdev'],
      featureCount: 4,
      windowCount: 3,
      includedSamples: [
        { id: 12, windowCount: 2 },
        { id: 3, windowCount: 1 },
      ],
      windowSizeMs: 2000,
      windowIncreaseMs: 80,
      padZeros: true,
      frequency: 62.5,
      outputConfig: flat(4),
      fftUsed: [16],
      resamplingAlgorithmVersion: 1,
    });
  });

  it('gives y as the 1-based class index and refuses a label outside the class list', () => {
    const b = builder();
    expect(b.yOf('idle')).toBe(1);
    expect(b.yOf('wave')).toBe(2);
    expect(() => b.yOf('snake')).toThrow(/not in the class list/);
  });

  it('refuses a window with another feature count, windows of a sample that come apart, and an empty result', () => {
    const b = builder();
    expect(() => b.build(new Date())).toThrow(/no window/);
    b.addWindow(1, result(4));
    expect(() => b.addWindow(1, result(5))).toThrow(/gave 5 features, earlier windows 4/);
    b.addWindow(2, result(4));
    expect(() => b.addWindow(1, result(4))).toThrow(/did not come together/);
  });
});
