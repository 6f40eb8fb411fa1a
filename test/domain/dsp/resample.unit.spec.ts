import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resampleInputSpan, resampleInterleaved, resampleInterleavedRange, resampledLength, resamplingAlgorithmVersion } from '../../../domain/dsp/resample';
import { oracleSkipReason, runOracle } from './numpyOracle';

const SCIPY = `
import json, sys, math
import numpy as np
from scipy import signal
cases = json.load(sys.stdin)
out = []
for c in cases:
    x = np.array(c['values'], dtype=float).reshape(-1, c['axes'])
    n = x.shape[0]
    new = max(int(math.ceil((c['to'] / c['from']) * n)), 1)
    y = x if new == n else signal.resample_poly(x, new, n, axis=0)
    out.append(y.reshape(-1).tolist())
print(json.dumps(out))
`;

function signal(rows: number, axes: number, seed: number): Float64Array {
  const v = new Float64Array(rows * axes);
  for (let i = 0; i < rows; i++) for (let a = 0; a < axes; a++) v[i * axes + a] = Math.sin((i + 1) * (0.07 + 0.05 * a) + seed) * (a + 1) + 0.3 * Math.cos(i * 1.3 + seed);
  return v;
}

describe('resampledLength', () => {
  it('is ceil(to / from × length), like the reference calc_resampled_size', () => {
    expect(resampledLength(100, 100, 62.5)).toBe(63);
    expect(resampledLength(1000, 100, 50)).toBe(500);
    expect(resampledLength(3, 16000, 100)).toBe(1);
    expect(resampledLength(0, 100, 50)).toBe(0);
  });

  it('keeps the length when the rates agree, whichever way they were computed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.double({ min: 1e-3, max: 1e6, noNaN: true }), (n, hz) => {
        expect(resampledLength(n, 1000 / (1000 / hz), hz)).toBe(n);
      }),
    );
  });
});

describe('resampleInterleaved', () => {
  it('returns the input itself when the rate does not change', () => {
    const v = signal(10, 2, 0);
    expect(resampleInterleaved(v, 2, 50, 50)).toBe(v);
  });

  // The polyphase filters of a Kaiser β = 5 design have a DC gain within about 1e-3 of 1 per phase
  // (scipy's too), so a constant comes back constant to that precision, not exactly.
  it('keeps a constant signal constant, within the filter ripple, away from the edges and keeps the axes apart', () => {
    const rows = 400;
    const v = new Float64Array(rows * 2);
    for (let i = 0; i < rows; i++) {
      v[2 * i] = 3;
      v[2 * i + 1] = -1;
    }
    const out = resampleInterleaved(v, 2, 100, 62.5);
    expect(out.length).toBe(250 * 2);
    for (let k = 20; k < 230; k++) {
      expect(out[2 * k]).toBeCloseTo(3, 2);
      expect(out[2 * k + 1]).toBeCloseTo(-1, 2);
    }
  });

  it('names its algorithm version', () => {
    expect(resamplingAlgorithmVersion).toBe(1);
  });

  const skip = oracleSkipReason('numpy, scipy');
  describe.skipIf(skip !== undefined)(`against scipy.signal.resample_poly${skip ? ` (${skip})` : ''}`, () => {
    it('gives the same rows for down- and upsampling, rational and awkward ratios, several axes, filters too long to hold', () => {
      const cases = [
        { rows: 200, axes: 3, from: 100, to: 62.5 },
        { rows: 160, axes: 1, from: 16000, to: 44100 },
        { rows: 1003, axes: 2, from: 100, to: 62.5 },
        { rows: 97, axes: 1, from: 50, to: 51 },
        { rows: 64, axes: 2, from: 1000 / 16, to: 100 },
        { rows: 5, axes: 1, from: 100, to: 10 },
        // 110,003 rows to 68,752: coprime, a 2.2-million-tap filter, evaluated tap by tap.
        { rows: 110_003, axes: 1, from: 100, to: 62.5 },
      ].map((c, ix) => ({ ...c, values: Array.from(signal(c.rows, c.axes, ix)) }));
      const expected = runOracle<number[][]>(SCIPY, cases);
      cases.forEach((c, ix) => {
        const ours = resampleInterleaved(Float64Array.from(c.values), c.axes, c.from, c.to);
        const theirs = expected[ix]!;
        expect(ours.length).toBe(theirs.length);
        let worst = 0;
        for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(ours[i]! - theirs[i]!));
        expect(worst).toBeLessThan(1e-9);
      });
    });
  });
});

describe('resampleInterleavedRange (a window without the whole sample)', () => {
  const bytes = (v: Float64Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

  it('gives bit for bit the rows of the whole resampling, from only the input rows its span names', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom(16000, 100, 62.5, 50, 44100, 1000 / 16, 51, 10),
        fc.constantFrom(16000, 100, 62.5, 50, 44100, 1000 / 16, 51, 10),
        fc.nat(),
        fc.nat(),
        (rows, axes, from, to, a, b) => {
          const values = signal(rows, axes, a % 7);
          const whole = resampleInterleaved(values, axes, from, to);
          const nOut = whole.length / axes;
          const kFrom = a % nOut;
          const kTo = kFrom + 1 + (b % (nOut - kFrom));
          const span = resampleInputSpan(rows, from, to, kFrom, kTo);
          expect(span.from).toBeGreaterThanOrEqual(0);
          expect(span.to).toBeLessThanOrEqual(rows);
          const held = values.slice(span.from * axes, span.to * axes);
          const part = resampleInterleavedRange(held, axes, rows, span.from, from, to, kFrom, kTo);
          expect(bytes(part).equals(bytes(whole.subarray(kFrom * axes, kTo * axes)))).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('refuses input rows that do not cover the span', () => {
    const values = signal(1000, 1, 1);
    const span = resampleInputSpan(1000, 100, 62.5, 300, 340);
    expect(span.to - span.from).toBeGreaterThan(40);
    const short = values.slice(span.from + 1, span.to);
    expect(() => resampleInterleavedRange(short, 1, 1000, span.from + 1, 100, 62.5, 300, 340)).toThrow(RangeError);
  });
});
