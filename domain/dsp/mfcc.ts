// mfcc, "Audio (MFCC)" (dsp-reference 7): cepstral coefficients of one audio axis, with circular
// pre-emphasis of the raw samples and sliding mean/variance normalisation.
import { frameMajorMap, imageGraph, MFCC_GRAPH } from './graphs/audioGraphs';
import { DspConfigurationError, type ProcessingBlock } from './processingBlock';
import { checkFftLength, checkVersion, intParam, numberParam, singleAxisSignal } from './speech/blockParams';
import { cmvnw } from './speech/cmvnw';
import { mfccCore } from './speech/mfccCore';
import { preemphasis } from './speech/preemphasis';

export const mfccBlock: ProcessingBlock = {
  type: 'mfcc',
  implementationVersions: [1, 2, 3, 4],
  dimensionalityReduction: true,
  hasFeatureImportance: false,
  canNormalizeData: true,
  run(input, params, { implementationVersion: version, drawGraphs }) {
    checkVersion('mfcc', this.implementationVersions, version);
    const raw = singleAxisSignal('mfcc', input);
    const numFilters = intParam(params, 'num_filters', 32);
    if (numFilters < 2) throw new DspConfigurationError(`"num_filters" must be at least 2, got ${numFilters}`);
    const fftLength = intParam(params, 'fft_length', 256);
    checkFftLength(fftLength);
    const numCepstral = intParam(params, 'num_cepstral', 13);
    // The reference silently keeps fewer columns (and reports a fractional width); refusing is clearer.
    if (numCepstral < 1 || numCepstral > numFilters) throw new DspConfigurationError(`"num_cepstral" must be from 1 to "num_filters" (${numFilters}), got ${numCepstral}`);
    const winSize = intParam(params, 'win_size', 101);
    if (winSize !== 0 && (winSize < 0 || winSize % 2 !== 1)) throw new DspConfigurationError(`"win_size" must be odd (or 0 to disable normalization), got ${winSize}`);
    const preCof = numberParam(params, 'pre_cof', 0.98);
    const preShift = intParam(params, 'pre_shift', 1);

    const signal = preemphasis(raw, preCof, preShift);
    const { mel, coefficients } = mfccCore(
      signal,
      {
        version,
        frequency: input.frequency,
        frameLength: numberParam(params, 'frame_length', 0.02),
        frameStride: numberParam(params, 'frame_stride', 0.02),
        numFilters,
        fftLength,
        lowFrequency: intParam(params, 'low_frequency', 0),
        highFrequency: intParam(params, 'high_frequency', 0),
      },
      numCepstral,
    );
    const frames = mel.frames.count;
    const features = winSize > 0 ? cmvnw(coefficients, frames, numCepstral, winSize, true) : coefficients;
    return {
      features,
      labels: [],
      outputConfig: { type: 'spectrogram', shape: { width: frames, height: numCepstral } },
      fftUsed: [numFilters, fftLength],
      graphs: drawGraphs ? [imageGraph(MFCC_GRAPH, frameMajorMap(features, frames, numCepstral))] : [],
    };
  },
};
