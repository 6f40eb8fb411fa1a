// The filters of the spectral-analysis block against numbers scipy itself produced
// (fixtures/spectralFilters.json, written by bench/dsp/spectralFixtures.py).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { butterSos, cheby1Sos, type SosSection } from '../../../domain/dsp/spectral/iirDesign';
import { sosfilt, sosfiltZi } from '../../../domain/dsp/spectral/sosFilter';
import { decimateSimple } from '../../../domain/dsp/spectral/decimate';

interface Fixture {
  butter: { order: number; wn: number; btype: 'low' | 'high'; sos: SosSection[] }[];
  cheby1: { ratio: number; sos: SosSection[]; zi: [number, number][]; x: number[]; decimated: number[] }[];
  float32Filter: { sos: SosSection[]; x: number[]; y: number[] };
}

const fixture = JSON.parse(readFileSync(new URL('./fixtures/spectralFilters.json', import.meta.url), 'utf8')) as Fixture;

/** Relative error, except for values below 1e-3 (a pole pair on the imaginary axis gives a1 ≈ 1e-17). */
function maxRelativeError(actual: ArrayLike<number>, expected: ArrayLike<number>, floor = 1e-3): number {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i]!;
    worst = Math.max(worst, Math.abs(actual[i]! - e) / Math.max(Math.abs(e), floor));
  }
  return worst;
}

describe('Butterworth design (scipy.signal.butter, output="sos")', () => {
  it.each(fixture.butter.map((d) => [`order ${d.order}, Wn ${d.wn}, ${d.btype}-pass`, d] as const))('gives scipy\'s sections for %s', (_, design) => {
    const sos = butterSos(design.order, design.wn, design.btype);
    expect(sos.length).toBe(design.sos.length);
    // b0 b1 b2 of the first section hold the gain, as small as 1e-14: compared relatively.
    expect(maxRelativeError(sos[0]!.slice(0, 3), design.sos[0]!.slice(0, 3), 0)).toBeLessThan(1e-12);
    expect(maxRelativeError(sos.flat(), design.sos.flat())).toBeLessThan(1e-12);
    // The block filters with float32 coefficients: after that cast they are at most one float32
    // step from scipy's (a1 of a pole pair on the imaginary axis is ~1e-16 for both, not a step).
    const ours = sos.flat().map(Math.fround);
    design.sos.flat().forEach((e, i) => {
      const step = Math.abs(e) < 1e-12 ? 1e-12 : 2 ** (Math.floor(Math.log2(Math.abs(e))) - 23);
      expect(Math.abs(ours[i]! - Math.fround(e))).toBeLessThanOrEqual(step);
    });
  });

  it('refuses odd orders and frequencies outside (0, 1)', () => {
    expect(() => butterSos(3, 0.2, 'low')).toThrow(RangeError);
    expect(() => butterSos(4, 1, 'low')).toThrow(RangeError);
    expect(() => butterSos(4, 0, 'high')).toThrow(RangeError);
  });
});

describe('decimation filter (scipy.signal.cheby1(8, 0.05, 0.8/r, output="sos"), sosfilt_zi)', () => {
  it.each(fixture.cheby1.map((d) => [d.ratio, d] as const))('gives scipy\'s sections, initial state and decimated signal for ratio %i', (ratio, d) => {
    const sos = cheby1Sos(8, 0.05, 0.8 / ratio);
    expect(maxRelativeError(sos.flat(), d.sos.flat())).toBeLessThan(1e-11);
    expect(maxRelativeError(sosfiltZi(sos).flat(), d.zi.flat())).toBeLessThan(1e-10);
    expect(maxRelativeError(decimateSimple(d.x, ratio), d.decimated)).toBeLessThan(1e-9);
  });
});

describe('sosfilt in float32', () => {
  it('reproduces scipy filtering float32 data with float32 coefficients bit for bit or within one float32 step', () => {
    const { sos, x, y } = fixture.float32Filter;
    const actual = sosfilt(sos, x, 'float32');
    let worst = 0;
    for (let i = 0; i < y.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - y[i]!) / Math.max(Math.abs(y[i]!), 1e-3));
    expect(worst).toBeLessThan(1e-6);
  });
});
