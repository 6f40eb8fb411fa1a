// FFT analysis of implementation versions 2-4 (dsp-reference §5.4): time-domain statistics, the
// max-hold spectrum, its skewness and kurtosis (v4), log, then the bins the filter leaves
// (commit 66dee58's rule: the HEAD behaviour).
import { rfftMagnitude } from '../fft';
import { DspConfigurationError } from '../processingBlock';
import { kurtosis, rms, skewness } from '../statistics';
import { kurtosis32, rms32, skewness32 } from './float32Statistics';
import type { FilterType } from './spectralParameters';
import { pyFloatString, pyRound } from './pythonFormat';

export interface SpectrumOptions {
  fs: number;
  fftLength: number;
  filterType: FilterType;
  filterCutoff: number;
  doLog: boolean;
  overlap: boolean;
  spectralStats: boolean;
  /** The signal is float32 (no decimation before): statistics round as numpy's float32 ones. */
  float32: boolean;
  suffix: string;
}

export interface SpectrumFeatures {
  features: number[];
  labels: string[];
  /** The spectrum after the log (when asked), all bins, for the graph. */
  spectrum: number[];
  frequencies: number[];
}

/**
 * `welch_max_hold`: element-wise maximum of |rfft|²/n over frames starting every n − n/2 (overlap)
 * or n samples while the start is ≤ the length; partial and empty trailing frames are zero-padded.
 */
export function welchMaxHold(x: ArrayLike<number>, n: number, overlap: boolean): Float64Array {
  const spec = new Float64Array(n / 2 + 1);
  const step = overlap ? n - Math.trunc(n / 2) : n;
  const frame = new Float64Array(n);
  for (let ix = 0; ix <= x.length; ix += step) {
    frame.fill(0);
    const end = Math.min(ix + n, x.length);
    for (let i = ix; i < end; i++) frame[i - ix] = x[i]!;
    const magnitudes = rfftMagnitude(frame, n);
    for (let k = 0; k < spec.length; k++) {
      const power = (magnitudes[k]! * magnitudes[k]!) / n;
      if (power > spec[k]!) spec[k] = power;
    }
  }
  return spec;
}

/** The FFT bins kept for a filter type and cut-off (the 66dee58 rule; DC never, Nyquist always). */
export function binRange(filterType: FilterType, cutoff: number, fs: number, n: number): { start: number; stop: number } {
  const fc = cutoff > fs / 2 ? fs / 2 : cutoff;
  const bin = (fc * n) / fs;
  if (filterType === 'high') {
    const start = Math.trunc(bin - 0.5) + 1;
    return { start: start === 0 ? 1 : start, stop: Math.floor(n / 2) + 1 };
  }
  if (filterType === 'low') return { start: 1, stop: Math.trunc(bin + 0.5) + 1 };
  return { start: 1, stop: Math.floor(n / 2) + 1 };
}

export function spectrumFeatures(x: ArrayLike<number>, o: SpectrumOptions): SpectrumFeatures {
  const features = o.float32 ? [rms32(x), skewness32(x), kurtosis32(x)] : [rms(x), skewness(x), kurtosis(x)];
  const labels = ['RMS', 'Skewness', 'Kurtosis'].map((l) => l + o.suffix);
  const spec = welchMaxHold(x, o.fftLength, o.overlap);
  if (o.spectralStats) {
    features.push(skewness(spec), kurtosis(spec));
    labels.push(`Spectral Skewness${o.suffix}`, `Spectral Kurtosis${o.suffix}`);
  }
  // numpy rfftfreq: k · 1/(n·(1/fs))
  const spacing = 1 / (o.fftLength * (1 / o.fs));
  const frequencies = Array.from(spec, (_, k) => k * spacing);
  const spectrum = o.doLog ? Array.from(spec, (v) => Math.log10(v === 0 ? 1e-10 : v)) : Array.from(spec);
  const { start, stop } = binRange(o.filterType, o.filterCutoff, o.fs, o.fftLength);
  for (let i = start; i < stop; i++) {
    features.push(spectrum[i]!);
    const from = pyFloatString(pyRound(frequencies[i]! - spacing / 2, 2));
    const to = pyFloatString(pyRound(frequencies[i]! + spacing / 2, 2));
    labels.push(`Spectral Power ${from} - ${to} Hz`);
  }
  if (stop <= start) throw new DspConfigurationError(`"filter-cutoff": cut-off frequency masked all FFT bins (${o.filterCutoff} Hz ${o.filterType}-pass at ${o.fs} Hz with FFT length ${o.fftLength})`);
  return { features, labels, spectrum, frequencies };
}
