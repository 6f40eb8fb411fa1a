// The DWT behind the spectral block's wavelet analysis, against the discrete-wavelets package (an
// independent port of pywt's DWT): in float64 both must agree for every wavelet the block offers.
// Its float32 path is checked against pywt itself through the block fixtures.
import DWT from 'discrete-wavelets';
import { describe, expect, it } from 'vitest';
import { downsamplingConvolution } from '../../../domain/dsp/spectral/dwt';
import { histogramEntropy, wavedec } from '../../../domain/dsp/spectral/waveletFeatures';
import { WAVELET_FILTERS } from '../../../domain/dsp/spectral/waveletFilters';
import { WAVELETS } from '../../../domain/impulse/dspParameters';

const signal = Array.from({ length: 77 }, (_, i) => Math.sin(i * 0.37) * 3 + 0.01 * i + (i % 5 === 0 ? 0.5 : 0));

describe('one DWT level in pywt\'s symmetric mode', () => {
  it('has a filter table for every wavelet of the catalog', () => {
    expect(Object.keys(WAVELET_FILTERS).sort()).toEqual([...WAVELETS].sort());
  });

  it.each(WAVELETS.map((w) => [w]))('gives the coefficients discrete-wavelets gives for %s', (wavelet) => {
    const { decLo, decHi } = WAVELET_FILTERS[wavelet]!;
    // discrete-wavelets correlates where pywt convolves, so it takes the filters reversed.
    const basis = { dec: { low: [...decLo].reverse(), high: [...decHi].reverse() }, rec: { low: [...decLo], high: [...decHi] } };
    const [approx, detail] = DWT.dwt(signal, basis, 'symmetric') as [number[], number[]];
    const ours = [downsamplingConvolution(signal, decLo, false), downsamplingConvolution(signal, decHi, false)];
    [approx, detail].forEach((expected, k) => {
      expect(ours[k]!.length).toBe(expected.length);
      expected.forEach((v, i) => expect(Math.abs(ours[k]![i]! - v)).toBeLessThan(1e-12));
    });
  });

  it('reflects more than once when the filter is longer than the signal', () => {
    const short = [1, -2, 3];
    const { decLo } = WAVELET_FILTERS.db10!;
    const [approx] = DWT.dwt(short, { dec: { low: [...decLo].reverse(), high: [...decLo].reverse() }, rec: { low: [...decLo], high: [...decLo] } }, 'symmetric') as [number[]];
    const ours = downsamplingConvolution(short, decLo, false);
    approx.forEach((v, i) => expect(ours[i]!).toBeCloseTo(v, 12));
  });

  it('rounds every step to float32 when asked, and to nothing otherwise', () => {
    const float32 = wavedec(signal, 'db4', 2, true);
    for (const c of float32) for (const v of c) expect(Math.fround(v)).toBe(v);
    const float64 = wavedec(signal, 'db4', 2, false);
    expect(float64.some((c) => c.some((v) => Math.fround(v) !== v))).toBe(true);
    // floor((N + F − 1)/2) per level: 77 → 42 → 24 with db4's 8 taps.
    expect(float64.map((c) => c.length)).toEqual([24, 24, 42]);
  });
});

describe('histogram entropy (numpy.histogram(density=True) then scipy.stats.entropy)', () => {
  it('is ln(bins used) for values spread evenly over the bins', () => {
    const even = Array.from({ length: 200 }, (_, i) => i);
    expect(histogramEntropy(even, false)).toBeCloseTo(Math.log(100), 12);
  });

  it('is 0 for a constant array (numpy widens the range by ±0.5 and every value lands in one bin)', () => {
    expect(histogramEntropy([2, 2, 2, 2], true)).toBe(0);
  });
});
