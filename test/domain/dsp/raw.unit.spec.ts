import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DspConfigurationError } from '../../../domain/dsp/processingBlock';
import { rawBlock } from '../../../domain/dsp/raw';
import { expectMatchesReference, expectRefusal, v } from './expectReference';
import { loadFixture } from './referenceFixtures';

const fixture = loadFixture('raw');

describe('the raw block', () => {
  it('declares the info flags of dsp-reference 0.2', () => {
    expect(rawBlock).toMatchObject({ type: 'raw', implementationVersions: [1], dimensionalityReduction: true, hasFeatureImportance: true, canNormalizeData: true });
  });

  describe.each(fixture.cases.map((c) => [c.name, c] as const))('on the reference case "%s"', (_, c) => {
    it('gives the reference features to float64 rounding', () => {
      expectMatchesReference(rawBlock, c, { atol: 1e-12, rtol: 1e-12 });
    });
  });

  it('keeps the interleaved layout and multiplies by scale-axes', () => {
    const result = rawBlock.run({ values: [1, -2, 3, 4], axes: ['x', 'y'], frequency: 10 }, { 'scale-axes': '0.5' }, v(1));
    expect(Array.from(result.features)).toEqual([0.5, -1, 1.5, 2]);
    expect(result.outputConfig).toEqual({ type: 'flat', shape: { width: 4 } });
  });

  it('refuses an implementation version it does not reproduce', () => {
    expectRefusal(() => rawBlock.run({ values: [1], axes: ['x'], frequency: 1 }, {}, v(2)), 'implementation_version');
  });

  it('refuses values that do not split into whole samples of every axis', () => {
    expectRefusal(() => rawBlock.run({ values: [1, 2, 3], axes: ['x', 'y'], frequency: 1 }, {}, v(1)), 'axes');
  });

  it('refuses a scale that is not a number', () => {
    expectRefusal(() => rawBlock.run({ values: [1], axes: ['x'], frequency: 1 }, { 'scale-axes': 'big' }, v(1)), 'scale-axes');
  });

  it('gives one feature per value for any finite window', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { maxLength: 60 }), fc.double({ min: 0, max: 100, noNaN: true }), (axes, raw, scale) => {
        const values = raw.slice(0, raw.length - (raw.length % axes));
        try {
          const result = rawBlock.run({ values, axes: Array.from({ length: axes }, (_, i) => `a${i}`), frequency: 50 }, { 'scale-axes': scale }, v(1));
          expect(result.features.length).toBe(values.length);
          expect(result.outputConfig).toEqual({ type: 'flat', shape: { width: values.length } });
        } catch (error) {
          expect(error).toBeInstanceOf(DspConfigurationError);
        }
      }),
    );
  });
});
