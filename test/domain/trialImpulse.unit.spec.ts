import { describe, expect, it } from 'vitest';
import type { ImpulseBlocks } from '../../domain/impulse/impulseEvents';
import type { TrialImpulse } from '../../domain/optimize/searchSpace';
import { trialImpulseBlocks, trialKerasSettings } from '../../domain/optimize/trialImpulse';
import { ConflictError } from '../../domain/shared/errors';

describe('a trial as the blocks of a new impulse', () => {
  const createdAt = '2026-11-27T10:00:00.000Z';
  const template: ImpulseBlocks = {
    inputBlocks: [{ id: 1, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['audio', 'accX'], windowSizeMs: 1000, windowIncreaseMs: 500, frequencyHz: 16000, classificationWindowIncreaseMs: 250, createdAt }],
    dspBlocks: [{ id: 2, type: 'mfcc', name: 'MFCC', title: 'Audio (MFCC)', axes: ['audio'], input: 1, implementationVersion: 4, createdAt }],
    learnBlocks: [{ id: 3, type: 'keras', name: 'Classifier', title: 'Classification', dsp: [2], createdAt }],
    postProcessingBlocks: [],
  };
  const trial = (dspType: string, windowSizeMs: number): TrialImpulse => ({ window: { windowSizeMs, windowIncreaseMs: 100 }, dsp: { type: dspType, config: {} }, learn: { type: 'keras', denseLayers: [32], learningRate: 0.01, trainingCycles: 40, batchSize: 8 } });
  const ids = { input: 11, dsp: 12, learn: 13 };

  it("takes the template's input with the trial's window, and keeps a classification step only while it fits the window", () => {
    const blocks = trialImpulseBlocks(template, trial('mfe', 800), ids);
    expect(blocks.inputBlocks).toEqual([{ id: 11, type: 'time-series', name: 'Time series', title: 'Time series data', axes: ['audio', 'accX'], windowSizeMs: 800, windowIncreaseMs: 100, frequencyHz: 16000, classificationWindowIncreaseMs: 250 }]);
    expect(trialImpulseBlocks(template, trial('mfe', 200), ids).inputBlocks[0]).not.toHaveProperty('classificationWindowIncreaseMs');
    expect(blocks.learnBlocks).toEqual([{ id: 13, type: 'keras', dsp: [12] }]);
  });

  it("gives a single-signal block the template's first axis, and a multi-axis block the input's axes when the template's block reads one signal", () => {
    expect(trialImpulseBlocks(template, trial('mfe', 1000), ids).dspBlocks).toEqual([{ id: 12, type: 'mfe', axes: ['audio'], input: 11 }]);
    expect(trialImpulseBlocks(template, trial('spectral-analysis', 1000), ids).dspBlocks[0]!.axes).toEqual(['audio', 'accX']);
    const motion: ImpulseBlocks = { ...template, dspBlocks: [{ ...template.dspBlocks[0]!, type: 'spectral-analysis', axes: ['accX'] }] };
    expect(trialImpulseBlocks(motion, trial('spectral-analysis', 1000), ids).dspBlocks[0]!.axes).toEqual(['accX']);
  });

  it('refuses a template without a time-series input', () => {
    const image: ImpulseBlocks = { inputBlocks: [{ id: 1, type: 'image', name: 'Image', title: 'Image data', createdAt }], dspBlocks: [], learnBlocks: [], postProcessingBlocks: [] };
    expect(() => trialImpulseBlocks(image, trial('mfe', 1000), ids)).toThrow(ConflictError);
  });

  it("sets the model to the trial's dense stack, with its round's cycles in hyperband", () => {
    expect(trialKerasSettings(trial('mfe', 1000), null)).toEqual({ visualLayers: [{ type: 'dense', neurons: 32 }], learningRate: 0.01, trainingCycles: 40, batchSize: 8 });
    expect(trialKerasSettings(trial('mfe', 1000), { bracket: 1, round: 0, cycles: 3 }).trainingCycles).toBe(3);
  });
});
