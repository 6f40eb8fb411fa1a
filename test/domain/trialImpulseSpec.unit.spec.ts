import { describe, expect, it } from 'vitest';
import type { DspBlock, InputBlock } from '../../domain/impulse/impulseEvents';
import type { TrialImpulse } from '../../domain/optimize/searchSpace';
import { trialEstimates } from '../../domain/optimize/trialEstimates';
import { TRIAL_DSP_ID, trialImpulseSpec, trialTraining } from '../../domain/optimize/trialImpulse';
import { ConflictError } from '../../domain/shared/errors';

const createdAt = '2026-01-01T00:00:00.000Z';
const input: InputBlock = { id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['accX', 'accY', 'accZ'], windowSizeMs: 2000, windowIncreaseMs: 500, frequencyHz: 62.5, padZeros: true, createdAt };
const dsp: DspBlock = { id: 5, type: 'flatten', name: 'Flatten', title: 'Flatten', axes: ['accX', 'accY'], input: 1, implementationVersion: 1, createdAt };
const trial: TrialImpulse = {
  window: { windowSizeMs: 1000, windowIncreaseMs: 250 },
  dsp: { type: 'spectral-analysis', config: { 'fft-length': '32' } },
  learn: { type: 'keras', denseLayers: [40, 20, 10], learningRate: 0.002, trainingCycles: 50, batchSize: 16 },
};

describe('a trial\'s impulse on the project\'s', () => {
  it('takes the trial\'s window and DSP block, the project\'s input (frequency, zero padding) and DSP axes', () => {
    const spec = trialImpulseSpec(trial, { inputBlocks: [input], dspBlocks: [dsp] });
    expect(spec.inputBlocks).toEqual([{ ...input, windowSizeMs: 1000, windowIncreaseMs: 250 }]);
    expect(spec.dspBlocks).toEqual([expect.objectContaining({ id: TRIAL_DSP_ID, type: 'spectral-analysis', axes: ['accX', 'accY'], input: 1, implementationVersion: 4 })]);
    expect(spec.dspConfigs).toEqual({ [String(TRIAL_DSP_ID)]: { 'fft-length': '32' } });
  });

  it('uses the input block\'s axes when the project has no DSP block on it', () => {
    expect(trialImpulseSpec(trial, { inputBlocks: [input], dspBlocks: [] }).dspBlocks[0]!.axes).toEqual(['accX', 'accY', 'accZ']);
  });

  it('is refused, naming why, without a time-series input or with a DSP block the service does not have', () => {
    // The project's state, not the request, is what is wrong: a conflict (the add-trial route answers it as 409).
    expect(() => trialImpulseSpec(trial, { inputBlocks: [{ ...input, type: 'image' }], dspBlocks: [] })).toThrow(ConflictError);
    expect(() => trialImpulseSpec(trial, { inputBlocks: [{ ...input, type: 'image' }], dspBlocks: [] })).toThrow(/no time-series input block/);
    expect(() => trialImpulseSpec({ ...trial, dsp: { type: 'wavelets', config: {} } }, { inputBlocks: [input], dspBlocks: [dsp] })).toThrow(/"wavelets" is not a DSP block/);
  });
});

describe('a trial\'s keras settings', () => {
  it('are its dense stack, rate, batch size and cycles', () => {
    const { settings, mode } = trialTraining(trial, null);
    expect(mode).toBe('classification');
    expect(settings).toMatchObject({ visualLayers: [{ type: 'dense', neurons: 40 }, { type: 'dense', neurons: 20 }, { type: 'dense', neurons: 10 }], learningRate: 0.002, batchSize: 16, trainingCycles: 50 });
  });

  it('train for its hyperband round\'s cycles when it has a round', () => {
    expect(trialTraining(trial, { bracket: 1, round: 0, cycles: 3 }).settings.trainingCycles).toBe(3);
  });

  it('are a regression for keras-regression, and refused with a rate the training cannot take', () => {
    expect(trialTraining({ ...trial, learn: { ...trial.learn, type: 'keras-regression' } }, null).mode).toBe('regression');
    expect(() => trialTraining({ ...trial, learn: { ...trial.learn, learningRate: 0 } }, null)).toThrow(/learningRate must be above 0/);
  });
});

describe('a trial\'s estimates', () => {
  const model = { settings: trialTraining(trial, null).settings, featureCount: 33, classes: ['idle', 'wave'], mode: 'classification' as const };

  it('add the DSP block\'s window and features to the model\'s RAM, float32 each, and nothing to its ROM or latency', () => {
    const none = trialEstimates(model, 0, 'cortex-m4f-80mhz');
    const window = trialEstimates(model, 250, 'cortex-m4f-80mhz');
    expect(window.ramBytes - none.ramBytes).toBe(250 * 4);
    expect(window.romBytes).toBe(none.romBytes);
    expect(window.latencyMs).toBe(none.latencyMs);
  });

  it('are for the target device: a faster device, a lower latency; the same memory', () => {
    const slow = trialEstimates(model, 250, 'cortex-m4f-80mhz');
    const fast = trialEstimates({ ...model, settings: { ...model.settings, visualLayers: [{ type: 'dense', neurons: 400 }, { type: 'dense', neurons: 200 }] } }, 250, 'raspberry-pi-4');
    const bigSlow = trialEstimates({ ...model, settings: { ...model.settings, visualLayers: [{ type: 'dense', neurons: 400 }, { type: 'dense', neurons: 200 }] } }, 250, 'cortex-m4f-80mhz');
    expect(fast.latencyMs).toBeLessThan(bigSlow.latencyMs);
    expect(fast.ramBytes).toBe(bigSlow.ramBytes);
    expect(bigSlow.romBytes).toBeGreaterThan(slow.romBytes);
  });
});
