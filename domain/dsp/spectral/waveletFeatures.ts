// Wavelet analysis of implementation versions 3 and 4 (dsp-reference §5.5): pywt.wavedec in its
// default 'symmetric' mode, then 14 statistics per coefficient array. The transform is the
// DWT of dwt.ts with pywt's own filters (waveletFilters.ts). pywt works in float32 on the block's
// float32 signal, and numpy's statistics of the coefficients round as float32
// (float32Statistics.ts); after an input decimation the signal, and so everything here, is float64.
import { downsamplingConvolution } from './dwt';
import { kurtosis, mean, populationStd, rms, skewness } from '../statistics';
import { kurtosis32, mean32, rms32, skewness32, std32, variance32 } from './float32Statistics';
import { WAVELET_FILTERS } from './waveletFilters';


/**
 * pywt's float32 filters: its C tables cast to float, except the coiflets, whose table holds the
 * filter divided by √2 and is multiplied by √2 in float when the wavelet is built.
 */
function float32Filters(wavelet: string): { decLo: readonly number[]; decHi: readonly number[] } | undefined {
  const filters = WAVELET_FILTERS[wavelet];
  if (!filters || !wavelet.startsWith('coif')) return filters;
  const sqrt2 = Math.fround(Math.SQRT2);
  const rebuild = (h: readonly number[]) => h.map((v) => Math.fround(Math.fround(v / Math.SQRT2) * sqrt2));
  return { decLo: rebuild(filters.decLo), decHi: rebuild(filters.decHi) };
}

/** pywt.wavedec(x, wavelet, level): [cA_L, cD_L, …, cD_1], in float32 for float32 data. */
export function wavedec(x: ArrayLike<number>, wavelet: string, level: number, float32: boolean): Float64Array[] {
  const filters = float32 ? float32Filters(wavelet) : WAVELET_FILTERS[wavelet];
  if (!filters) throw new RangeError(`unknown wavelet ${wavelet}`);
  let approx: Float64Array = Float64Array.from(x, float32 ? Math.fround : (v) => v);
  const details: Float64Array[] = [];
  for (let l = 0; l < level; l++) {
    details.unshift(downsamplingConvolution(approx, filters.decHi, float32));
    approx = downsamplingConvolution(approx, filters.decLo, float32);
  }
  return [approx, ...details];
}

/** The smallest window the reference accepts for a level: 32·2^level samples per axis. */
export const waveletMinimumLength = (level: number): number => 32 * 2 ** level;

/**
 * numpy.histogram(c, bins=100, density=True) then scipy.stats.entropy, with the float32 bin edges
 * and index arithmetic numpy uses for float32 data so values on an edge land in the same bin.
 */
export function histogramEntropy(c: ArrayLike<number>, float32: boolean): number {
  const f32 = float32 ? Math.fround : (v: number) => v;
  const bins = 100;
  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < c.length; i++) {
    first = Math.min(first, c[i]!);
    last = Math.max(last, c[i]!);
  }
  if (first === last) {
    first -= 0.5;
    last += 0.5;
  }
  // Edges: np.linspace in float64, cast to float32 (checked against np.histogram_bin_edges);
  // bin indices: float32 arithmetic on the float32 range.
  const step = (last - first) / bins;
  const delta = f32(last - first);
  const edges = new Float64Array(bins + 1);
  for (let i = 0; i < bins; i++) edges[i] = f32(i * step + first);
  edges[bins] = f32(last);
  const counts = new Float64Array(bins);
  for (let i = 0; i < c.length; i++) {
    const v = f32(c[i]!);
    let index = Math.trunc(f32(f32(f32(v - first) / delta) * bins));
    if (index === bins) index -= 1;
    if (v < edges[index]!) index -= 1;
    if (v >= edges[index + 1]! && index !== bins - 1) index += 1;
    counts[index]! += 1;
  }
  const density = Array.from(counts, (n, i) => n / f32(edges[i + 1]! - edges[i]!) / c.length);
  const total = density.reduce((s, v) => s + v, 0);
  let entropy = 0;
  for (const d of density) {
    const p = d / total;
    if (p > 0) entropy -= p * Math.log(p);
  }
  return entropy;
}

function crossings(c: ArrayLike<number>, threshold: number): number {
  let count = 0;
  for (let i = 1; i < c.length; i++) if (c[i - 1]! > threshold !== c[i]! > threshold) count += 1;
  return count / c.length;
}

interface Moments {
  mean(c: ArrayLike<number>): number;
  std(c: ArrayLike<number>): number;
  /** ddof 1, as np.var(c, ddof=1). */
  sampleVariance(c: ArrayLike<number>): number;
  rms(c: ArrayLike<number>): number;
  skew(c: ArrayLike<number>): number;
  kurtosis(c: ArrayLike<number>): number;
}

const FLOAT32: Moments = { mean: mean32, std: std32, sampleVariance: (c) => variance32(c, 1), rms: rms32, skew: skewness32, kurtosis: kurtosis32 };

const FLOAT64: Moments = {
  mean,
  std: populationStd,
  sampleVariance(c) {
    const m = mean(c);
    let sum = 0;
    for (let i = 0; i < c.length; i++) sum += (c[i]! - m) ** 2;
    return sum / (c.length - 1);
  },
  rms,
  skew: skewness,
  kurtosis,
};

export const WAVELET_FEATURE_NAMES = ['entropy', 'zcross', 'mcross', 'n5', 'n25', 'n75', 'n95', 'median', 'mean', 'std', 'var', 'rms', 'skew', 'kurtosis'] as const;

/** The 14 features of one coefficient array, in the reference's order. */
export function coefficientFeatures(c: Float64Array, float32: boolean): number[] {
  const stats = float32 ? FLOAT32 : FLOAT64;
  const entropy = histogramEntropy(c, float32);
  const zcross = crossings(c, 0);
  const mcross = crossings(c, stats.mean(c));
  const sorted = Float64Array.from(c).sort();
  const percentile = (p: number) => sorted[Math.trunc(((sorted.length - 1) * p) / 100 + 0.5)]!;
  // The reference sorts the array in place before these statistics, which changes numpy's
  // pairwise summation order and so their last float32 bits.
  const r = stats.rms(sorted);
  return [
    entropy,
    zcross,
    mcross,
    percentile(5),
    percentile(25),
    percentile(75),
    percentile(95),
    percentile(50),
    stats.mean(sorted),
    stats.std(sorted),
    stats.sampleVariance(sorted),
    r,
    r === 0 ? 0 : stats.skew(sorted),
    r === 0 ? 0 : stats.kurtosis(sorted),
  ];
}

export interface WaveletAxisFeatures {
  features: number[];
  labels: string[];
  approximation: Float64Array;
}

export function waveletFeatures(x: ArrayLike<number>, wavelet: string, level: number, float32: boolean): WaveletAxisFeatures {
  const coefficients = wavedec(x, wavelet, level, float32);
  const features: number[] = [];
  const labels: string[] = [];
  coefficients.forEach((c, i) => {
    features.push(...coefficientFeatures(c, float32));
    labels.push(...WAVELET_FEATURE_NAMES.map((name) => `L${i}-${name}`));
  });
  return { features, labels, approximation: coefficients[0]! };
}
