import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../domain/shared/seededRandom';
import { featureImportance, IMPORTANCE_MAX_WINDOWS, ImportanceSampler, oneVsRestImportance } from '../../../domain/dsp/featureImportance';
import { oracleSkipReason, runOracle } from './numpyOracle';

/**
 * Three classes: feature 0 tells class 1 from the rest, feature 1 tells class 2 from the rest, class 3
 * is what is left; features 2-5 are noise.
 */
function data(n: number, seed: number): { rows: number[][]; ys: number[] } {
  const random = seededRandom(seed);
  const rows: number[][] = [];
  const ys: number[] = [];
  for (let i = 0; i < n; i++) {
    const y = (i % 3) + 1;
    rows.push([(y === 1 ? 3 : 0) + random(), (y === 2 ? 3 : 0) + random(), random(), random(), random(), random()]);
    ys.push(y);
  }
  return { rows, ys };
}

const names = ['accX RMS', 'accY RMS', 'n1', 'n2', 'n3', 'n4'];
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('featureImportance', () => {
  const { rows, ys } = data(150, 1);
  const response = featureImportance(rows, ys, ['idle', 'snake', 'wave'], names, 7);

  it('answers per class every feature by name, most important first, importances summing to 1', () => {
    expect(response.hasFeatureImportance).toBe(true);
    expect(Object.keys(response.labels)).toEqual(['idle', 'snake', 'wave']);
    for (const { features } of Object.values(response.labels)) {
      expect(features.map((f) => f.axis).sort()).toEqual([...names].sort());
      expect(sum(features.map((f) => f.importance))).toBeCloseTo(1, 12);
      expect(features.every((f) => f.importance >= 0)).toBe(true);
      expect(features.map((f) => f.importance)).toEqual([...features.map((f) => f.importance)].sort((a, b) => b - a));
    }
  });

  it('finds the feature that separates each class from the rest', () => {
    expect(response.labels.idle!.features[0]!.axis).toBe('accX RMS');
    expect(response.labels.snake!.features[0]!.axis).toBe('accY RMS');
    // The rest-class needs both.
    expect(response.labels.wave!.features.slice(0, 2).map((f) => f.axis).sort()).toEqual(['accX RMS', 'accY RMS']);
    expect(response.labels.idle!.features[0]!.importance).toBeGreaterThan(0.5);
  });

  it('gives the same answer on a rerun with the same seed', () => {
    expect(featureImportance(rows, ys, ['idle', 'snake', 'wave'], names, 7)).toEqual(response);
  });

  it('refuses fewer than two classes and rows that do not match the feature names', () => {
    expect(() => featureImportance(rows, ys, ['idle'], names, 1)).toThrow(/at least two classes/);
    expect(() => featureImportance([[1, 2]], [1], ['a', 'b'], names, 1)).toThrow(/2 features, the block 6/);
  });
});

describe('oneVsRestImportance', () => {
  it('sums to 1 and is never negative for any data some feature separates, and is all zeros when none does', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }).chain((f) => fc.array(fc.tuple(fc.array(fc.integer({ min: -5, max: 5 }), { minLength: f, maxLength: f }), fc.integer({ min: 1, max: 3 })), { minLength: 2, maxLength: 40 })),
        fc.integer(),
        (points, seed) => {
          const rows = points.map(([r]) => r);
          const ys = points.map(([, y]) => y);
          const importance = oneVsRestImportance(rows, ys, 1, seed);
          expect(importance).toHaveLength(rows[0]!.length);
          expect(importance.every((v) => v >= 0 && Number.isFinite(v))).toBe(true);
          const total = sum(importance);
          if (total !== 0) expect(total).toBeCloseTo(1, 12);
        },
      ),
      { numRuns: 60 },
    );
    expect(oneVsRestImportance([[1, 2], [1, 2], [1, 2], [1, 2], [1, 2]], [1, 2, 1, 2, 1], 1, 3)).toEqual([0, 0]);
    expect(oneVsRestImportance([[1], [2]], [2, 2], 1, 3)).toEqual([0]);
  });
});

describe('ImportanceSampler', () => {
  it('keeps at most its bound, every class its share even when rare, and copies the rows it keeps', () => {
    const sampler = new ImportanceSampler(2, 5, 100);
    const row = new Float32Array([1, 2]);
    for (let i = 0; i < 10_000; i++) sampler.offer(i % 1000 === 0 ? 2 : 1, row);
    row[0] = 99;
    const { rows, ys } = sampler.sample();
    expect(rows.length).toBe(60);
    expect(ys.filter((y) => y === 2).length).toBe(10);
    expect(rows[0]).toEqual([1, 2]);
    expect(() => sampler.offer(3, row)).toThrow(/not a class index/);
    expect(IMPORTANCE_MAX_WINDOWS).toBe(300);
  });
});

const skip = oracleSkipReason('numpy, sklearn');
describe.skipIf(skip !== undefined)(`against scikit-learn${skip ? ` (${skip})` : ''}`, () => {
  it('ranks the same feature first as RandomForestClassifier.feature_importances_ one-vs-rest', () => {
    const { rows, ys } = data(150, 2);
    const theirs = runOracle<number[][]>(
      `import json, sys, numpy as np
from sklearn.ensemble import RandomForestClassifier
d = json.load(sys.stdin); x = np.array(d['rows']); y = np.array(d['ys'])
print(json.dumps([RandomForestClassifier(n_estimators=100, random_state=0).fit(x, y == c).feature_importances_.tolist() for c in (1, 2, 3)]))`,
      { rows, ys },
    );
    const ours = [1, 2, 3].map((c) => oneVsRestImportance(rows, ys, c, 11));
    for (let c = 0; c < 3; c++) {
      const top = (xs: number[]) => xs.indexOf(Math.max(...xs));
      expect(top(ours[c]!)).toBe(top(theirs[c]!));
      // The noise features together stay minor in both.
      expect(sum(ours[c]!.slice(2))).toBeLessThan(0.3);
      expect(sum(theirs[c]!.slice(2))).toBeLessThan(0.3);
    }
  });
});
