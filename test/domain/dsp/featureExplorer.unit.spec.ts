import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildFeatureExplorer, explorerCapacity, EXPLORER_MAX_WINDOWS, featureExplorerResponse, WindowReservoir, type ExplorerWindow } from '../../../domain/dsp/featureExplorer';
import { seededRandom } from '../../../domain/shared/seededRandom';

/** Two classes far apart in 12 dimensions, with noise from a seeded generator. */
function clusters(n: number, seed: number): ExplorerWindow[] {
  const random = seededRandom(seed);
  return Array.from({ length: n }, (_, i) => {
    const y = (i % 2) + 1;
    return {
      features: Array.from({ length: 12 }, (_, f) => (y === 1 ? 0 : 5) + (f % 3) + random()),
      y,
      yLabel: y === 1 ? 'idle' : 'wave',
      sample: { id: 100 + i, name: `s${i}`, startMs: 0, endMs: 1000 },
    };
  });
}

describe('seededRandom', () => {
  it('gives the same sequence for the same seed, another for another, all in [0, 1)', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const c = seededRandom(8);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(Array.from({ length: 1000 }, () => c())).not.toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(xs.reduce((s, x) => s + x, 0) / xs.length).toBeCloseTo(0.5, 1);
  });
});

describe('WindowReservoir', () => {
  it('keeps at most its capacity, in the order offered, and builds only what it keeps', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 500 }), fc.integer(), (capacity, n, seed) => {
        const r = new WindowReservoir<number>(capacity, seed);
        let built = 0;
        for (let i = 0; i < n; i++) r.offer(() => (built++, i));
        const items = r.items();
        expect(r.seen).toBe(n);
        expect(items.length).toBe(Math.min(n, capacity));
        expect([...items].sort((a, b) => a - b)).toEqual(items);
        expect(new Set(items).size).toBe(items.length);
        expect(built).toBeLessThanOrEqual(n);
        if (n <= capacity) expect(items).toEqual(Array.from({ length: n }, (_, i) => i));
      }),
    );
  });

  it('draws every window with the same chance, and the same windows for the same seed', () => {
    const counts = new Array<number>(100).fill(0);
    for (let seed = 0; seed < 2000; seed++) {
      const r = new WindowReservoir<number>(10, seed);
      for (let i = 0; i < 100; i++) r.offer(() => i);
      for (const i of r.items()) counts[i]!++;
    }
    // Each window is kept with probability 10/100: 200 times of 2000 expected, binomial sd ≈ 13.4.
    for (const c of counts) expect(Math.abs(c - 200)).toBeLessThan(70);
    const again = (seed: number) => {
      const r = new WindowReservoir<number>(10, seed);
      for (let i = 0; i < 100; i++) r.offer(() => i);
      return r.items();
    };
    expect(again(5)).toEqual(again(5));
    expect(EXPLORER_MAX_WINDOWS).toBe(2000);
  });
});

describe('explorerCapacity', () => {
  it('keeps 2,000 windows of narrow blocks and bounds the values held for wide ones', () => {
    expect(explorerCapacity(39)).toBe(2000);
    expect(explorerCapacity(16_000)).toBe(125);
    expect(explorerCapacity(10_000_000)).toBe(50);
    for (const f of [1, 33, 650, 1000, 4000, 99_999]) expect(explorerCapacity(f) * f).toBeLessThanOrEqual(Math.max(2_000_000, 50 * f));
  });
});

describe('buildFeatureExplorer', () => {
  it('draws the same UMAP picture on a rerun with the same seed, another with another seed', () => {
    const windows = clusters(60, 1);
    const a = buildFeatureExplorer(windows, 60, { reduce: true, seed: 42 });
    const b = buildFeatureExplorer(windows, 60, { reduce: true, seed: 42 });
    const c = buildFeatureExplorer(windows, 60, { reduce: true, seed: 43 });
    expect(a.reduced).toBe(true);
    expect(a.windows.map((w) => w.coordinates)).toEqual(b.windows.map((w) => w.coordinates));
    expect(a.windows.map((w) => w.coordinates)).not.toEqual(c.windows.map((w) => w.coordinates));
    expect(a.windows.every((w) => w.coordinates!.every(Number.isFinite))).toBe(true);
  });

  it('keeps windows of well-separated classes apart in the 2-D picture', () => {
    const explorer = buildFeatureExplorer(clusters(80, 2), 80, { reduce: true, seed: 1 });
    const points = explorer.windows.map((w) => ({ p: w.coordinates!, y: w.y }));
    let same = 0;
    for (const a of points) {
      let best: { d: number; y: number } = { d: Infinity, y: 0 };
      for (const b of points) {
        if (a === b) continue;
        const d = Math.hypot(a.p[0] - b.p[0], a.p[1] - b.p[1]);
        if (d < best.d) best = { d, y: b.y };
      }
      if (best.y === a.y) same++;
    }
    expect(same / points.length).toBeGreaterThan(0.95);
  });

  it('reduces one or two windows and non-finite features without failing', () => {
    const [one, two] = [clusters(1, 3), clusters(2, 3)];
    expect(buildFeatureExplorer(one, 1, { reduce: true, seed: 1 }).windows[0]!.coordinates).toEqual([0, 0]);
    two[0]!.features[3] = NaN;
    expect(buildFeatureExplorer(two, 2, { reduce: true, seed: 1 }).windows.every((w) => w.coordinates!.every(Number.isFinite))).toBe(true);
    expect(buildFeatureExplorer([], 0, { reduce: true, seed: 1 }).windows).toEqual([]);
  });
});

describe('featureExplorerResponse', () => {
  const windows = clusters(4, 4);

  it('puts the UMAP coordinates first and the requested features after them for reduced blocks', () => {
    const explorer = buildFeatureExplorer(windows, 1234, { reduce: true, seed: 9 });
    const response = featureExplorerResponse(explorer, [0, 5, 99]);
    expect(response.totalSampleCount).toBe(1234);
    expect(response.skipFirstFeatures).toBe(2);
    expect(response.data[1]).toEqual({
      X: { 0: explorer.windows[1]!.coordinates![0], 1: explorer.windows[1]!.coordinates![1], 2: windows[1]!.features[0], 7: windows[1]!.features[5] },
      y: 2,
      yLabel: 'wave',
      sample: { id: 101, name: 's1', startMs: 0, endMs: 1000 },
    });
  });

  it('gives the requested feature indices themselves for blocks without reduction (flatten)', () => {
    const response = featureExplorerResponse(buildFeatureExplorer(windows, 4, { reduce: false, seed: 9 }), [2, 0, 1]);
    expect(response.skipFirstFeatures).toBe(0);
    expect(response.data.map((d) => d.X)).toEqual(windows.map((w) => ({ 0: w.features[0], 1: w.features[1], 2: w.features[2] })));
  });
});
