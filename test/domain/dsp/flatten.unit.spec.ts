import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { flattenBlock } from '../../../domain/dsp/flatten';
import { axisStatistics } from '../../../domain/dsp/flattenStatistics';
import { DspConfigurationError } from '../../../domain/dsp/processingBlock';
import { expectMatchesReference, expectRefusal, v } from './expectReference';
import { goldenAccelerometer, loadFixture } from './referenceFixtures';

const fixture = loadFixture('flatten');
const ACCEL = { values: goldenAccelerometer(), axes: ['x', 'y', 'z'], frequency: 62.5 };

describe('the flatten block', () => {
  it('declares the info flags of dsp-reference 0.2 (no dimensionality reduction)', () => {
    expect(flattenBlock).toMatchObject({ type: 'flatten', implementationVersions: [1], dimensionalityReduction: false, hasFeatureImportance: true, canNormalizeData: true });
  });

  describe.each(fixture.cases.map((c) => [c.name, c] as const))('on the reference case "%s"', (_, c) => {
    it('gives the reference statistics and labels to float64 rounding', () => {
      // Values near 0 (the mean and skew of a symmetric axis) are compared absolutely.
      expectMatchesReference(flattenBlock, c, { atol: 1e-12, rtol: 1e-12 });
    });
  });

  it('reproduces the golden axis 0 of dsp-reference 10', () => {
    const features = Array.from(flattenBlock.run(ACCEL, {}, v(1)).features);
    const golden = [0, -1.514047, 1.524717, 0.7913596, 0.7913596, 0, -1.015938];
    golden.forEach((g, i) => expect(Math.abs(features[i]! - g)).toBeLessThan(1e-6 + 5e-7 * Math.abs(g)));
    expect(features).toHaveLength(21);
  });

  it('names the enabled statistics per axis, in the fixed order', () => {
    const result = flattenBlock.run(ACCEL, { average: 'false', stdev: false, kurtosis: 'false' }, v(1));
    expect(result.labels).toEqual(['Minimum', 'Maximum', 'RMS', 'Skewness']);
    expect(result.features).toHaveLength(12);
  });

  it('gives skewness 0 and kurtosis -3 for a constant axis, as the pinned scipy 1.7.3 does', () => {
    const stats = axisStatistics([0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], 0, 1, 1);
    expect(stats).toMatchObject({ skewness: 0, kurtosis: -3, stdev: expect.closeTo(0, 15) as number });
    const zeros = axisStatistics([0, 0, 0], 0, 1, 1);
    expect([zeros.skewness, zeros.kurtosis]).toEqual([0, -3]);
  });

  it('treats a spread whose powers underflow as none, where scipy would answer inf or NaN', () => {
    const stats = axisStatistics([0, -3.1434555694052576e-162], 0, 1, 1);
    expect([stats.skewness, stats.kurtosis]).toEqual([0, -3]);
  });

  it('uses population moments (two-point axis: skew 0, kurtosis -2, stdev half the gap)', () => {
    expect(axisStatistics([1, 3], 0, 1, 1)).toEqual({ average: 2, minimum: 1, maximum: 3, rms: Math.sqrt(5), stdev: 1, skewness: 0, kurtosis: -2 });
  });

  it('refuses an implementation version it does not reproduce', () => {
    expectRefusal(() => flattenBlock.run(ACCEL, {}, v(2)), 'implementation_version');
  });

  it('refuses a statistic flag that is not a boolean', () => {
    expectRefusal(() => flattenBlock.run(ACCEL, { rms: 'yes' }, v(1)), 'rms');
  });

  it('refuses an empty window', () => {
    expectRefusal(() => flattenBlock.run({ values: [], axes: ['x'], frequency: 1 }, {}, v(1)), 'values');
  });

  it('gives axes × enabled statistics of finite numbers for any finite window', () => {
    const flags = fc.record({ average: fc.boolean(), minimum: fc.boolean(), maximum: fc.boolean(), rms: fc.boolean(), stdev: fc.boolean(), skewness: fc.boolean(), kurtosis: fc.boolean() });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 }), fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 60 }), flags, (axes, raw, params) => {
        const values = raw.slice(0, raw.length - (raw.length % axes));
        try {
          const result = flattenBlock.run({ values, axes: Array.from({ length: axes }, (_, i) => `a${i}`), frequency: 50 }, params, v(1));
          const enabled = Object.values(params).filter(Boolean).length;
          expect(result.features).toHaveLength(axes * enabled);
          expect(result.outputConfig).toEqual({ type: 'flat', shape: { width: axes * enabled } });
          expect(Array.from(result.features).every(Number.isFinite)).toBe(true);
        } catch (error) {
          // Only the empty window (fewer values than axes) is refused.
          expect(error).toBeInstanceOf(DspConfigurationError);
          expect(values).toHaveLength(0);
        }
      }),
    );
  });
});
