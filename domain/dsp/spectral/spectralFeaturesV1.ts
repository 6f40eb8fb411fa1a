// Implementation version 1, the older "spectral features" (dsp-reference §5.6): RMS, the highest
// peaks of the amplitude spectrum as PeakUtils 1.3.2 finds them, and the mean periodogram power
// between consecutive edges, divided by 10.
import { rfft } from '../fft';
import { rms } from '../statistics';

/** 2/N·|fft(x, N)[k]| for k < N/2, and the frequency axis linspace(0, fs/2, N/2) (spacing fs/(N−2)). */
function amplitudeSpectrum(x: ArrayLike<number>, n: number, fs: number): { amplitudes: Float64Array; frequencies: Float64Array } {
  const bins = rfft(x, n);
  const half = Math.floor(n / 2);
  const amplitudes = new Float64Array(half);
  for (let k = 0; k < half; k++) amplitudes[k] = (2 / n) * Math.hypot(bins[2 * k]!, bins[2 * k + 1]!);
  const stop = 1 / (2 * (1 / fs));
  const frequencies = new Float64Array(half);
  const div = half - 1;
  for (let k = 0; k < half; k++) frequencies[k] = div > 0 ? k * (stop / div) : 0;
  if (half > 1) frequencies[half - 1] = stop;
  return { amplitudes, frequencies };
}

/**
 * peakutils.indexes(y, thres=0) of PeakUtils 1.3.2: strict local maxima of the first difference
 * after flat runs take their neighbours' slopes, and above min(y).
 */
export function peakIndexes(y: ArrayLike<number>): number[] {
  const n = y.length;
  if (n < 2) return [];
  let min = Infinity;
  for (let i = 0; i < n; i++) min = Math.min(min, y[i]!);
  const dy = new Float64Array(n - 1);
  for (let i = 0; i < n - 1; i++) dy[i] = y[i + 1]! - y[i]!;
  const zeros: number[] = [];
  dy.forEach((d, i) => {
    if (d === 0) zeros.push(i);
  });
  if (zeros.length === n - 1) return [];
  if (zeros.length > 0) {
    const plateaus: number[][] = [];
    let current: number[] = [zeros[0]!];
    for (let i = 1; i < zeros.length; i++) {
      if (zeros[i]! - zeros[i - 1]! !== 1) {
        plateaus.push(current);
        current = [];
      }
      current.push(zeros[i]!);
    }
    plateaus.push(current);
    if (plateaus[0]![0] === 0) {
      const run = plateaus.shift()!;
      const value = dy[run[run.length - 1]! + 1]!;
      for (const i of run) dy[i] = value;
    }
    if (plateaus.length > 0 && plateaus[plateaus.length - 1]!.at(-1) === dy.length - 1) {
      const run = plateaus.pop()!;
      const value = dy[run[0]! - 1]!;
      for (const i of run) dy[i] = value;
    }
    for (const run of plateaus) {
      const sorted = [...run].sort((a, b) => a - b);
      const mid = sorted.length / 2;
      const median = sorted.length % 2 === 1 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
      const left = dy[run[0]! - 1]!;
      const right = dy[run[run.length - 1]! + 1]!;
      for (const i of run) dy[i] = i < median ? left : right;
    }
  }
  const peaks: number[] = [];
  for (let i = 0; i < n; i++) {
    const after = i < n - 1 ? dy[i]! : 0;
    const before = i > 0 ? dy[i - 1]! : 0;
    if (after < 0 && before > 0 && y[i]! > min) peaks.push(i);
  }
  return peaks;
}

/**
 * scipy.signal.periodogram(x, fs, nfft): boxcar, constant detrend, density, one-sided. A signal
 * longer than nfft is cut to its first nfft samples; a shorter one is zero-padded, scaled by its
 * own length.
 */
export function periodogram(x: ArrayLike<number>, fs: number, nfft: number): { frequencies: Float64Array; power: Float64Array } {
  const segment = Array.from({ length: Math.min(x.length, nfft) }, (_, i) => x[i]!);
  const m = segment.reduce((s, v) => s + v, 0) / segment.length;
  const detrended = segment.map((v) => v - m);
  const bins = rfft(detrended, nfft);
  const scale = 1 / (fs * segment.length);
  const count = Math.floor(nfft / 2) + 1;
  const power = new Float64Array(count);
  const frequencies = new Float64Array(count);
  const spacing = 1 / (nfft * (1 / fs));
  for (let k = 0; k < count; k++) {
    power[k] = (bins[2 * k]! ** 2 + bins[2 * k + 1]! ** 2) * scale;
    // One-sided: every bin but DC (and Nyquist, for an even length) carries its mirror's power.
    if (k > 0 && !(nfft % 2 === 0 && k === count - 1)) power[k]! *= 2;
    frequencies[k] = k * spacing;
  }
  return { frequencies, power };
}

export interface V1Options {
  fs: number;
  fftLength: number;
  peaksCount: number;
  peaksThreshold: number;
  edges: readonly number[];
}

export function spectralFeaturesV1(x: ArrayLike<number>, o: V1Options): { features: number[]; periodogram: { frequencies: Float64Array; power: Float64Array } } {
  const features = [Math.fround(rms(x))];
  const { amplitudes, frequencies } = amplitudeSpectrum(x, o.fftLength, o.fs);
  const peaks = peakIndexes(amplitudes)
    .filter((i) => !(amplitudes[i]! < o.peaksThreshold))
    .map((i) => [frequencies[i]!, amplitudes[i]!] as const)
    // Array.prototype.sort is stable, as Python's sorted(reverse=True) is.
    .sort((a, b) => b[1] - a[1])
    .slice(0, o.peaksCount);
  for (let k = 0; k < o.peaksCount; k++) features.push(...(peaks[k] ?? [0, 0]));
  const spectrum = periodogram(x, o.fs, o.fftLength);
  for (let k = 0; k < o.edges.length - 1; k++) {
    let sum = 0;
    let total = 0;
    spectrum.frequencies.forEach((f, i) => {
      if (f >= o.edges[k]! && f < o.edges[k + 1]!) {
        sum += spectrum.power[i]!;
        total += 1;
      }
    });
    features.push((total === 0 ? 0 : sum / total) / 10);
  }
  return { features, periodogram: spectrum };
}
