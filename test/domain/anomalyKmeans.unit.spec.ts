import { describe, expect, it } from 'vitest';
import { AnomalyFitError, anomalyScore, fitAnomalyModel } from '../../domain/learn/anomalyKmeans';

/** A small seeded generator, so the data is the same every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Three blobs in features 0 and 2 (feature 1 is noise on another scale, not chosen), 30 windows each. */
function windows(seed = 7): number[][] {
  const r = random(seed);
  const centres = [[0, 0], [10, 5], [-8, 12]];
  return centres.flatMap(([a, b]) => Array.from({ length: 30 }, () => [a! + r() - 0.5, 1000 * r(), b! + 2 * (r() - 0.5)]));
}

describe('the K-means anomaly model', () => {
  it('scores every training window at or below 0, and a far outlier above 0', () => {
    const rows = windows();
    const { model } = fitAnomalyModel(rows, { axes: [0, 2], clusterCount: 3, seed: 1 });
    expect(model.clusters).toHaveLength(3);
    for (const row of rows) expect(anomalyScore(model, row)).toBeLessThanOrEqual(0);
    expect(anomalyScore(model, [40, 0, -30])).toBeGreaterThan(1);
    // A point between two blobs is outside both.
    expect(anomalyScore(model, [5, 0, 2.5])).toBeGreaterThan(0);
  });

  it('standardises the chosen axes by the training windows, and ignores the others when scoring', () => {
    const rows = windows();
    const { model } = fitAnomalyModel(rows, { axes: [0, 2], clusterCount: 3, seed: 1 });
    const column = rows.map((r) => r[0]!);
    const mean = column.reduce((a, b) => a + b, 0) / column.length;
    expect(model.scaler.mean[0]).toBeCloseTo(mean, 10);
    expect(model.scaler.scale[0]).toBeCloseTo(Math.sqrt(column.reduce((a, b) => a + (b - mean) ** 2, 0) / column.length), 10);
    expect(anomalyScore(model, [rows[0]![0]!, -1e9, rows[0]![2]!])).toBe(anomalyScore(model, rows[0]!));
  });

  it('gives each cluster the largest distance of its windows as radius: the farthest window scores exactly 0', () => {
    const rows = windows();
    const { model } = fitAnomalyModel(rows, { axes: [0, 2], clusterCount: 3, seed: 1 });
    const scores = rows.map((r) => anomalyScore(model, r));
    expect(Math.max(...scores)).toBe(0);
    expect(model.clusters.reduce((n, c) => n + c.windowCount, 0)).toBe(rows.length);
  });

  it('gives the same clusters for the same seed and data', () => {
    const a = fitAnomalyModel(windows(), { axes: [0, 2], clusterCount: 5, seed: 42 });
    const b = fitAnomalyModel(windows(), { axes: [0, 2], clusterCount: 5, seed: 42 });
    expect(JSON.stringify(b.model)).toBe(JSON.stringify(a.model));
  });

  it('refuses fewer windows than clusters, no axis, an axis beyond the features, and non-finite features', () => {
    expect(() => fitAnomalyModel(windows().slice(0, 2), { axes: [0], clusterCount: 3, seed: 1 })).toThrow(AnomalyFitError);
    expect(() => fitAnomalyModel(windows(), { axes: [], clusterCount: 3, seed: 1 })).toThrow(/at least one axis/);
    expect(() => fitAnomalyModel(windows(), { axes: [3], clusterCount: 3, seed: 1 })).toThrow(/axis 3 is beyond the 3 features/);
    expect(() => fitAnomalyModel([...windows(), [NaN, 0, 0]], { axes: [0], clusterCount: 3, seed: 1 })).toThrow(/finite/);
  });
});
