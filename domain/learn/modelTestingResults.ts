// What a model-testing run keeps (one JSON blob named by its ModelTested event) and how its windows
// are scored. Pure.
//
// A window's prediction: with an anomaly block, a score above its threshold is "anomaly"; otherwise
// the first keras block's top class when its score reaches the block's minimum confidence, else
// "uncertain". An impulse with an anomaly block only predicts "anomaly" or "no anomaly". A window is
// correct when its prediction is its expected label (by the input block's labelling method, as in
// the features); unlabelled windows are classified but not scored.
import type { LearnBlock } from '../impulse/impulseEvents';
import type { LearnBlockResult } from './impulseRuntime';

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
  thresholds: { learnId: number; type: 'keras' | 'anomaly'; minimumConfidenceRating: number }[];
  /** The first keras block's classes ([] without one). */
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
        ...(w.label === null ? {} : { label: w.label, predictionCorrect: prediction === w.label }),
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
}

export function testingAccuracy(results: ModelTestingResults): TestingAccuracy {
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
