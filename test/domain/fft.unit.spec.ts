import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { powerSpectrum, rfft } from '../../domain/dsp/fft';

/** The DFT by its definition: slow, obviously right, the oracle for the library. */
function naiveRfft(frame: number[], n: number): number[] {
  const x = Array.from({ length: n }, (_, i) => (i < frame.length ? frame[i]! : 0));
  const out: number[] = [];
  for (let k = 0; k <= n / 2; k++) {
    let re = 0;
    let im = 0;
    for (let t = 0; t < n; t++) {
      re += x[t]! * Math.cos((2 * Math.PI * k * t) / n);
      im -= x[t]! * Math.sin((2 * Math.PI * k * t) / n);
    }
    out.push(re, im);
  }
  return out;
}

describe('rfft', () => {
  it('matches the DFT definition, truncating long frames and zero-padding short ones as numpy does', () => {
    fc.assert(
      fc.property(fc.constantFrom(2, 4, 8, 16, 64, 256), fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: 1, maxLength: 300 }), (n, frame) => {
        const got = Array.from(rfft(frame, n));
        const want = naiveRfft(frame, n);
        const scale = Math.max(1, ...frame.map(Math.abs)) * n;
        got.forEach((v, i) => expect(Math.abs(v - want[i]!)).toBeLessThanOrEqual(1e-9 * scale));
      }),
      { numRuns: 200 },
    );
  });

  it('gives the power spectrum |X|²/n: a constant frame puts all its power in bin 0', () => {
    const power = powerSpectrum([1, 1, 1, 1, 1, 1, 1, 1], 8);
    expect(power[0]).toBeCloseTo(8, 12);
    for (let k = 1; k < power.length; k++) expect(power[k]).toBeCloseTo(0, 12);
  });

  it('refuses a length that is not a power of two', () => {
    expect(() => rfft([1, 2, 3], 12)).toThrow(/power of two/);
  });
});
