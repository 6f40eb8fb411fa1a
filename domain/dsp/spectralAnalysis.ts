// The spectral-analysis processing block (dsp-reference §5), implementation versions 1-4: per axis,
// scale, optional input decimation (v4), optional Butterworth filter, mean removal, then FFT
// features (v2-4), wavelet features (v3-4) or the older peaks-and-power features (v1).
// The reference runs in float32 until the FFT (its input is cast with dtype 'f' and its filter
// coefficients too); the same roundings are kept here so features land within §12's tolerances.
import { DspConfigurationError, type DspGraph, type DspInput, type DspParams, type DspResult, type ProcessingBlock } from './processingBlock';
import { butterworthStage } from './spectral/butterworthStage';
import { decimateSimple, decimationStages } from './spectral/decimate';
import { spectrumFeatures } from './spectral/fftFeatures';
import type { SosSection } from './spectral/iirDesign';
import { sosfilt } from './spectral/sosFilter';
import { spectralFeaturesV1 } from './spectral/spectralFeaturesV1';
import { readSpectralParameters, type SpectralParameters } from './spectral/spectralParameters';
import { waveletFeatures, waveletMinimumLength } from './spectral/waveletFeatures';
import { mean32 } from './spectral/float32Statistics';
import { mean } from './statistics';
import { pyFloatString } from './spectral/pythonFormat';

const f32 = Math.fround;

/** One axis after §5.3: scaled, decimated, filtered, mean removed. */
interface PreparedAxis {
  values: Float64Array;
  /** True while the signal is still float32 (no decimation stage turned it into float64). */
  float32: boolean;
  fs: number;
}

function column(values: ArrayLike<number>, axes: number, axis: number): Float64Array {
  const n = values.length / axes;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = values[i * axes + axis]!;
  return out;
}

function prepareAxis(raw: Float64Array, p: SpectralParameters, fs: number, sos: SosSection[] | null): PreparedAxis {
  const scale = f32(p.scaleAxes);
  let x: Float64Array = raw.map((v) => f32(f32(v) * scale));
  let float32 = true;
  let rate = fs;
  for (const ratio of decimationStages(p.inputDecimationRatio)) {
    x = decimateSimple(x, ratio);
    float32 = false;
    rate /= ratio;
  }
  if (sos) x = sosfilt(sos, x, float32 ? 'float32' : 'float64');
  return { values: removeMean(x, float32), float32, fs: rate };
}

function removeMean(x: Float64Array, float32: boolean): Float64Array {
  if (float32) {
    const m = mean32(x);
    return x.map((v) => f32(v - m));
  }
  const m = mean(x);
  return x.map((v) => v - m);
}

function run(input: DspInput, params: DspParams, options: { implementationVersion: number; drawGraphs: boolean }): DspResult {
  const version = options.implementationVersion;
  const p = readSpectralParameters(params, version, input.frequency);
  const axes = input.axes.length;
  if (axes === 0) throw new DspConfigurationError('"axes": the spectral-analysis block needs at least one axis');
  if (input.values.length < 1) throw new DspConfigurationError('"features": input data must not be empty');
  if (input.values.length % axes !== 0) throw new DspConfigurationError(`"axes": ${input.values.length} values do not split into ${axes} axes`);
  for (let i = 0; i < input.values.length; i++) {
    if (!Number.isFinite(input.values[i]!)) throw new DspConfigurationError(`"features": value ${i} is not a finite number`);
  }
  if (!(input.frequency > 0)) throw new DspConfigurationError(`"frequency": the spectral-analysis block needs a sampling frequency above 0 Hz, got ${input.frequency}`);

  const decimatedFs = input.frequency / p.inputDecimationRatio;
  const sos = butterworthStage(p, decimatedFs);
  const wavelet = version >= 3 && p.analysisType === 'Wavelet';

  const features: number[] = [];
  let labels: string[] = [];
  const lowFrequencyFeatures: number[] = [];
  let lowFrequencyLabels: string[] = [];
  const afterFilter: Record<string, number[]> = {};
  const spectra: Record<string, number[]> = {};
  let spectrumFrequencies: number[] = [];
  let lastFs = decimatedFs;
  let afterFilterLength = 0;

  for (let axis = 0; axis < axes; axis++) {
    const name = input.axes[axis]!;
    const prepared = prepareAxis(column(input.values, axes, axis), p, input.frequency, sos);
    const x = prepared.values;
    lastFs = prepared.fs;
    afterFilterLength = x.length;
    if (options.drawGraphs) afterFilter[name] = Array.from(x);

    if (wavelet) {
      const minimum = waveletMinimumLength(p.waveletLevel);
      if (minimum > x.length) {
        const windowMs = Math.ceil((minimum / prepared.fs) * 1000);
        throw new DspConfigurationError(`"wavelet-level": wavelet decomposition level is too high, please increase window size to at least ${windowMs} ms, or reduce level`);
      }
      const result = waveletFeatures(x, p.wavelet, p.waveletLevel, prepared.float32);
      features.push(...result.features);
      if (axis === 0) labels.push(...result.labels);
      if (options.drawGraphs) spectra[name] = Array.from(result.approximation);
    } else if (version === 1) {
      const result = spectralFeaturesV1(x, {
        fs: prepared.fs,
        fftLength: p.fftLength,
        peaksCount: p.spectralPeaksCount,
        peaksThreshold: p.spectralPeaksThreshold,
        edges: p.spectralPowerEdges,
      });
      features.push(...result.features);
      labels = ['RMS'];
      if (options.drawGraphs) {
        spectra[name] = Array.from(result.periodogram.power.subarray(1));
        spectrumFrequencies = Array.from(result.periodogram.frequencies.subarray(1));
      }
    } else {
      const common = { fftLength: p.fftLength, filterType: p.filterType, filterCutoff: p.filterCutoff, doLog: p.doLog, overlap: p.doFftOverlap };
      const main = spectrumFeatures(x, { ...common, fs: prepared.fs, spectralStats: version >= 4, float32: prepared.float32, suffix: '' });
      features.push(...main.features);
      labels = main.labels;
      spectra[name] = main.spectrum;
      spectrumFrequencies = main.frequencies;
      if (version >= 4 && p.extraLowFreq) {
        const decimated = decimateSimple(x, 10);
        if (decimated.length < p.fftLength / 2) {
          throw new DspConfigurationError(`"extra-low-freq": extra low frequency requires at least ${pyFloatString((p.fftLength / 2) * 10)} samples`);
        }
        const low = spectrumFeatures(removeMean(decimated, false), { ...common, fs: prepared.fs / 10, spectralStats: true, float32: false, suffix: ' LF' });
        lowFrequencyFeatures.push(...low.features);
        if (axis === 0) lowFrequencyLabels = low.labels;
      }
    }
  }

  features.push(...lowFrequencyFeatures);
  labels.push(...lowFrequencyLabels);
  if (version === 1) {
    for (let k = 1; k <= p.spectralPeaksCount; k++) labels.push(`Peak ${k} Freq`, `Peak ${k} Height`);
    for (let k = 0; k < p.spectralPowerEdges.length - 1; k++) {
      labels.push(`Spectral Power ${pyFloatString(p.spectralPowerEdges[k]!)} - ${pyFloatString(p.spectralPowerEdges[k + 1]!)} Hz`);
    }
  }

  const graphs = options.drawGraphs ? drawGraphs({ p, version, sos, fs: lastFs, afterFilter, afterFilterLength, spectra, spectrumFrequencies, wavelet }) : [];
  return { features, labels, outputConfig: { type: 'flat', shape: { width: features.length } }, fftUsed: [p.fftLength], graphs };
}

