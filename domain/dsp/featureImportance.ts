// Feature importance of the generate-features job (dsp-reference 11): for blocks with
// hasFeatureImportance (raw, flatten, spectral-analysis) and at least two classes, one random forest
// per class trained one-vs-rest on the training windows, each giving importances that sum to 1.
//
// * Library: ml-random-forest (mljs, MIT; CART trees from ml-cart, Gini impurity, seeded bagging),
//   the maintained random forest for JavaScript. The Studio uses scikit-learn's
//   RandomForestClassifier.feature_importances_, the mean decrease in impurity (MDI).
// * MDI is computed here from the library's trained trees, not with its featureImportance(): that
//   method subtracts the children's gains from a node's (mixing up gain and impurity) and counts
//   leaves, so it can give negative importances. Here, as scikit-learn: each split adds
//   (rows at the node) × (Gini decrease of the split) to its feature; a tree's importances are
//   normalised to sum 1; the forest's are the mean over the trees that split at all, normalised again.
//   A class no feature separates (no tree splits) gets zeros rather than a made-up distribution.
// * Bounds: ml-cart's split search costs about n² per feature and node (measured here: 300 windows,
//   100 features, 10 trees take about 3 s per class on one core), so the forests see at most
//   IMPORTANCE_MAX_WINDOWS training windows, drawn with a seeded reservoir per class (every class keeps
//   its share, even a rare one), and FOREST_SETTINGS.nEstimators trees of depth ≤ maxDepth.
// * Features per tree: the library samples features per tree, not per split as scikit-learn does, and
//   a tree that lacks the telling features credits noise; so each tree sees every feature up to
//   FOREST_SETTINGS.maxFeaturesPerTree (flatten and most spectral configurations: all of them), and a
//   random subset of that many beyond (raw windows of hundreds of values), which leaves the ranking of
//   very wide blocks coarser: a feature no tree drew gets 0.
import { RandomForestClassifier } from 'ml-random-forest';
import { WindowReservoir } from './featureExplorer';

export const IMPORTANCE_MAX_WINDOWS = 300;
export const FOREST_SETTINGS = { nEstimators: 16, maxDepth: 12, maxFeaturesPerTree: 64 } as const;

/** The SDK's DspFeatureImportanceResponse, without `success`. */
export interface FeatureImportanceResponse {
  hasFeatureImportance: boolean;
  labels: Record<string, { features: { axis: string; importance: number }[] }>;
}

/**
 * Collects the training windows the forests learn from while X is written: a seeded reservoir per
 * class, so at most IMPORTANCE_MAX_WINDOWS rows are held whatever the data set's size.
 */
export class ImportanceSampler {
  private readonly reservoirs: WindowReservoir<number[]>[];

  constructor(
    readonly classCount: number,
    seed: number,
    maxWindows = IMPORTANCE_MAX_WINDOWS,
  ) {
    if (!Number.isSafeInteger(classCount) || classCount < 1) throw new RangeError(`bad class count ${classCount}`);
    const share = Math.max(1, Math.floor(maxWindows / classCount));
    this.reservoirs = Array.from({ length: classCount }, (_, c) => new WindowReservoir<number[]>(share, (seed + c * 0x9e3779b1) | 0));
  }

  /** Offers a training window's features and its y (1-based class index). The row is copied only if kept. */
  offer(y: number, features: ArrayLike<number>): void {
    const reservoir = this.reservoirs[y - 1];
    if (!reservoir) throw new RangeError(`y ${y} is not a class index from 1 to ${this.classCount}`);
    reservoir.offer(() => Array.from(features));
  }

  /** The kept windows, class by class, with their y. */
  sample(): { rows: number[][]; ys: number[] } {
    const rows: number[][] = [];
    const ys: number[] = [];
    this.reservoirs.forEach((r, c) => {
      for (const row of r.items()) {
        rows.push(row);
        ys.push(c + 1);
      }
    });
    return { rows, ys };
  }
}

interface TreeNodeJson {
  splitColumn?: number;
  gain?: number;
  numberSamples?: number;
  left?: TreeNodeJson;
  right?: TreeNodeJson;
}

function isNode(value: unknown): value is TreeNodeJson {
  return typeof value === 'object' && value !== null;
}

/** Importances of one tree over the columns it saw (MDI, unnormalised). */
function treeImportance(root: unknown, columns: number): Float64Array {
  const importance = new Float64Array(columns);
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!isNode(node) || !isNode(node.left) || !isNode(node.right)) continue;
    // A node with both children is a split that was made; its gain is Gini(node) minus the
    // size-weighted Gini of its children.
    const { splitColumn, gain, numberSamples } = node;
    if (splitColumn !== undefined && gain !== undefined && numberSamples !== undefined && gain > 0 && splitColumn < columns) importance[splitColumn]! += gain * numberSamples;
    stack.push(node.left, node.right);
  }
  return importance;
}

/** Mean-decrease-in-impurity importances of a one-vs-rest forest for `target` (1-based y), summing to 1 (or all 0). */
export function oneVsRestImportance(rows: readonly (readonly number[])[], ys: readonly number[], target: number, seed: number): number[] {
  const featureCount = rows[0]?.length ?? 0;
  const binary = ys.map((y) => (y === target ? 1 : 0));
  const total = new Float64Array(featureCount);
  if (featureCount === 0 || !binary.includes(1) || !binary.includes(0)) return Array.from(total);
  const forest = new RandomForestClassifier({
    nEstimators: FOREST_SETTINGS.nEstimators,
    // An integer: the library reads a value in (0, 1) as a fraction, and 1 would be one feature.
    maxFeatures: Math.min(featureCount, FOREST_SETTINGS.maxFeaturesPerTree),
    replacement: false,
    useSampleBagging: true,
    noOOB: true,
    seed,
    treeOptions: { maxDepth: FOREST_SETTINGS.maxDepth },
  });
  forest.train(
    rows.map((r) => r.map((v) => (Number.isFinite(v) ? v : 0))),
    binary,
  );
  const model = forest.toJSON().baseModel;
  let trees = 0;
  model.estimators.forEach((estimator, t) => {
    const used = model.indexes[t]!;
    const own = treeImportance((estimator as { root?: unknown }).root, used.length);
    const sum = own.reduce((a, b) => a + b, 0);
    if (!(sum > 0)) return;
    trees++;
    own.forEach((v, j) => (total[used[j]!]! += v / sum));
  });
  if (trees === 0) return Array.from(total);
  const sum = total.reduce((a, b) => a + b, 0);
  return Array.from(total, (v) => v / sum);
}

/**
 * The feature importance answer: per class label, every feature by name with its importance, most
 * important first. Needs two classes or more.
 */
export function featureImportance(rows: readonly (readonly number[])[], ys: readonly number[], classes: readonly string[], featureLabels: readonly string[], seed: number): FeatureImportanceResponse {
  if (classes.length < 2) throw new RangeError('feature importance needs at least two classes');
  if (rows.length !== ys.length) throw new RangeError(`${rows.length} rows but ${ys.length} labels`);
  for (const r of rows) if (r.length !== featureLabels.length) throw new RangeError(`a row has ${r.length} features, the block ${featureLabels.length}`);
  const labels: FeatureImportanceResponse['labels'] = {};
  classes.forEach((label, c) => {
    const importance = oneVsRestImportance(rows, ys, c + 1, (seed + c) | 0);
    labels[label] = {
      features: featureLabels.map((axis, j) => ({ axis, importance: importance[j]! })).sort((a, b) => b.importance - a.importance),
    };
  });
  return { hasFeatureImportance: true, labels };
}
