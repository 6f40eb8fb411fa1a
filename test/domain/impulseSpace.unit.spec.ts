import { describe, expect, it } from 'vitest';
import { impulseSpace, type ImpulseForSpace } from '../../domain/optimize/impulseSpace';
import { randomTrials, spaceSize, trialProblem } from '../../domain/optimize/searchSpace';
import { DEFAULT_KERAS_SETTINGS } from '../../domain/learn/kerasSettings';

const motion: ImpulseForSpace = {
  input: { windowSizeMs: 1000, windowIncreaseMs: 250, frequencyHz: 100 },
  dsp: { type: 'spectral-analysis', config: { 'fft-length': '32', 'scale-axes': '1' } },
  learn: { type: 'keras', settings: { ...DEFAULT_KERAS_SETTINGS, learningRate: 0.005, trainingCycles: 40 } },
};

describe('the space around a project\'s impulse', () => {
  it('varies the window, the DSP block\'s main parameter and the model around what the impulse has', () => {
    expect(impulseSpace(motion, 30)).toEqual({
      inputBlocks: [{ type: 'time-series', windows: [{ windowSizeMs: 1000, windowIncreaseMs: 250 }, { windowSizeMs: 500, windowIncreaseMs: 125 }, { windowSizeMs: 2000, windowIncreaseMs: 500 }] }],
      dspBlocks: [{ type: 'spectral-analysis', parameters: [{ name: 'fft-length', values: ['32', '16', '64', '128'] }, { name: 'scale-axes', values: ['1'] }] }],
      learnBlocks: [{ blocks: [{ type: 'keras', denseStacks: [{ neurons: [20, 10] }, { neurons: [10, 5] }, { neurons: [40, 20] }], learningRates: [0.005, 0.001, 0.025], trainingCycles: [30], batchSizes: [32] }] }],
    });
  });

  it('holds the current impulse, and every trial drawn from it can run', () => {
    const space = impulseSpace(motion, 30);
    const trials = randomTrials([space], 1000, 5, 100);
    expect(trials).toHaveLength(spaceSize([space]));
    expect(trials.every((t) => trialProblem(t, 100) === undefined)).toBe(true);
    expect(trials).toContainEqual({ window: { windowSizeMs: 1000, windowIncreaseMs: 250 }, dsp: { type: 'spectral-analysis', config: { 'fft-length': '32', 'scale-axes': '1' } }, learn: { type: 'keras', denseLayers: [20, 10], learningRate: 0.005, trainingCycles: 30, batchSize: 32 } });
  });

  it('leaves out a window the saved config cannot run on, and values refused for the windows left', () => {
    // Audio at 16 kHz, frames of 20 ms every 2 ms: 1 s holds 491 frames, 2 s more than the 500 allowed.
    const audio: ImpulseForSpace = {
      input: { windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 16000 },
      dsp: { type: 'mfe', config: { frame_length: '0.02', frame_stride: '0.002' } },
      learn: { type: 'keras', settings: DEFAULT_KERAS_SETTINGS },
    };
    const space = impulseSpace(audio, 30);
    expect(space.inputBlocks[0]!.windows.map((w) => w.windowSizeMs)).toEqual([1000, 500]);
    expect(space.dspBlocks[0]!.parameters.find((p) => p.name === 'frame_stride')!.values).toEqual(['0.002', '0.01', '0.02', '0.04']);
    expect(randomTrials([space], 1000, 1, 16000).every((t) => trialProblem(t, 16000) === undefined)).toBe(true);
  });

  it('searches dense stacks of the default shape when the impulse\'s model is not only dense layers', () => {
    const conv: ImpulseForSpace = { ...motion, learn: { type: 'keras-regression', settings: { ...DEFAULT_KERAS_SETTINGS, visualLayers: [{ type: 'reshape', columns: 2 }, { type: 'conv1d', neurons: 8, kernelSize: 3, stack: 1 }, { type: 'flatten' }] } } };
    expect(impulseSpace(conv, 30).learnBlocks[0]!.blocks[0]).toMatchObject({ type: 'keras-regression', denseStacks: [{ neurons: [20, 10] }, { neurons: [10, 5] }, { neurons: [40, 20] }] });
  });
});
