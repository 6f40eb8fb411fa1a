import { describe, expect, it } from 'vitest';
import { regressionTestingMetrics, testingAccuracy, windowPredictions, type ModelTestingResults, type TestedWindow } from '../../domain/learn/modelTestingResults';

// Model testing of a regression block: a window is right when its value is within the block's
// threshold (the maximum absolute error) of its label read as a number.
const w = (label: string | null, value: number): TestedWindow => ({ startMs: 0, endMs: 500, label, results: [{ learnId: 3, type: 'keras', classification: { value } }] });
const results = (windows: TestedWindow[]): ModelTestingResults => ({
  v: 1,
  impulseId: 1,
  learnBlocks: [],
  thresholds: [{ learnId: 3, type: 'keras', mode: 'regression', minimumConfidenceRating: 0.5 }],
  classes: ['2', '10'],
  frequencyHz: 100,
  samples: [{ sampleId: 1, windows }],
  skipped: [],
});

describe('scoring regression windows', () => {
  it('predicts the value, right within the maximum absolute error; accuracy is the share right, mseScore the mean squared error', () => {
    const r = results([w('2', 2.4), w('2', 2.6), w('10', 9.5), w('10', 11), w('heavy', 3), w(null, 7)]);
    const p = windowPredictions(r);
    expect(p.map((x) => [x.prediction, x.predictionCorrect])).toEqual([
      ['2.4', true],
      ['2.6', false],
      ['9.5', true],
      ['11', false],
      // A label that names no number can never be right, and is left out of the errors.
      ['3', false],
      ['7', undefined],
    ]);
    const a = testingAccuracy(r);
    expect(a).toMatchObject({ totalSummary: { good: 2, bad: 3 }, summaryPerClass: { '2': { good: 1, bad: 1 }, '10': { good: 1, bad: 1 }, heavy: { good: 0, bad: 1 } }, confusionMatrixValues: {}, accuracyScore: 2 / 5 });
    expect(a.balancedAccuracyScore).toBeUndefined();
    const mse = (0.4 ** 2 + 0.6 ** 2 + 0.5 ** 2 + 1) / 4;
    expect(a.mseScore).toBeCloseTo(mse, 12);
    const [m] = regressionTestingMetrics(r);
    expect(m).toMatchObject({ learnId: 3, windowCount: 4 });
    expect(m!.metrics.meanSquaredError).toBeCloseTo(mse, 12);
    expect(m!.metrics.meanAbsoluteError).toBeCloseTo((0.4 + 0.6 + 0.5 + 1) / 4, 12);
  });

  it('gives no regression metrics for a classifier', () => {
    const r = results([w('2', 2)]);
    expect(regressionTestingMetrics({ ...r, thresholds: [{ learnId: 3, type: 'keras', minimumConfidenceRating: 0.5 }] })).toEqual([]);
  });
});
