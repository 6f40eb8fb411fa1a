// A sample's classified windows in the SDK's shape (ClassifySampleResponseClassification, one per learn
// block of the impulse), for the classify endpoints and the model-testing results alike.
//   keras block:   result[i] = { class: score } of window i; threshold min_score
//   anomaly block: result[i] = { anomaly: score } of window i; threshold min_anomaly_score
//   regression:    result[i] = { value: predicted } of window i; threshold max_error (the SDK: "for
//                  regression, [the minimum confidence rating] is the absolute error")
// expectedLabels: one per window, its label over the sample's own rows (both ends inclusive), as
// structured labels index them; none for an unlabelled sample.
import type { LearnBlock } from '../../domain/impulse/impulseEvents';
import type { ImpulseRuntimeSpec } from '../../domain/learn/impulseRuntime';
import type { TestedWindow } from '../../domain/learn/modelTestingResults';

export interface ClassificationAnswer {
  learnBlock: LearnBlock;
  result: Record<string, number>[];
  minimumConfidenceRating: number;
  expectedLabels: { startIndex: number; endIndex: number; label: string }[];
  thresholds: { key: string; description: string; helpText: string; value: number }[];
  intervalMs: number;
  frequencyHz: number;
  resultCount: number;
}

/** The window's place in the sample's own rows. */
function rowsOf(w: { startMs: number; endMs: number }, sample: { frequency: number; valuesCount: number }): { startIndex: number; endIndex: number } {
  if (!(sample.frequency > 0)) return { startIndex: 0, endIndex: Math.max(0, sample.valuesCount - 1) };
  const startIndex = Math.floor((w.startMs * sample.frequency) / 1000 + 1e-9);
  const endIndex = Math.max(startIndex, Math.min(sample.valuesCount - 1, Math.ceil((w.endMs * sample.frequency) / 1000 - 1e-9) - 1));
  return { startIndex, endIndex };
}

/** What the answers need of the spec (a model testing run keeps just this). */
export type AnsweredBlocks = { learnBlocks: readonly (Pick<ImpulseRuntimeSpec['learnBlocks'][number], 'id' | 'type' | 'minimumConfidenceRating'> & { mode?: 'regression' })[]; frequencyHz: number };

export function classificationAnswers(
  spec: AnsweredBlocks,
  learnBlocks: readonly LearnBlock[],
  sample: { frequency: number; valuesCount: number; intervalMs: number },
  windows: readonly TestedWindow[],
): ClassificationAnswer[] {
  const expectedLabels = windows.flatMap((w) => (w.label === null ? [] : [{ ...rowsOf(w, sample), label: w.label }]));
  return spec.learnBlocks.map((block) => {
    const learnBlock = learnBlocks.find((b) => b.id === block.id)!;
    const result = windows.map((w) => {
      const r = w.results.find((x) => x.learnId === block.id)!;
      return r.type === 'keras' ? { ...r.classification } : { anomaly: r.anomaly };
    });
    const threshold =
      block.mode === 'regression'
        ? { key: 'max_error', description: 'Maximum absolute error', helpText: 'In model testing, a window whose value is further than this from its label counts as wrong', value: block.minimumConfidenceRating }
        : block.type === 'keras'
          ? { key: 'min_score', description: 'Minimum confidence rating', helpText: 'A window whose top score is below it is uncertain', value: block.minimumConfidenceRating }
          : { key: 'min_anomaly_score', description: 'Minimum anomaly score', helpText: 'A window whose anomaly score is above it is an anomaly', value: block.minimumConfidenceRating };
    return { learnBlock, result, minimumConfidenceRating: block.minimumConfidenceRating, expectedLabels, thresholds: [threshold], intervalMs: sample.intervalMs, frequencyHz: spec.frequencyHz, resultCount: windows.length };
  });
}
