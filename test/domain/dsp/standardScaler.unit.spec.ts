import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { standardize, StandardScalerFit } from '../../../domain/dsp/standardScaler';
import { oracleSkipReason, runOracle } from './numpyOracle';

function fit(rows: number[][]) {
  const f = new StandardScalerFit(rows[0]!.length);
  for (const r of rows) f.add(r);
  return f.result();
}

/** Two-pass mean and population deviation, the definition. */
function direct(rows: number[][], j: number): { mean: number; std: number } {
  const mean = rows.reduce((s, r) => s + r[j]!, 0) / rows.length;
  const variance = rows.reduce((s, r) => s + (r[j]! - mean) ** 2, 0) / rows.length;
  return { mean, std: Math.sqrt(variance) };
}

// Values on a 1e-6 grid: features are not 1e-162, whose variances underflow to subnormals where
// no float computation (numpy's included) keeps its precision.
const value = fc.double({ min: -1e6, max: 1e6, noNaN: true }).map((v) => Math.round(v * 1e6) / 1e6);
const matrix = fc.integer({ min: 1, max: 5 }).chain((cols) => fc.array(fc.array(value, { minLength: cols, maxLength: cols }), { minLength: 1, maxLength: 60 }));

describe('StandardScalerFit', () => {
  it('learns the mean and population standard deviation of each column, as computed directly', () => {
    fc.assert(
      fc.property(matrix, (rows) => {
        const scaler = fit(rows);
        expect(scaler.count).toBe(rows.length);
        rows[0]!.forEach((_, j) => {
          const d = direct(rows, j);
          expect(scaler.mean[j]).toBeCloseTo(d.mean, 6);
          if (d.std > 1e-6 * Math.max(1, Math.abs(d.mean))) expect(Math.abs(scaler.scale[j]! - d.std) / d.std).toBeLessThan(1e-7);
        });
      }),
    );
  });

  it('gives a constant column σ = 1, so it standardizes to 0', () => {
    const scaler = fit([[5, 1], [5, 2], [5, 3]]);
    expect(scaler.scale[0]).toBe(1);
    expect(scaler.scale[1]).toBeCloseTo(Math.sqrt(2 / 3), 12);
    expect(Array.from(standardize(scaler, [5, 2]))).toEqual([0, 0]);
    // 0.1 summed in floating point is not exactly constant; it still counts as constant.
    expect(fit(Array.from({ length: 1000 }, () => [0.1])).scale[0]).toBe(1);
  });

  it('standardizes the training rows to mean 0 and deviation 1 in every varying column', () => {
    fc.assert(
      fc.property(matrix, (rows) => {
        const scaler = fit(rows);
        const z = rows.map((r) => Array.from(standardize(scaler, r, new Float64Array(r.length))));
        rows[0]!.forEach((_, j) => {
          const d = direct(z, j);
          expect(Math.abs(d.mean)).toBeLessThan(1e-6);
          if (scaler.scale[j] !== 1) expect(d.std).toBeCloseTo(1, 6);
        });
      }),
    );
  });

  it('refuses rows of the wrong width and an empty fit', () => {
    const f = new StandardScalerFit(2);
    expect(() => f.add([1])).toThrow(/1 features, expected 2/);
    expect(() => f.result()).toThrow(/at least one/);
  });

  const skip = oracleSkipReason('numpy, sklearn');
  it.skipIf(skip !== undefined)(`matches scikit-learn's StandardScaler${skip ? ` (${skip})` : ''}`, () => {
    const rows = Array.from({ length: 200 }, (_, i) => [Math.sin(i) * 100 + 3, 7, i % 5 === 0 ? 1e-3 : 0, (i * 7919) % 101]);
    const [mean, scale, z] = runOracle<[number[], number[], number[]]>(
      'import json, sys, numpy as np\nfrom sklearn.preprocessing import StandardScaler\nx = np.array(json.load(sys.stdin))\ns = StandardScaler().fit(x)\nprint(json.dumps([s.mean_.tolist(), s.scale_.tolist(), s.transform(x[:3]).reshape(-1).tolist()]))',
      rows,
    );
    const scaler = fit(rows);
    scaler.mean.forEach((m, j) => expect(m).toBeCloseTo(mean[j]!, 10));
    scaler.scale.forEach((s, j) => expect(s / scale[j]!).toBeCloseTo(1, 10));
    expect(Array.from(rows.slice(0, 3).flatMap((r) => Array.from(standardize(scaler, r, new Float64Array(4)))))).toEqual(z.map((v) => expect.closeTo(v, 9)));
  });
});
