// What a model-testing run keeps (one JSON blob named by its ModelTested event) and how its windows
// are scored. Pure.
//
// A window's prediction: with an anomaly block, a score above its threshold is "anomaly"; otherwise
// the first keras block's top class when its score reaches the block's minimum confidence, else
// "uncertain". An impulse with an anomaly block only predicts "anomaly" or "no anomaly". A window is
// correct when its prediction is its expected label (by the input block's labelling method, as in
// the features); unlabelled windows are classified but not scored.
//
// A regression block (its threshold `mode: 'regression'`) predicts its value, written as a number;
// the window is correct when the value is within the block's threshold of its label read as a number
// (the SDK: "for regression, [the minimum confidence rating] is the absolute error"), so the accuracy
// is the share of labelled windows within it. There are no classes to confuse: the confusion matrix
// is empty, and the errors are measured instead (mseScore; MSE, MAE and explained variance).
import type { LearnBlock } from '../impulse/impulseEvents';
import { REGRESSION_LABEL, type LearnBlockResult } from './impulseRuntime';
import { regressionMetrics, type RegressionMetrics } from './kerasRegression';

export const UNCERTAIN = 'uncertain';
export const ANOMALY = 'anomaly';
export const NO_ANOMALY = 'no anomaly';

export interface TestedWindow {
  startMs: number;
  endMs: number;
  label: string | null;
  results: LearnBlockResult[];
}

export interface ModelTestingResults {
  v: 1;
  impulseId: number;
  /** The impulse's learn blocks as they were, and each one's threshold at the time. */
  learnBlocks: LearnBlock[];
  thresholds: { learnId: number; type: 'keras' | 'anomaly'; mode?: 'regression'; minimumConfidenceRating: number }[];
  /** The first keras block's classes ([] without one; a regression block's training labels). */
  classes: string[];
  frequencyHz: number;
  /** Testing samples in id order, each with its windows. */
  samples: { sampleId: number; windows: TestedWindow[] }[];
  skipped: { sampleId: number; reason: string }[];
}

export interface WindowPrediction {
  sampleId: number;
  startMs: number;
  endMs: number;
  label?: string;
  prediction: string;
  predictionCorrect?: boolean;
  anomalyScores?: number[][];
}

export function predictWindow(results: Pick<ModelTestingResults, 'thresholds'>, w: TestedWindow): string {
  const anomalyBlock = results.thresholds.find((t) => t.type === 'anomaly');
  const kerasBlock = results.thresholds.find((t) => t.type === 'keras');
  if (anomalyBlock) {
    const r = w.results.find((x) => x.learnId === anomalyBlock.learnId);
    if (r?.type === 'anomaly' && r.anomaly > anomalyBlock.minimumConfidenceRating) return ANOMALY;
  }
  if (!kerasBlock) return NO_ANOMALY;
  const r = w.results.find((x) => x.learnId === kerasBlock.learnId);
  if (r?.type !== 'keras') return UNCERTAIN;
  if (kerasBlock.mode === 'regression') return String(r.classification[REGRESSION_LABEL]);
  let best: string | undefined;
  let bestScore = -Infinity;
  for (const [c, s] of Object.entries(r.classification)) {
    if (s > bestScore) {
      best = c;
      bestScore = s;
    }
  }
  return best !== undefined && bestScore >= kerasBlock.minimumConfidenceRating ? best : UNCERTAIN;
}

const regressionBlockOf = (results: Pick<ModelTestingResults, 'thresholds'>) => {
  const keras = results.thresholds.find((t) => t.type === 'keras');
  return keras?.mode === 'regression' ? keras : undefined;
};

/** A label as the number a regression block should predict; null when it names none. */
function labelValue(label: string): number | null {
  const v = label.trim() === '' ? Number.NaN : Number(label);
  return Number.isFinite(v) ? v : null;
}

/** Whether a labelled window's prediction is right: the label itself, or for regression a value within the threshold of it. */
function predictionCorrect(results: Pick<ModelTestingResults, 'thresholds'>, prediction: string, label: string): boolean {
  const regression = regressionBlockOf(results);
  if (!regression || prediction === ANOMALY || label === ANOMALY) return prediction === label;
  const expected = labelValue(label);
  return expected !== null && Math.abs(Number(prediction) - expected) <= regression.minimumConfidenceRating;
}

/** Every window's prediction, samples in order. */
export function windowPredictions(results: ModelTestingResults, samples: readonly ModelTestingResults['samples'][number][] = results.samples): WindowPrediction[] {
  return samples.flatMap((s) =>
    s.windows.map((w) => {
      const prediction = predictWindow(results, w);
      const anomaly = w.results.find((r) => r.type === 'anomaly');
      return {
        sampleId: s.sampleId,
        startMs: w.startMs,
        endMs: w.endMs,
        ...(w.label === null ? {} : { label: w.label, predictionCorrect: predictionCorrect(results, prediction, w.label) }),
        prediction,
        ...(anomaly?.type === 'anomaly' ? { anomalyScores: [[anomaly.anomaly]] } : {}),
      };
    }),
  );
}

