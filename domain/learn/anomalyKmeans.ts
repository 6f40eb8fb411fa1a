// The K-means anomaly block (learn block type `anomaly`): fitting and scoring, pure.
//
// The chosen feature axes of the training windows are standardised (z = (x − μ) / σ per axis, the
// same StandardScaler the DSP blocks use, so a constant axis gets σ = 1), clustered with ml-kmeans
// (k-means++ initialisation from a seed: same seed and data, same clusters), and each cluster gets
// a radius. A window's score is its Euclidean distance, in the standardised space, to the nearest
// centre minus that centre's radius: ≤ 0 inside a cluster, > 0 outside every nearest one.
//
// Radius: the largest distance from the centre of a training window whose nearest centre it is.
// The SDK documents `maxError` only as "Size of the cluster"; the largest distance is what makes
// every training window score ≤ 0, which the score's reading ("above 0 is unlike the training
// data") needs. The windows are assigned to their nearest final centre here rather than taken from
// ml-kmeans's last assignment, which can lag the last centre update by one step when it stops at
// maxIterations. A centre no window is nearest to is dropped: it has no radius to speak of.
import { kmeans } from 'ml-kmeans';
import { StandardScalerFit, type StandardScaler } from '../dsp/standardScaler';

export interface AnomalyCluster {
  center: number[];
  /** The largest distance of a training window of the cluster to its centre (standardised space). */
  radius: number;
  /** Training windows whose nearest centre this is. */
  windowCount: number;
}

/** The trained model, stored as a JSON blob: what scoring a window needs, nothing more. */
export interface AnomalyModel {
  /** Indexes into the learn block's feature vector (its DSP blocks' features concatenated in order). */
  axes: number[];
  /** Fitted on the training windows' chosen axes, one value per axis. */
  scaler: { mean: number[]; scale: number[] };
  clusters: AnomalyCluster[];
}

export interface AnomalyFitOptions {
  axes: readonly number[];
  clusterCount: number;
  seed: number;
  maxIterations?: number;
}

export class AnomalyFitError extends Error {}

/** The chosen axes of one feature row. */
export function selectAxes(row: ArrayLike<number>, axes: readonly number[]): number[] {
  return axes.map((a) => {
    const v = row[a];
    if (v === undefined) throw new AnomalyFitError(`axis ${a} is beyond the ${row.length} features of a window`);
    return v;
  });
}

const distance = (a: readonly number[], b: readonly number[]): number => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i]! - b[i]!) ** 2;
  return Math.sqrt(sum);
};

function nearest(point: readonly number[], centers: readonly (readonly number[])[]): { index: number; distance: number } {
  let best = { index: -1, distance: Infinity };
  centers.forEach((c, index) => {
    const d = distance(point, c);
    if (d < best.distance) best = { index, distance: d };
  });
  return best;
}

const scaled = (scaler: { mean: number[]; scale: number[] }, values: readonly number[]): number[] => values.map((v, i) => (v - scaler.mean[i]!) / scaler.scale[i]!);

/** Fits the model on the training windows' feature rows (all features; `axes` picks the columns). */
export function fitAnomalyModel(rows: readonly ArrayLike<number>[], options: AnomalyFitOptions): { model: AnomalyModel; iterations: number; converged: boolean } {
  const { axes, clusterCount, seed } = options;
  if (axes.length === 0) throw new AnomalyFitError('choose at least one axis');
  if (!Number.isInteger(clusterCount) || clusterCount < 1) throw new AnomalyFitError(`the cluster count must be a positive integer, got ${clusterCount}`);
  if (rows.length < clusterCount) throw new AnomalyFitError(`${clusterCount} clusters need at least as many training windows; there are ${rows.length}`);
  const picked = rows.map((r) => selectAxes(r, axes));
  for (const p of picked) if (p.some((v) => !Number.isFinite(v))) throw new AnomalyFitError('a training window has a feature that is not a finite number');
  const fit = new StandardScalerFit(axes.length);
  for (const p of picked) fit.add(p);
  const { mean, scale }: StandardScaler = fit.result();
  const scaler = { mean, scale };
  const points = picked.map((p) => scaled(scaler, p));
  const maxIterations = options.maxIterations ?? 300;
  const result = kmeans(points, clusterCount, { seed, initialization: 'kmeans++', maxIterations });
  const centers = result.centroids;
  const radius = new Array<number>(centers.length).fill(0);
  const counts = new Array<number>(centers.length).fill(0);
  for (const p of points) {
    const n = nearest(p, centers);
    counts[n.index]!++;
    radius[n.index] = Math.max(radius[n.index]!, n.distance);
  }
  const clusters = centers.flatMap((center, i) => (counts[i]! > 0 ? [{ center: [...center], radius: radius[i]!, windowCount: counts[i]! }] : []));
  return { model: { axes: [...axes], scaler, clusters }, iterations: result.iterations, converged: result.converged };
}

/**
 * A window's anomaly score from its whole feature row: the distance to the nearest centre minus
 * that cluster's radius, in the standardised space. ≤ 0 for every training window.
 */
export function anomalyScore(model: AnomalyModel, row: ArrayLike<number>): number {
  if (model.clusters.length === 0) throw new AnomalyFitError('the model has no cluster');
  const point = scaled(model.scaler, selectAxes(row, model.axes));
  const n = nearest(point, model.clusters.map((c) => c.center));
  return n.distance - model.clusters[n.index]!.radius;
}
