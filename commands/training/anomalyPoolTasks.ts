// The anomaly block's CPU work, run in the job thread pool: the features' .npy decoded, the chosen
// axes picked from the DSP blocks' columns, the K-means fitted (domain/learn/anomalyKmeans.ts).
import { decodeNpy } from '../../domain/dsp/npy';
import { locateAxis } from '../../domain/learn/anomalyBlocks';
import { fitAnomalyModel, type AnomalyModel } from '../../domain/learn/anomalyKmeans';

export interface AnomalyFitInput {
  /** Each DSP block's training X .npy (windows × features), in the learn block's order. */
  xs: Uint8Array[];
  axes: number[];
  clusterCount: number;
  seed: number;
}

export type AnomalyFitOutcome = { ok: true; model: AnomalyModel; iterations: number; converged: boolean; windowCount: number } | { ok: false; reason: string };

export function fitAnomalyTask(input: AnomalyFitInput): AnomalyFitOutcome {
  const arrays = input.xs.map((bytes) => decodeNpy(bytes));
  const counts = arrays.map((a) => (a.shape.length === 2 ? a.shape[1]! : 0));
  const windows = arrays[0]?.shape[0] ?? 0;
  if (arrays.some((a) => a.shape.length !== 2 || a.shape[0] !== windows)) return { ok: false, reason: "the DSP blocks' features do not have the same windows: generate the features of every block again" };
  const where = input.axes.map((axis) => locateAxis(counts, axis));
  const beyond = input.axes.find((_, i) => where[i] === undefined);
  if (beyond !== undefined) return { ok: false, reason: `axis ${beyond} is beyond the ${counts.reduce((a, b) => a + b, 0)} features of the block's DSP blocks` };
  const rows = Array.from({ length: windows }, (_, w) => where.map((p) => arrays[p!.part]!.data[w * counts[p!.part]! + p!.column]!));
  try {
    const identity = input.axes.map((_, i) => i);
    const fit = fitAnomalyModel(rows, { axes: identity, clusterCount: input.clusterCount, seed: input.seed });
    return { ok: true, model: { ...fit.model, axes: [...input.axes] }, iterations: fit.iterations, converged: fit.converged, windowCount: windows };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
}