/** The SDK's ClassifyJobResponse.accuracy. */
export interface TestingAccuracy {
  totalSummary: { good: number; bad: number };
  summaryPerClass: Record<string, { good: number; bad: number }>;
  /** Actual label, then predicted label, to a window count. */
  confusionMatrixValues: Record<string, Record<string, number>>;
  allLabels: string[];
  accuracyScore?: number;
  balancedAccuracyScore?: number;
  /** Regression: the mean squared error over the labelled windows whose label is a number. */
  mseScore?: number;
}

/** A regression block's predicted and expected values over the labelled windows whose label is a number. */
function regressionPairs(results: ModelTestingResults, learnId: number): { predicted: number[]; actual: number[] } {
  const predicted: number[] = [];
  const actual: number[] = [];
  for (const s of results.samples) {
    for (const w of s.windows) {
      const expected = w.label === null ? null : labelValue(w.label);
      const r = w.results.find((x) => x.learnId === learnId);
      if (expected === null || r?.type !== 'keras') continue;
      predicted.push(r.classification[REGRESSION_LABEL]!);
      actual.push(expected);
    }
  }
  return { predicted, actual };
}

/** Each regression block's errors on the testing windows (the SDK's additionalMetricsByLearnBlock). */
export function regressionTestingMetrics(results: ModelTestingResults): { learnId: number; metrics: RegressionMetrics; windowCount: number }[] {
  return results.thresholds
    .filter((t) => t.type === 'keras' && t.mode === 'regression')
    .map((t) => {
      const { predicted, actual } = regressionPairs(results, t.learnId);
      return { learnId: t.learnId, metrics: regressionMetrics(predicted, actual), windowCount: actual.length };
    });
}

function regressionAccuracy(results: ModelTestingResults, regression: { learnId: number }): TestingAccuracy {
  const predictions = windowPredictions(results).filter((p) => p.label !== undefined);
  const labels = [...new Set(predictions.map((p) => p.label!))];
  const summaryPerClass: Record<string, { good: number; bad: number }> = Object.create(null);
  for (const l of labels) summaryPerClass[l] = { good: 0, bad: 0 };
  let good = 0;
  for (const p of predictions) {
    if (p.predictionCorrect) good++;
    summaryPerClass[p.label!]![p.predictionCorrect ? 'good' : 'bad']++;
  }
  const { predicted, actual } = regressionPairs(results, regression.learnId);
  const mse = regressionMetrics(predicted, actual).meanSquaredError;
  return {
    totalSummary: { good, bad: predictions.length - good },
    summaryPerClass: { ...summaryPerClass },
    confusionMatrixValues: {},
    allLabels: labels,
    ...(predictions.length > 0 ? { accuracyScore: good / predictions.length } : {}),
    ...(mse === null ? {} : { mseScore: mse }),
  };
}

export function testingAccuracy(results: ModelTestingResults): TestingAccuracy {
  const regression = regressionBlockOf(results);
  if (regression) return regressionAccuracy(results, regression);
  const predictions = windowPredictions(results).filter((p) => p.label !== undefined);
  const hasAnomaly = results.thresholds.some((t) => t.type === 'anomaly');
  const hasKeras = results.thresholds.some((t) => t.type === 'keras');
  const actual = [...new Set(predictions.map((p) => p.label!))];
  const extra = hasKeras ? [UNCERTAIN, ...(hasAnomaly ? [ANOMALY] : [])] : [ANOMALY, NO_ANOMALY];
  const allLabels = [...new Set([...results.classes, ...actual, ...extra])];
  // Object.create(null): a class may be named "__proto__" or "constructor".
  const confusionMatrixValues: Record<string, Record<string, number>> = Object.create(null);
  const summaryPerClass: Record<string, { good: number; bad: number }> = Object.create(null);
  for (const a of actual) {
    confusionMatrixValues[a] = Object.fromEntries(allLabels.map((l) => [l, 0]));
    summaryPerClass[a] = { good: 0, bad: 0 };
  }
  let good = 0;
  for (const p of predictions) {
    const row = confusionMatrixValues[p.label!]!;
    row[p.prediction] = (row[p.prediction] ?? 0) + 1;
    if (p.predictionCorrect) {
      good++;
      summaryPerClass[p.label!]!.good++;
    } else summaryPerClass[p.label!]!.bad++;
  }
  const total = predictions.length;
  const recalls = actual.map((a) => summaryPerClass[a]!.good / (summaryPerClass[a]!.good + summaryPerClass[a]!.bad));
  return {
    totalSummary: { good, bad: total - good },
    summaryPerClass: { ...summaryPerClass },
    confusionMatrixValues: { ...confusionMatrixValues },
    allLabels,
    ...(total > 0 ? { accuracyScore: good / total, balancedAccuracyScore: recalls.reduce((x, y) => x + y, 0) / recalls.length } : {}),
  };
}
