// The statistics the spectral block (and flatten) share, against values numpy 1.26 / scipy 1.13
// printed for the same arrays, and scipy 1.7.3's answer for constant input (dsp-reference §0.3).
import { describe, expect, it } from 'vitest';
import { kurtosis, mean, populationStd, rms, skewness } from '../../../domain/dsp/statistics';
import { kurtosis32, mean32, skewness32, std32, sum32, variance32 } from '../../../domain/dsp/spectral/float32Statistics';

describe('float64 statistics (numpy mean/std, scipy.stats skew/kurtosis)', () => {
  const x = [1, 2, 3, 10, -4, 0.5];

  it('match numpy and scipy: population std, biased skewness, Fisher kurtosis', () => {
    expect(mean(x)).toBeCloseTo(2.0833333333333335, 14);
    expect(populationStd(x)).toBeCloseTo(4.167499916683329, 13);
    expect(rms(x)).toBeCloseTo(4.659220249498121, 13);
    expect(skewness(x)).toBeCloseTo(0.6138076785668537, 13);
    expect(kurtosis(x)).toBeCloseTo(-0.06841533678411915, 13);
  });

  it('answer a constant input as scipy 1.7.3 does: skewness 0 and kurtosis -3, never NaN', () => {
    expect(skewness([4, 4, 4, 4])).toBe(0);
    expect(kurtosis([4, 4, 4, 4])).toBe(-3);
    expect(skewness([0, 0])).toBe(0);
    expect(kurtosis([1e-200, -1e-200])).toBe(-3);
  });
});

describe('float32 statistics as numpy computes them on float32 arrays', () => {
  const a = [0.1, 0.2, 0.3, 0.7, 1.9, -2.5, 3.25, 0.125, 9.5].map(Math.fround);

  it('give numpy\'s float32 mean, std and ddof-1 variance bit for bit, and scipy\'s skew and kurtosis', () => {
    expect(mean32(a)).toBe(1.5083333253860474);
    expect(std32(a)).toBe(3.17704439163208);
    expect(variance32(a, 1)).toBe(11.35531234741211);
    expect(skewness32(a)).toBeCloseTo(1.5292981374534105, 14);
    expect(kurtosis32(a)).toBeCloseTo(1.754359975274685, 14);
  });

  it('sum pairwise: a float32 running sum of 1 + many tiny values loses them, the pairwise sum keeps them', () => {
    const values = [1, ...Array.from({ length: 1024 }, () => Math.fround(1e-8))].map(Math.fround);
    let running = 0;
    for (const v of values) running = Math.fround(running + v);
    expect(running).toBe(1);
    expect(sum32(values)).toBeGreaterThan(1);
  });
});
