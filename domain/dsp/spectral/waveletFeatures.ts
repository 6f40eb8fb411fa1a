// Wavelet analysis of implementation versions 3 and 4 (dsp-reference §5.5): pywt.wavedec in its
// default 'symmetric' mode, then 14 statistics per coefficient array. The transform is the
// discrete-wavelets package (it mirrors pywt's DWT and boundary modes), fed pywt's own filters
// (waveletFilters.ts) since it ships only the Daubechies family. pywt works in float32 on the
// block's float32 signal, so each level's coefficients are rounded to float32 before the next.
import DWT from 'discrete-wavelets';
import { kurtosis, mean, populationStd, rms, skewness } from '../statistics';
import { WAVELET_FILTERS } from './waveletFilters';

const f32 = Math.fround;

type Basis = { dec: { low: number[]; high: number[] }; rec: { low: number[]; high: number[] } };
const bases = new Map<string, Basis>();

/** discrete-wavelets correlates where pywt convolves: it takes the decomposition filters reversed. */
function basisOf(wavelet: string): Basis {
  let basis = bases.get(wavelet);
  if (!basis) {
    const filters = WAVELET_FILTERS[wavelet];
    if (!filters) throw new RangeError(`unknown wavelet ${wavelet}`);
    // Only decomposition is used; the reconstruction pair is required by the type, not read.
    basis = { dec: { low: [...filters.decLo].reverse(), high: [...filters.decHi].reverse() }, rec: { low: [...filters.decLo], high: [...filters.decHi] } };
    bases.set(wavelet, basis);
  }
  return basis;
}

/** pywt.wavedec(x, wavelet, level) on float32 data: [cA_L, cD_L, …, cD_1]. */
export function wavedec(x: ArrayLike<number>, wavelet: string, level: number): Float64Array[] {
  const basis = basisOf(wavelet);
  let approx: number[] = Array.from(x, f32);
  const details: Float64Array[] = [];
  for (let l = 0; l < level; l++) {
    const [a, d] = DWT.dwt(approx, basis, 'symmetric') as [number[], number[]];
    details.unshift(Float64Array.from(d, f32));
    approx = a.map(f32);
  }
  return [Float64Array.from(approx), ...details];
}

/** The smallest window the reference accepts for a level: 32·2^level samples per axis. */
export const waveletMinimumLength = (level: number): number => 32 * 2 ** level;

/**
 * numpy.histogram(c, bins=100, density=True) then scipy.stats.entropy, with the float32 bin edges
 * numpy uses for float32 data so values on an edge land in the same bin.
 */
export function histogramEntropy(c: ArrayLike<number>): number {
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
  const delta = f32(last - first);
  const step = delta / bins;
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

/** The sample-standard variance (ddof 1), as np.var(x, ddof=1). */
function sampleVariance(c: ArrayLike<number>): number {
  const m = mean(c);
  let sum = 0;
  for (let i = 0; i < c.length; i++) sum += (c[i]! - m) ** 2;
  return sum / (c.length - 1);
}

export const WAVELET_FEATURE_NAMES = ['entropy', 'zcross', 'mcross', 'n5', 'n25', 'n75', 'n95', 'median', 'mean', 'std', 'var', 'rms', 'skew', 'kurtosis'] as const;

/** The 14 features of one coefficient array, in the reference's order. */
export function coefficientFeatures(c: Float64Array): number[] {
  const entropy = histogramEntropy(c);
  const zcross = crossings(c, 0);
  const mcross = crossings(c, f32(mean(c)));
  const sorted = Float64Array.from(c).sort();
  const percentile = (p: number) => sorted[Math.trunc(((sorted.length - 1) * p) / 100 + 0.5)]!;
  const r = f32(rms(c));
  const resolution = 1e-6;
  return [
    entropy,
    zcross,
    mcross,
    percentile(5),
    percentile(25),
    percentile(75),
    percentile(95),
    percentile(50),
    f32(mean(c)),
    f32(populationStd(c)),
    f32(sampleVariance(c)),
    r,
    r === 0 ? 0 : f32(skewness(c, { resolution })),
    r === 0 ? 0 : f32(kurtosis(c, { resolution })),
  ];
}

export interface WaveletAxisFeatures {
  features: number[];
  labels: string[];
  approximation: Float64Array;
}

export function waveletFeatures(x: ArrayLike<number>, wavelet: string, level: number): WaveletAxisFeatures {
  const coefficients = wavedec(x, wavelet, level);
  const features: number[] = [];
  const labels: string[] = [];
  coefficients.forEach((c, i) => {
    features.push(...coefficientFeatures(c));
    labels.push(...WAVELET_FEATURE_NAMES.map((name) => `L${i}-${name}`));
  });
  return { features, labels, approximation: coefficients[0]! };
}
