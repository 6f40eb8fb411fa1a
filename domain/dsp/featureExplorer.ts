// The feature explorer of the generate-features job (dsp-reference 11): a bounded, seeded sample of
// a category's windows, reduced to 2-D with UMAP for blocks that reduce dimensions, and the
// DspTrainedFeaturesResponse served from it.
//
// * Which windows. At most EXPLORER_MAX_WINDOWS (fewer for wide blocks, explorerCapacity), drawn
//   uniformly by reservoir sampling while X is written (one pass, at most that many rows held), with a
//   seeded generator: the same data and seed give the same windows. totalSampleCount is the number of
//   windows in the category.
// * Reduction. umap-js (the JavaScript port of UMAP by PAIR, MIT) with its `random` option fed by the
//   same seeded generator, so a rerun draws the same picture. The Studio's hyperparameters are not
//   public: these are umap-learn's defaults (15 neighbours, min_dist 0.1, 2 components) with 200
//   epochs, umap-learn's own choice for large sets, which keeps 2,000 windows to seconds. Non-finite
//   features (a constant window's statistics can be NaN) enter the reduction as 0.
// * Response. For reduced blocks, X holds the two UMAP coordinates at keys 0 and 1 (skipFirstFeatures
//   2) and each requested feature f at key f + 2; for the others (flatten) X holds the requested
//   feature indices themselves, for the user's 3-D scatter (featureAx1/2/3).
import { UMAP } from 'umap-js';
import { seededRandom } from '../shared/seededRandom';

/** Most windows a category's explorer holds and reduces. */
export const EXPLORER_MAX_WINDOWS = 2000;
/** Most feature values it holds: wide blocks (raw audio: 16,000 features a window) keep fewer windows. */
export const EXPLORER_MAX_VALUES = 2_000_000;

/** The reservoir capacity for a block of `featureCount` features: 2,000 windows, fewer for wide blocks, at least 50. */
export function explorerCapacity(featureCount: number): number {
  return Math.max(50, Math.min(EXPLORER_MAX_WINDOWS, Math.floor(EXPLORER_MAX_VALUES / Math.max(1, featureCount))));
}

export const UMAP_SETTINGS = { nComponents: 2, nNeighbors: 15, minDist: 0.1, nEpochs: 200 } as const;


/**
 * A uniform sample of at most `capacity` of the items offered, in one pass (reservoir sampling,
 * algorithm R), returned in the order they were offered.
 */
export class WindowReservoir<T> {
  private readonly kept: { at: number; item: T }[] = [];
  private offered = 0;
  private readonly random: () => number;

  constructor(
    readonly capacity: number,
    seed: number,
  ) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`bad reservoir capacity ${capacity}`);
    this.random = seededRandom(seed);
  }

  /** How many items were offered. */
  get seen(): number {
    return this.offered;
  }

  /**
   * Offers one item. `make` builds what is kept (a copy of a row that is a view) and is called only
   * for items that enter the sample.
   */
  offer(make: () => T): void {
    const at = this.offered++;
    if (this.kept.length < this.capacity) {
      this.kept.push({ at, item: make() });
      return;
    }
    const slot = Math.floor(this.random() * (at + 1));
    if (slot < this.capacity) this.kept[slot] = { at, item: make() };
  }

  items(): T[] {
    return [...this.kept].sort((a, b) => a.at - b.at).map((k) => k.item);
  }
}

export interface ExplorerWindow {
  features: number[];
  /** The window's class, as in y.npy (1-based index in the class list). */
  y: number;
  yLabel: string;
  sample: { id: number; name: string; startMs: number; endMs: number };
}

/** What the job stores for one category. */
export interface FeatureExplorer {
  totalSampleCount: number;
  /** True when the windows carry UMAP coordinates. */
  reduced: boolean;
  windows: (ExplorerWindow & { coordinates?: [number, number] })[];
}

/**
 * The explorer of a category from its sampled windows: reduced with a seeded UMAP when `reduce`
 * (blocks with visualization "dimensionalityReduction"), as they are otherwise.
 */
export function buildFeatureExplorer(windows: readonly ExplorerWindow[], totalSampleCount: number, options: { reduce: boolean; seed: number }): FeatureExplorer {
  if (!options.reduce) return { totalSampleCount, reduced: false, windows: windows.map((w) => ({ ...w })) };
  return { totalSampleCount, reduced: true, windows: reduce(windows, options.seed).map((coordinates, i) => ({ ...windows[i]!, coordinates })) };
}

function reduce(windows: readonly ExplorerWindow[], seed: number): [number, number][] {
  // UMAP needs two points to have a neighbour; one window sits at the origin.
  if (windows.length === 0) return [];
  if (windows.length === 1) return [[0, 0]];
  const data = windows.map((w) => w.features.map((v) => (Number.isFinite(v) ? v : 0)));
  const umap = new UMAP({ ...UMAP_SETTINGS, nNeighbors: Math.min(UMAP_SETTINGS.nNeighbors, windows.length - 1), random: seededRandom(seed) });
  return umap.fit(data).map((p) => [p[0]!, p[1]!]);
}

/** The SDK's DspTrainedFeaturesResponse, without `success`. */
export interface FeatureExplorerResponse {
  totalSampleCount: number;
  data: { X: Record<string, number>; y: number; yLabel: string; sample: { id: number; name: string; startMs: number; endMs: number } }[];
  skipFirstFeatures: number;
}

/** The explorer answer with the requested feature indices (featureAx1/2/3); indices out of range are left out. */
export function featureExplorerResponse(explorer: FeatureExplorer, featureAxes: readonly number[]): FeatureExplorerResponse {
  const skip = explorer.reduced ? 2 : 0;
  return {
    totalSampleCount: explorer.totalSampleCount,
    skipFirstFeatures: skip,
    data: explorer.windows.map((w) => {
      const X: Record<string, number> = {};
      if (explorer.reduced && w.coordinates) {
        X['0'] = w.coordinates[0];
        X['1'] = w.coordinates[1];
      }
      for (const f of featureAxes) {
        const v = Number.isInteger(f) && f >= 0 ? w.features[f] : undefined;
        if (v !== undefined) X[String(f + skip)] = v;
      }
      return { X, y: w.y, yLabel: w.yLabel, sample: { ...w.sample } };
    }),
  };
}
