import { describe, expect, it } from 'vitest';
import { kerasDecider } from '../../domain/learn/kerasDecider';
import type { KerasModelTrained } from '../../domain/learn/kerasEvents';
import { planNetwork } from '../../domain/learn/kerasNetwork';
import { kerasModeOf, regressionMetrics, regressionTargets } from '../../domain/learn/kerasRegression';
import { DEFAULT_KERAS_SETTINGS } from '../../domain/learn/kerasSettings';
import { ValidationError } from '../../domain/shared/errors';

const h = (c: string) => c.repeat(64);
const regressionModel = (overrides: Partial<KerasModelTrained['data']> = {}): KerasModelTrained['data'] => ({
  projectId: 3,
  learnId: 4,
  jobId: 9,
  mode: 'regression',
  model: h('a'),
  seed: 4,
  settings: DEFAULT_KERAS_SETTINGS,
  features: [{ dspId: 2, x: h('b'), y: h('c'), position: '00000000000000000010', sourcePosition: '00000000000000000008' }],
  classes: ['1.5', '2'],
  inputShape: [33],
  parameterCount: 911,
  operations: 900,
  trainingWindowCount: 40,
  validation: { loss: 0.25, accuracy: null, confusionMatrix: [], report: {}, windowCount: 10, regression: { meanSquaredError: 0.25, meanAbsoluteError: 0.4, explainedVariance: -0.5 } },
  trained: '2026-11-27T10:00:00.000Z',
  ...overrides,
});
const record = (data: KerasModelTrained['data']) => kerasDecider.decide({ type: 'RecordKerasModel', data }, kerasDecider.initialState());

describe('the keras-regression block', () => {
  it('is the regression mode of the keras code; other learn block types are not trained by it', () => {
    expect(kerasModeOf('keras')).toBe('classification');
    expect(kerasModeOf('keras-regression')).toBe('regression');
    expect(kerasModeOf('anomaly')).toBeUndefined();
    expect(kerasModeOf('toString')).toBeUndefined();
  });

  it('ends its network in one linear unit, where the classifier has a softmax unit per class', () => {
    const layers = [{ type: 'dense' as const, neurons: 8 }];
    const regression = planNetwork(layers, 10, 3, 'regression');
    expect(regression.layers.at(-1)).toEqual({ layer: { kind: 'dense', units: 1, activation: 'linear' }, outputShape: [1], parameters: 9 });
    expect(planNetwork(layers, 10, 3).layers.at(-1)!.layer).toEqual({ kind: 'dense', units: 3, activation: 'softmax' });
    expect(regression.parameterCount).toBe(11 * 8 + 9);
  });

  it('reads each label as a number, naming the first that is none', () => {
    expect(regressionTargets(['1.5', '-2', '3e2', ' 4 '])).toEqual({ values: [1.5, -2, 300, 4] });
    expect(regressionTargets(['1', 'idle', 'x'])).toEqual({ notANumber: 'idle' });
    expect(regressionTargets(['1', ''])).toEqual({ notANumber: '' });
    expect(regressionTargets(['Infinity'])).toEqual({ notANumber: 'Infinity' });
  });

  it("measures mean squared and absolute errors and the explained variance as scikit-learn's", () => {
    // sklearn: mean_squared_error([3, -0.5, 2, 7], [2.5, 0.0, 2, 8]) = 0.375, mean_absolute_error = 0.5,
    // explained_variance_score = 0.9571734475374732.
    const m = regressionMetrics([2.5, 0, 2, 8], [3, -0.5, 2, 7]);
    expect(m.meanSquaredError).toBeCloseTo(0.375, 12);
    expect(m.meanAbsoluteError).toBeCloseTo(0.5, 12);
    expect(m.explainedVariance).toBeCloseTo(0.9571734475374732, 12);
    expect(regressionMetrics([1, 1], [1, 1]).explainedVariance).toBe(1);
    expect(regressionMetrics([], [])).toEqual({ meanSquaredError: null, meanAbsoluteError: null, explainedVariance: null });
    expect(regressionMetrics([Number.NaN], [1]).meanSquaredError).toBeNull();
  });

  it('records a regression model with its measures and no matrix; refuses a record that mixes the two kinds', () => {
    expect(record(regressionModel())).toEqual([{ type: 'KerasModelTrained', data: regressionModel() }]);
    expect(() => record(regressionModel({ validation: { ...regressionModel().validation, confusionMatrix: [[1, 0, 0], [0, 1, 0]] } }))).toThrow(/confusionMatrix must be empty/);
    expect(() => record(regressionModel({ validation: { ...regressionModel().validation, regression: undefined } }))).toThrow(ValidationError);
    expect(() => record(regressionModel({ mode: undefined, validation: { ...regressionModel().validation, confusionMatrix: [[1, 0, 0], [0, 1, 0]] } }))).toThrow(/validation.regression/);
    expect(() => record(regressionModel({ mode: 'classification' as 'regression' }))).toThrow(/mode/);
    expect(() => record(regressionModel({ validation: { ...regressionModel().validation, regression: { meanSquaredError: -1, meanAbsoluteError: 0, explainedVariance: 0 } } }))).toThrow(/meanSquaredError/);
  });
});
