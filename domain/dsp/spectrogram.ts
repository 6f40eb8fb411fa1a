// spectrogram (dsp-reference 8): the power spectrum of each frame of one axis. v1/v2 min-max scale
// the linear power over the whole window; v3/v4 map dB between the noise floor and +12 dB (v3 clips
// at 1 and rescales int16 input to [-1, 1]; v4 does neither).
import { frameMajorMap, imageGraph, SPECTROGRAM_GRAPH } from './graphs/audioGraphs';
import { DspConfigurationError, type ProcessingBlock } from './processingBlock';
import { checkFftLength, checkVersion, intParam, numberParam, singleAxisSignal } from './speech/blockParams';
import { checkFrameCount, framing } from './speech/frames';
import { framePowerSpectra } from './speech/powerSpectra';

export const spectrogramBlock: ProcessingBlock = {
  type: 'spectrogram',
  implementationVersions: [1, 2, 3, 4],
  dimensionalityReduction: true,
  hasFeatureImportance: false,
  canNormalizeData: true,
  run(input, params, { implementationVersion: version, drawGraphs }) {
    checkVersion('spectrogram', this.implementationVersions, version);
    const raw = singleAxisSignal('spectrogram', input);
    const fs = input.frequency;
    const fftLength = intParam(params, 'fft_length', 128);
    checkFftLength(fftLength);
    const frameLength = numberParam(params, 'frame_length', 0.02);
    const frameStride = numberParam(params, 'frame_stride', 0.01);
    if (frameLength < 4 / fs) throw new DspConfigurationError(`"frame_length" should be at least 4 samples (${4 / fs} s), got ${frameLength}`);
    if (frameStride < 4 / fs) throw new DspConfigurationError(`"frame_stride" should be at least 4 samples (${4 / fs} s), got ${frameStride}`);
    const noiseFloor = numberParam(params, 'noise_floor_db', -52);
    if (version >= 3 && noiseFloor === -12) throw new DspConfigurationError(`"noise_floor_db" cannot be -12 (it would divide by zero)`);

    const signal = version === 3 && outsideUnit(raw) ? scaledToUnit(raw) : raw;
    const frames = framing(version, signal.length, fs, frameLength, frameStride);
    checkFrameCount(frames);
    const spectra = framePowerSpectra(signal, frames, fftLength);
    const bins = fftLength / 2 + 1;
    const features = new Float64Array(frames.count * bins);
    spectra.forEach((row, f) => features.set(row, f * bins));
    if (version <= 2) minMaxScale(features);
    else {
      const top = version === 3 ? 1 : Number.POSITIVE_INFINITY;
      for (let i = 0; i < features.length; i++) {
        const db = 10 * Math.log10(Math.max(features[i]!, 1e-30));
        features[i] = Math.min(top, Math.max(0, (db - noiseFloor) / (-noiseFloor + 12)));
      }
    }
    return {
      features,
      labels: [],
      outputConfig: { type: 'spectrogram', shape: { width: frames.count, height: bins } },
      fftUsed: [fftLength],
      graphs: drawGraphs ? [imageGraph(SPECTROGRAM_GRAPH, frameMajorMap(features, frames.count, bins))] : [],
    };
  },
};

/** float32(x / 32768), as v3 rescales int16 audio (a plain loop: Float32Array.from with a map is slow). */
function scaledToUnit(x: ArrayLike<number>): Float32Array {
  const out = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = x[i]! / 32768;
  return out;
}

function outsideUnit(x: ArrayLike<number>): boolean {
  for (let i = 0; i < x.length; i++) if (x[i]! < -1 || x[i]! > 1) return true;
  return false;
}

/** Over the whole matrix; a flat spectrum gives 0/0, which the reference turns into 0. */
function minMaxScale(values: Float64Array): void {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  for (let i = 0; i < values.length; i++) {
    const v = (values[i]! - min) / (max - min);
    values[i] = Number.isNaN(v) ? 0 : v;
  }
}
