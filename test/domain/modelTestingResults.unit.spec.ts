import { describe, expect, it } from 'vitest';
import { predictWindow, testingAccuracy, windowPredictions, type ModelTestingResults, type TestedWindow } from '../../domain/learn/modelTestingResults';

const w = (label: string | null, idle: number, anomaly: number): TestedWindow => ({
  startMs: 0,
  endMs: 500,
  label,
  results: [
    { learnId: 3, type: 'keras', classification: { idle, wave: 1 - idle } },
    { learnId: 4, type: 'anomaly', anomaly },
  ],
});
const results = (samples: ModelTestingResults['samples']): ModelTestingResults => ({
  v: 1,
  impulseId: 1,
  learnBlocks: [],
  thresholds: [
    { learnId: 3, type: 'keras', minimumConfidenceRating: 0.6 },
    { learnId: 4, type: 'anomaly', minimumConfidenceRating: 0.3 },
  ],
  classes: ['idle', 'wave'],
  frequencyHz: 100,
  samples,
  skipped: [],
});

describe('scoring model testing windows', () => {
  it('predicts the top class at or above the minimum confidence, uncertain below it, anomaly above the anomaly threshold', () => {
    const r = results([]);
    expect(predictWindow(r, w('idle', 0.9, -1))).toBe('idle');
    expect(predictWindow(r, w('idle', 0.6, -1))).toBe('idle');
    expect(predictWindow(r, w('idle', 0.55, -1))).toBe('uncertain');
    expect(predictWindow(r, w('idle', 0.1, 0.2))).toBe('wave');
    expect(predictWindow(r, w('idle', 0.9, 0.31))).toBe('anomaly');
    expect(predictWindow({ thresholds: [{ learnId: 4, type: 'anomaly', minimumConfidenceRating: 0.3 }] }, w(null, 0.9, 0))).toBe('no anomaly');
  });

  it('counts accuracy, balanced accuracy and the confusion matrix over labelled windows only', () => {
    const r = results([
      { sampleId: 1, windows: [w('idle', 0.9, -1), w('idle', 0.9, -1), w('idle', 0.9, -1), w('idle', 0.2, -1)] },
      { sampleId: 2, windows: [w('wave', 0.1, -1), w('wave', 0.5, -1), w(null, 0.9, -1)] },
    ]);
    const a = testingAccuracy(r);
    expect(a.totalSummary).toEqual({ good: 4, bad: 2 });
    expect(a.summaryPerClass).toEqual({ idle: { good: 3, bad: 1 }, wave: { good: 1, bad: 1 } });
    expect(a.allLabels).toEqual(['idle', 'wave', 'uncertain', 'anomaly']);
    expect(a.confusionMatrixValues).toEqual({ idle: { idle: 3, wave: 1, uncertain: 0, anomaly: 0 }, wave: { idle: 0, wave: 1, uncertain: 1, anomaly: 0 } });
    expect(a.accuracyScore).toBeCloseTo(4 / 6, 12);
    expect(a.balancedAccuracyScore).toBeCloseTo((3 / 4 + 1 / 2) / 2, 12);
    const p = windowPredictions(r);
    expect(p).toHaveLength(7);
    expect(p[6]).toEqual({ sampleId: 2, startMs: 0, endMs: 500, prediction: 'idle', anomalyScores: [[-1]] });
    expect(p[3]).toMatchObject({ sampleId: 1, label: 'idle', prediction: 'wave', predictionCorrect: false });
  });

  it('has no score without a labelled window, and keeps a class named like an object member apart', () => {
    expect(testingAccuracy(results([{ sampleId: 1, windows: [w(null, 0.9, -1)] }]))).toMatchObject({ totalSummary: { good: 0, bad: 0 }, confusionMatrixValues: {} });
    expect(testingAccuracy(results([]))).not.toHaveProperty('accuracyScore');
    const odd = results([{ sampleId: 1, windows: [w('__proto__', 0.9, -1)] }]);
    const a = testingAccuracy(odd);
    expect(Object.keys(a.confusionMatrixValues)).toEqual(['__proto__']);
    expect(a.confusionMatrixValues['__proto__']!.idle).toBe(1);
  });
});
