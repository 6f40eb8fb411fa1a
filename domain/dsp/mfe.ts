// mfe, "Audio (MFE)" (dsp-reference 6): mel-filterbank energies of one audio axis as a spectrogram.
// v1/v2: linear energies, sliding mean normalisation, min-max scaled. v3/v4: float32 [-1, 1] input
// with pre-emphasis, dB between the noise floor and +12 dB, quantised to 1/256.
import { filterbankMap, frameMajorMap, FILTERBANK_GRAPH, imageGraph, MFE_GRAPH } from './graphs/audioGraphs';
import { DspConfigurationError, type ProcessingBlock } from './processingBlock';
import { checkFftLength, checkVersion, intParam, numberParam, singleAxisSignal } from './speech/blockParams';
import { cmvnw } from './speech/cmvnw';
import { melEnergies } from './speech/melEnergies';
import { scaledPreemphasisFloat32 } from './speech/preemphasis';

export const mfeBlock: ProcessingBlock = {
  type: 'mfe',
  implementationVersions: [1, 2, 3, 4],
  dimensionalityReduction: true,
  hasFeatureImportance: false,
  canNormalizeData: true,
  run(input, params, { implementationVersion: version, drawGraphs }) {
    checkVersion('mfe', this.implementationVersions, version);
    const raw = singleAxisSignal('mfe', input);
    const numFilters = intParam(params, 'num_filters', 40);
    if (numFilters < 2) throw new DspConfigurationError(`"num_filters" must be at least 2, got ${numFilters}`);
    const fftLength = intParam(params, 'fft_length', 256);
    checkFftLength(fftLength);
    const winSize = intParam(params, 'win_size', 101);
    if (version <= 2 && (winSize < 1 || winSize % 2 !== 1)) throw new DspConfigurationError(`"win_size" must be odd, got ${winSize}`);
    const noiseFloor = numberParam(params, 'noise_floor_db', -52);
    if (version >= 3 && noiseFloor === -12) throw new DspConfigurationError(`"noise_floor_db" cannot be -12 (it would divide by zero)`);

    const signal = version >= 3 ? scaledPreemphasisFloat32(raw, 0.98, 1) : raw;
    const mel = melEnergies(signal, {
      version,
      frequency: input.frequency,
      frameLength: numberParam(params, 'frame_length', 0.02),
      frameStride: numberParam(params, 'frame_stride', 0.01),
      numFilters,
      fftLength,
      lowFrequency: intParam(params, 'low_frequency', 0),
      highFrequency: intParam(params, 'high_frequency', 0),
    });
    const frames = mel.frames.count;
    const features = version <= 2 ? minMaxScaled(cmvnw(mel.energies, frames, numFilters, winSize, false)) : quantisedDecibels(mel.energies, noiseFloor);
    return {
      features,
      labels: [],
      outputConfig: { type: 'spectrogram', shape: { width: frames, height: numFilters } },
      fftUsed: [fftLength],
      graphs: drawGraphs ? [imageGraph(MFE_GRAPH, frameMajorMap(features, frames, numFilters)), imageGraph(FILTERBANK_GRAPH, filterbankMap(mel.filterbank))] : [],
    };
  },
};

/** v1/v2: the whole matrix scaled to [0, 1] (in float32, as the reference's array is) unless its min or max is 0; NaN -> 0. */
function minMaxScaled(m: Float32Array): Float32Array {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const v of m) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const out = new Float32Array(m.length);
  const scale = min !== 0 && max !== 0;
  const range = Math.fround(max - min);
  for (let i = 0; i < m.length; i++) {
    const v = scale ? Math.fround(m[i]! - min) / range : m[i]!;
    out[i] = Number.isNaN(v) ? 0 : v;
  }
  return out;
}

/**
 * v3/v4: (dB − nf)/(−nf + 12) clipped to [0, 1], rounded half-even to 1/256 and cast to uint8.
 * The cast wraps 256 to 0, so the loudest bins (y ≥ 255.5/256) come out as 0: the reference does
 * this and the Studio's features, hence trained models, have it, so we match it (the C++ SDK clamps
 * to 1.0 instead; see test/domain/dsp/mfe.unit.spec.ts).
 */
function quantisedDecibels(energies: Float64Array, noiseFloor: number): Float32Array {
  const out = new Float32Array(energies.length);
  for (let i = 0; i < energies.length; i++) {
    const db = 10 * Math.log10(Math.max(energies[i]!, 1e-30));
    const y = Math.min(1, Math.max(0, (db - noiseFloor) / (-noiseFloor + 12)));
    const q = roundHalfEven(y * 256) & 255;
    out[i] = q / 256;
  }
  return out;
}

function roundHalfEven(v: number): number {
  const floor = Math.floor(v);
  const diff = v - floor;
  if (diff !== 0.5) return Math.round(v);
  return floor % 2 === 0 ? floor : floor + 1;
}
