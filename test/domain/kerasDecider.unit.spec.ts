import { describe, expect, it } from 'vitest';
import { kerasDecider, type KerasCommand } from '../../domain/learn/kerasDecider';
import type { KerasModelTrained, KerasSettingsSet } from '../../domain/learn/kerasEvents';
import { planNetwork } from '../../domain/learn/kerasNetwork';
import { DEFAULT_KERAS_SETTINGS, type KerasSettingsChange } from '../../domain/learn/kerasSettings';
import { ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(kerasDecider);
const now = new Date('2026-11-27T10:00:00.000Z');
const set = (change: KerasSettingsChange): KerasCommand => ({ type: 'SetKerasSettings', data: { projectId: 3, learnId: 4, change, now } });
const settingsSet = (settings = DEFAULT_KERAS_SETTINGS): KerasSettingsSet => ({ type: 'KerasSettingsSet', data: { projectId: 3, learnId: 4, settings, set: now.toISOString() } });
const h = (c: string) => c.repeat(64);
const model = (overrides: Partial<KerasModelTrained['data']> = {}): KerasModelTrained['data'] => ({
  projectId: 3,
  learnId: 4,
  jobId: 9,
  model: h('a'),
  seed: 4,
  settings: DEFAULT_KERAS_SETTINGS,
  features: [{ dspId: 2, x: h('b'), y: h('c'), position: '00000000000000000010', sourcePosition: '00000000000000000008' }],
  classes: ['idle', 'wave'],
  inputShape: [33],
  parameterCount: 922,
  operations: 900,
  trainingWindowCount: 40,
  validation: { loss: 0.3, accuracy: 0.9, confusionMatrix: [[5, 0, 0], [1, 4, 0]], report: { idle: { precision: 0.8333, recall: 1, 'f1-score': 0.9091, support: 5 } }, windowCount: 10 },
  trained: now.toISOString(),
  ...overrides,
});

describe('a keras block without settings', () => {
  it('takes a partial change merged into the real service defaults (dense 20 and 10)', () => {
    spec.given([]).when(set({ trainingCycles: 40, learningRate: 0.005 })).then([settingsSet({ ...DEFAULT_KERAS_SETTINGS, trainingCycles: 40, learningRate: 0.005 })]);
    expect(DEFAULT_KERAS_SETTINGS.visualLayers).toEqual([{ type: 'dense', neurons: 20 }, { type: 'dense', neurons: 10 }]);
  });

  it('keeps only the fields a layer type uses, with the default kernel size, stack and dropout rate', () => {
    spec.given([]).when(set({ visualLayers: [{ type: 'reshape', columns: 3, neurons: 9 }, { type: 'conv1d', neurons: 8 }, { type: 'dropout' }, { type: 'flatten', enabled: false }] })).thenMatches((events) => {
      expect(events[0]!.type === 'KerasSettingsSet' && events[0]!.data.settings.visualLayers).toEqual([
        { type: 'reshape', columns: 3 },
        { type: 'conv1d', neurons: 8, kernelSize: 3, stack: 1 },
        { type: 'dropout', dropoutRate: 0.25 },
        { type: 'flatten', enabled: false },
      ]);
    });
  });

  it('refuses expert mode and a script: visual mode is supported', () => {
    spec.given([]).when(set({ mode: 'expert' })).thenThrows(ValidationError, /^mode: only visual mode is supported/);
    spec.given([]).when(set({ script: 'import tensorflow' })).thenThrows(ValidationError, /^script: only visual mode is supported/);
  });

  it('refuses bad values naming the field', () => {
    spec.given([]).when(set({ trainingCycles: 0 })).thenThrows(ValidationError, /^trainingCycles must be from 1/);
    spec.given([]).when(set({ trainingCycles: 2.5 })).thenThrows(ValidationError, /^trainingCycles must be a whole number/);
    spec.given([]).when(set({ learningRate: 0 })).thenThrows(ValidationError, /^learningRate must be above 0/);
    spec.given([]).when(set({ learningRate: Number.NaN })).thenThrows(ValidationError, /^learningRate must be a number/);
    spec.given([]).when(set({ batchSize: -1 })).thenThrows(ValidationError, /^batchSize/);
    spec.given([]).when(set({ trainTestSplit: 1 })).thenThrows(ValidationError, /^trainTestSplit/);
    spec.given([]).when(set({ minimumConfidenceRating: 1.5 })).thenThrows(ValidationError, /^minimumConfidenceRating/);
    spec.given([]).when(set({ visualLayers: [{ type: 'dense', neurons: 20 }, { type: 'dense' }] })).thenThrows(ValidationError, /^visualLayers\[1\]\.neurons is required/);
    spec.given([]).when(set({ visualLayers: [{ type: 'batchNormalization' as 'dense' }] })).thenThrows(ValidationError, /^visualLayers\[0\]\.type: "batchNormalization" is not a visual layer/);
    spec.given([]).when(set({ visualLayers: [{ type: 'dropout', dropoutRate: 1 }] })).thenThrows(ValidationError, /^visualLayers\[0\]\.dropoutRate/);
  });
});

describe('a keras block with settings', () => {
  it('changes only what the change names', () => {
    const before = { ...DEFAULT_KERAS_SETTINGS, batchSize: 16 };
    spec.given([settingsSet(before)]).when(set({ autoClassWeights: true })).then([settingsSet({ ...before, autoClassWeights: true })]);
  });
});

describe('recording a trained model', () => {
  it('records it, and a retried job once', () => {
    spec.given([]).when({ type: 'RecordKerasModel', data: model() }).then([{ type: 'KerasModelTrained', data: model() }]);
    spec.given([{ type: 'KerasModelTrained', data: model() }]).when({ type: 'RecordKerasModel', data: model() }).then([]);
  });

  it('keeps a diverged model with null metrics, and refuses malformed records', () => {
    const diverged = model({ validation: { ...model().validation, loss: null, accuracy: null } });
    spec.given([]).when({ type: 'RecordKerasModel', data: diverged }).then([{ type: 'KerasModelTrained', data: diverged }]);
    spec.given([]).when({ type: 'RecordKerasModel', data: model({ model: 'nope' }) }).thenThrows(ValidationError, /^model must be a SHA-256/);
    spec.given([]).when({ type: 'RecordKerasModel', data: model({ classes: ['one'] }) }).thenThrows(ValidationError, /^classes/);
    spec.given([]).when({ type: 'RecordKerasModel', data: model({ validation: { ...model().validation, confusionMatrix: [[1, 2, 3]] } }) }).thenThrows(ValidationError, /confusionMatrix must have a row per class/);
  });
});

describe('planning the network of a layer stack', () => {
  it('the defaults: two ReLU dense layers and a softmax output, with their parameter counts', () => {
    const plan = planNetwork(DEFAULT_KERAS_SETTINGS.visualLayers, 33, 3);
    expect(plan.layers.map((l) => l.layer)).toEqual([
      { kind: 'dense', units: 20, activation: 'relu' },
      { kind: 'dense', units: 10, activation: 'relu' },
      { kind: 'dense', units: 3, activation: 'softmax' },
    ]);
    expect(plan.parameterCount).toBe(34 * 20 + 21 * 10 + 11 * 3);
  });

  it('convolutions: 1-D after a reshape, 2-D with a channel axis added, pooling halving, a flatten before the output', () => {
    const conv1 = planNetwork([{ type: 'reshape', columns: 3 }, { type: 'conv1d', neurons: 8, kernelSize: 3, stack: 1 }], 33, 2);
    expect(conv1.layers.map((l) => l.outputShape)).toEqual([[11, 3], [11, 8], [6, 8], [48], [2]]);
    const conv2 = planNetwork([{ type: 'reshape', columns: 4 }, { type: 'conv2d', neurons: 4, kernelSize: 3, stack: 2 }, { type: 'flatten' }], 32, 2);
    expect(conv2.layers.map((l) => l.outputShape)).toEqual([[8, 4], [8, 4, 1], [8, 4, 4], [8, 4, 4], [4, 2, 4], [32], [2]]);
  });

  it('refuses a stack that cannot be built on these features, naming the layer', () => {
    expect(() => planNetwork([{ type: 'reshape', columns: 4 }], 33, 2)).toThrow(/^visualLayers\[0\]\.columns: 33 values cannot be laid out in rows of 4 columns/);
    expect(() => planNetwork([{ type: 'dense', neurons: 4 }, { type: 'conv1d', neurons: 4, kernelSize: 3, stack: 1 }], 33, 2)).toThrow(/^visualLayers\[1\]: a 1-D convolution needs input of two axes/);
    expect(() => planNetwork([{ type: 'dense', neurons: 4096 }, { type: 'dense', neurons: 4096 }], 33, 2)).toThrow(/more than 5000000 parameters/);
  });
});