interface GraphInputs {
  p: SpectralParameters;
  version: number;
  sos: SosSection[] | null;
  fs: number;
  afterFilter: Record<string, number[]>;
  afterFilterLength: number;
  spectra: Record<string, number[]>;
  spectrumFrequencies: number[];
  wavelet: boolean;
}

/** |H| in dB at 512 frequencies from 0 to Nyquist (scipy's sosfreqz default), zeros as 1e-10. */
function filterResponse(sos: SosSection[], fs: number): { db: number[]; hz: number[] } {
  const db: number[] = [];
  const hz: number[] = [];
  for (let i = 0; i < 512; i++) {
    const w = (Math.PI * i) / 512;
    let re = 1;
    let im = 0;
    for (const [b0, b1, b2, a0, a1, a2] of sos) {
      // H_s(e^{jw}) = (b0 + b1 e^{-jw} + b2 e^{-2jw}) / (a0 + a1 e^{-jw} + a2 e^{-2jw})
      const nr = b0 + b1 * Math.cos(w) + b2 * Math.cos(2 * w);
      const ni = -(b1 * Math.sin(w) + b2 * Math.sin(2 * w));
      const dr = a0 + a1 * Math.cos(w) + a2 * Math.cos(2 * w);
      const di = -(a1 * Math.sin(w) + a2 * Math.sin(2 * w));
      const den = dr * dr + di * di;
      const hr = (nr * dr + ni * di) / den;
      const hi = (ni * dr - nr * di) / den;
      [re, im] = [re * hr - im * hi, re * hi + im * hr];
    }
    const magnitude = Math.hypot(re, im);
    db.push(20 * Math.log10(magnitude === 0 ? 1e-10 : magnitude));
    hz.push((i * fs) / 2 / 512);
  }
  return { db, hz };
}

function drawGraphs(g: GraphInputs): DspGraph[] {
  const graphs: DspGraph[] = [];
  if (g.sos) {
    const { db, hz } = filterResponse(g.sos, g.fs);
    graphs.push({ name: 'Filter response', type: 'linear', X: { 'Filter response': db }, y: hz });
  }
  graphs.push({
    name: 'After filter',
    type: 'linear',
    X: g.afterFilter,
    y: Array.from({ length: g.afterFilterLength }, (_, i) => (i * 1000) / g.fs),
    suggestedYMin: -1,
    suggestedYMax: 1,
  });
  if (g.wavelet) {
    const length = Object.values(g.spectra)[0]?.length ?? 0;
    const totalMs = (g.afterFilterLength / g.fs) * 1000;
    graphs.push({ name: 'Wavelet Approximation', type: 'linear', X: g.spectra, y: Array.from({ length }, (_, i) => Math.trunc((i / length) * totalMs)) });
  } else {
    const units = g.version === 1 || !g.p.doLog ? 'linear' : 'log';
    graphs.push({ name: `Spectral power (${units})`, type: 'linear', X: g.spectra, y: g.spectrumFrequencies, suggestedYMin: 0, suggestedXMin: 0, suggestedXMax: g.fs / 2 });
  }
  return graphs;
}

export const spectralAnalysisBlock: ProcessingBlock = {
  type: 'spectral-analysis',
  implementationVersions: [1, 2, 3, 4],
  dimensionalityReduction: true,
  hasFeatureImportance: true,
  canNormalizeData: true,
  run,
};
