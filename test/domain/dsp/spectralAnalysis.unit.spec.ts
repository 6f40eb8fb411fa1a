// The spectral-analysis block against the reference: the golden values of dsp-reference §10, and
// every case of fixtures/spectralAnalysis.json (answers of the reference's own generate_features,
// written by bench/dsp/spectralFixtures.py), within the tolerances of §12; every validation rule
// of §5.2; and a property: any finite input of the right shape gives the declared count.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DspConfigurationError, type DspParams } from '../../../domain/dsp/processingBlock';
import { spectralAnalysisBlock } from '../../../domain/dsp/spectralAnalysis';
import { binRange } from '../../../domain/dsp/spectral/fftFeatures';
import { WAVELETS } from '../../../domain/impulse/dspParameters';

interface FixtureCase {
  name: string;
  values?: number[];
  accelerometer?: number;
  axes: string[];
  frequency: number;
  version: number;
  params: DspParams;
  expected: { features: number[]; labels: string[]; output_config: unknown; fft_used: number[] };
}

const fixture = JSON.parse(readFileSync(new URL('./fixtures/spectralAnalysis.json', import.meta.url), 'utf8')) as {
  /** The accelerometer signal per rate as the float32 samples the reference started from (shorter inputs are prefixes). */
  accelerometerFloat32: Record<string, number[]>;
  cases: FixtureCase[];
};

/** dsp-reference §10's accelerometer input, interleaved: 3 axes, `samples` samples at `fs`. */
function accelerometer(samples: number, fs = 62.5): number[] {
  const out: number[] = [];
  for (let m = 0; m < samples; m++) {
    for (let a = 0; a < 3; a++) {
      out.push(Math.sin((2 * Math.PI * (1 + a) * m) / fs) + 0.5 * Math.cos((2 * Math.PI * 7.5 * m) / fs) + 0.1 * a + 0.05 * Math.sin((2 * Math.PI * 23 * m) / fs + a));
    }
  }
  return out;
}

const AXES = ['accX', 'accY', 'accZ'];
const DEFAULTS: DspParams = {
  'scale-axes': 1, 'input-decimation-ratio': '1', 'filter-type': 'none', 'filter-cutoff': 3, 'filter-order': 6, 'analysis-type': 'FFT',
  'fft-length': 16, 'spectral-peaks-count': 3, 'spectral-peaks-threshold': 0.1, 'spectral-power-edges': '0.1, 0.5, 1.0, 2.0, 5.0',
  'do-log': true, 'do-fft-overlap': true, 'wavelet-level': 1, 'wavelet': 'db4', 'extra-low-freq': false,
};

function run(values: number[], version: number, params: DspParams, axes = AXES, frequency = 62.5, drawGraphs = false) {
  return spectralAnalysisBlock.run({ values, axes, frequency }, { ...DEFAULTS, ...params }, { implementationVersion: version, drawGraphs });
}

/**
 * §12's tolerance for spectral features, as numpy.isclose reads it (|a − e| ≤ atol + rtol·|e|):
 * 2e-5 absolute, 5e-5 relative. It applies to the golden values of §10, whose inputs come from
 * the formula (recomputed sines may differ from Python's in the last bit).
 */
const TOLERANCE = { atol: 2e-5, rtol: 5e-5 };

/**
 * On the reference's exact float32 samples the block reproduces its float32 arithmetic (filter,
 * mean, pywt's DWT, numpy's pairwise float32 sums), so v2-v4 and wavelet features agree to float64
 * rounding. v1 stays at float32 precision: scipy.fftpack and periodogram transform float32 data in
 * single precision, and this block in double.
 */
const EXACT = { atol: 1e-12, rtol: 1e-9 };
const V1 = { atol: 1e-7, rtol: 1e-6 };

function expectClose(actual: ArrayLike<number>, expected: readonly number[], tolerance = TOLERANCE): void {
  expect(actual.length).toBe(expected.length);
  const misses = expected.flatMap((e, i) => (Math.abs(actual[i]! - e) <= tolerance.atol + tolerance.rtol * Math.abs(e) ? [] : [`#${i}: ${actual[i]} vs ${e}`]));
  expect(misses).toEqual([]);
}

describe('golden values of dsp-reference §10 (accelerometer input, 2 s at 62.5 Hz)', () => {
  const input = accelerometer(125);

  it('gives the v4 defaults 39 features, axis 0 as the reference does', () => {
    const result = run(input, 4, {});
    expect(result.features.length).toBe(39);
    expectClose(Array.from(result.features).slice(0, 13), [0.7913596, 1.25e-8, -1.015938, 2.347197, 3.733831, 0.0199246, 0.3431434, -0.755243, -1.00667, -1.04417, -1.186926, -1.372104, -1.380166]);
    expect(result.outputConfig).toEqual({ type: 'flat', shape: { width: 39 } });
    expect(result.fftUsed).toEqual([16]);
  });

  it('gives v1 (low-pass 3 Hz, order 6, FFT 128, 3 peaks) axis 0 as the reference does', () => {
    const result = run(input, 1, { 'filter-type': 'low', 'filter-cutoff': 3, 'filter-order': 6, 'fft-length': 128 });
    expect(result.features.length).toBe(33);
    expectClose(Array.from(result.features).slice(0, 11), [0.6698471, 0.9920635, 0.883673, 0, 0, 0, 0, 0.001401257, 0.08188098, 0.002602249, 0.0003752241]);
    expect(result.labels).toEqual([
      'RMS', 'Peak 1 Freq', 'Peak 1 Height', 'Peak 2 Freq', 'Peak 2 Height', 'Peak 3 Freq', 'Peak 3 Height',
      'Spectral Power 0.1 - 0.5 Hz', 'Spectral Power 0.5 - 1.0 Hz', 'Spectral Power 1.0 - 2.0 Hz', 'Spectral Power 2.0 - 5.0 Hz',
    ]);
  });

  it('gives the db4 level-1 wavelet v4 84 features, the L0 block of axis 0 as the reference does', () => {
    const result = run(input, 4, { 'analysis-type': 'Wavelet' });
    expect(result.features.length).toBe(84);
    expectClose(Array.from(result.features).slice(0, 14), [3.808795, 0.1666667, 0.1666667, -1.824347, -0.8281806, 0.7372434, 1.700086, 0.1049687, 0.0148389, 1.090912, 1.208398, 1.091013, -0.04468419, -0.9368396]);
    expect(result.labels.slice(0, 3)).toEqual(['L0-entropy', 'L0-zcross', 'L0-mcross']);
    expect(result.labels.length).toBe(28);
  });

  it('gives v2 and v3 the v4 features without the spectral skewness and kurtosis', () => {
    const v4 = Array.from(run(input, 4, {}).features);
    for (const version of [2, 3]) {
      const result = run(input, version, {});
      expect(result.features.length).toBe(33);
      expectClose(Array.from(result.features).slice(0, 11), [...v4.slice(0, 3), ...v4.slice(5, 13)]);
      expect(result.labels.slice(0, 4)).toEqual(['RMS', 'Skewness', 'Kurtosis', 'Spectral Power 1.95 - 5.86 Hz']);
    }
  });
});

describe('the reference block on the fixture cases (bench/dsp/spectralFixtures.py)', () => {
  it.each(fixture.cases.map((c) => [c.name, c] as const))('%s: same features (float64 rounding; v1 float32), same labels and output config', (_, c) => {
    const values = c.values ?? fixture.accelerometerFloat32[c.frequency.toFixed(1)]!.slice(0, 3 * c.accelerometer!);
    const result = spectralAnalysisBlock.run({ values, axes: c.axes, frequency: c.frequency }, c.params, { implementationVersion: c.version, drawGraphs: false });
    expectClose(result.features, c.expected.features, c.version === 1 ? V1 : EXACT);
    expect(result.labels).toEqual(c.expected.labels);
    expect(result.outputConfig).toEqual(c.expected.output_config);
    expect(result.fftUsed).toEqual(c.expected.fft_used);
  });

  it('covers every implementation version and both analysis types', () => {
    const kinds = new Set(fixture.cases.map((c) => `${c.version} ${c.params['analysis-type']}`));
    for (const kind of ['1 FFT', '2 FFT', '3 FFT', '4 FFT', '3 Wavelet', '4 Wavelet']) expect(kinds).toContain(kind);
  });
});

describe('FFT bin selection (66dee58, the HEAD behaviour)', () => {
  it('starts a high-pass one bin later than the old rule when the cut-off sits half a bin above a bin', () => {
    // 62.5 Hz, FFT 16: bins are 3.90625 Hz apart; 5.859375 Hz is bin 1.5, so b − 0.5 = 1 exactly.
    expect(binRange('high', 5.859375, 62.5, 16)).toEqual({ start: 2, stop: 9 });
    expect(binRange('low', 3, 62.5, 16)).toEqual({ start: 1, stop: 2 });
    expect(binRange('none', 3, 62.5, 16)).toEqual({ start: 1, stop: 9 });
    expect(binRange('high', 0.1, 62.5, 16)).toEqual({ start: 1, stop: 9 });
  });

  it('caps the cut-off at Nyquist and masks even when the filter order is 0', () => {
    expect(binRange('low', 100, 62.5, 16)).toEqual({ start: 1, stop: 9 });
    const result = run(accelerometer(125), 4, { 'filter-type': 'low', 'filter-cutoff': 10, 'filter-order': 0 });
    expect(result.features.length).toBe(3 * (5 + 3));
  });
});

describe('validation (dsp-reference §5.2): a DspConfigurationError that names the parameter', () => {
  const input = accelerometer(125);
  const refuses = (expectedParameter: string, values: number[], version: number, params: DspParams, frequency = 62.5, axes = AXES) => {
    let error: unknown;
    try {
      run(values, version, params, axes, frequency);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DspConfigurationError);
    expect((error as Error).message).toContain(`"${expectedParameter}"`);
  };

  it('refuses implementation versions other than 1 to 4', () => {
    refuses('implementationVersion', input, 5, {});
    refuses('implementationVersion', input, 0, {});
  });

  it('refuses an FFT length that is not a power of 2', () => refuses('fft-length', input, 4, { 'fft-length': 24 }));
  it('refuses a 1-point FFT, which the reference crashes on', () => refuses('fft-length', input, 4, { 'fft-length': 1 }));
  it('refuses empty input', () => refuses('features', [], 4, {}));
  it('refuses input that does not split into the axes', () => refuses('axes', input.slice(0, 10), 4, {}));
  it('refuses decimation before implementation version 4', () => refuses('input-decimation-ratio', accelerometer(600), 3, { 'input-decimation-ratio': '3' }));
  it('refuses a decimation ratio that is not offered', () => refuses('input-decimation-ratio', input, 4, { 'input-decimation-ratio': '5' }));

  it('refuses a decimation ratio that leaves the cut-off above 0.9 of the new Nyquist', () => {
    refuses('input-decimation-ratio', accelerometer(600), 4, { 'input-decimation-ratio': '10', 'filter-type': 'low', 'filter-cutoff': 3 });
  });

  it('refuses odd filter orders and orders above 8', () => {
    refuses('filter-order', input, 4, { 'filter-type': 'low', 'filter-order': 3 });
    refuses('filter-order', input, 4, { 'filter-type': 'high', 'filter-order': 10 });
    refuses('filter-order', input, 4, { 'filter-type': 'high', 'filter-order': -2 });
  });

  it('refuses a cut-off at or above Nyquist, and one at 0 Hz', () => {
    refuses('filter-cutoff', input, 4, { 'filter-type': 'low', 'filter-cutoff': 31.25 });
    refuses('filter-cutoff', input, 2, { 'filter-type': 'high', 'filter-cutoff': 40 });
    refuses('filter-cutoff', input, 4, { 'filter-type': 'low', 'filter-cutoff': 0 });
  });

  it('refuses a filter whose float32 sections are not stable (cut-off a hair above 0 Hz)', () => {
    refuses('filter-cutoff', input, 4, { 'filter-type': 'low', 'filter-cutoff': 1e-9, 'filter-order': 2 });
    expect(() => run(input, 4, { 'filter-type': 'low', 'filter-cutoff': 1e-9, 'filter-order': 2 })).toThrow(/not stable/);
    expect(run(input, 4, { 'filter-type': 'high', 'filter-cutoff': 0.01, 'filter-order': 2 }).features.length).toBe(39);
  });

  it('refuses a wavelet level the window is too short for, suggesting a window size', () => {
    refuses('wavelet-level', input, 4, { 'analysis-type': 'Wavelet', 'wavelet-level': 2 });
    expect(() => run(input, 4, { 'analysis-type': 'Wavelet', 'wavelet-level': 2 })).toThrow(/at least 2048 ms/);
  });

  it('refuses extra-low-frequency analysis when the decimated window is shorter than half the FFT', () => {
    refuses('extra-low-freq', input, 4, { 'extra-low-freq': true, 'fft-length': 32 });
  });

  it('refuses a cut-off that masks every FFT bin', () => refuses('filter-cutoff', input, 4, { 'filter-type': 'low', 'filter-cutoff': 0.1, 'filter-order': 0 }));

  it('refuses values outside their select options and malformed numbers', () => {
    refuses('filter-type', input, 4, { 'filter-type': 'band' });
    refuses('analysis-type', input, 4, { 'analysis-type': 'DCT' });
    refuses('wavelet', input, 4, { 'analysis-type': 'Wavelet', wavelet: 'db42' });
    refuses('scale-axes', input, 4, { 'scale-axes': 'big' });
    refuses('do-log', input, 4, { 'do-log': 'maybe' });
    refuses('spectral-power-edges', input, 1, { 'spectral-power-edges': '0.1, x' });
  });

  it('refuses non-finite input values and a sampling frequency of 0', () => {
    refuses('features', [...input.slice(0, 30), Number.NaN, ...input.slice(31)], 4, {});
    refuses('frequency', input, 4, {}, 0);
  });

  it('accepts the parameter values as the strings a stored DSP config holds', () => {
    const result = run(input, 4, { 'fft-length': '16', 'do-log': 'true', 'filter-order': '6', 'scale-axes': '1' });
    expect(result.features.length).toBe(39);
  });
});

describe('graphs', () => {
  it('draws the filter response, the filtered signal and the spectrum when asked, and nothing otherwise', () => {
    const input = accelerometer(125);
    const withGraphs = run(input, 4, { 'filter-type': 'low', 'filter-cutoff': 5 }, AXES, 62.5, true);
    expect(withGraphs.graphs.map((g) => g.name)).toEqual(['Filter response', 'After filter', 'Spectral power (log)']);
    const response = withGraphs.graphs[0]!;
    // A 5 Hz low-pass passes DC (0 dB) and stops Nyquist.
    expect(response.X!['Filter response']![0]).toBeCloseTo(0, 3);
    expect(response.X!['Filter response']!.at(-1)!).toBeLessThan(-60);
    expect(Object.keys(withGraphs.graphs[1]!.X!)).toEqual(AXES);
    expect(withGraphs.graphs[1]!.X!.accX!.length).toBe(125);
    expect(withGraphs.graphs[2]!.X!.accY!.length).toBe(9);
    expect(run(input, 4, {}).graphs).toEqual([]);
    const wavelet = run(input, 4, { 'analysis-type': 'Wavelet' }, AXES, 62.5, true);
    expect(wavelet.graphs.map((g) => g.name)).toEqual(['After filter', 'Wavelet Approximation']);
  });
});

describe('any finite input of the right shape', () => {
  const scenario = fc.record({
    version: fc.constantFrom(1, 2, 3, 4),
    axes: fc.integer({ min: 1, max: 3 }),
    samples: fc.integer({ min: 1, max: 300 }),
    frequency: fc.constantFrom(16, 62.5, 100, 1000),
    fft: fc.constantFrom(2, 8, 16, 64, 256),
    filterType: fc.constantFrom('none', 'low', 'high'),
    cutoffFraction: fc.double({ min: 0.01, max: 0.6, noNaN: true }),
    order: fc.constantFrom(0, 2, 4, 6, 8),
    analysis: fc.constantFrom('FFT', 'Wavelet'),
    wavelet: fc.constantFrom(...WAVELETS),
    level: fc.integer({ min: 0, max: 3 }),
    extraLow: fc.boolean(),
    decimation: fc.constantFrom('1', '1', '3', '10'),
    overlap: fc.boolean(),
    log: fc.boolean(),
    peaks: fc.integer({ min: 0, max: 5 }),
    scale: fc.double({ min: -100, max: 100, noNaN: true }),
    seed: fc.integer(),
    magnitude: fc.constantFrom(0, 1e-6, 1, 1e4),
  });

  it('gives as many features as it declares (output_config, label template × axes) or refuses with a DspConfigurationError', () => {
    const outcomes = { features: 0, refused: 0 };
    fc.assert(
      fc.property(scenario, (s) => {
        let state = s.seed >>> 0;
        const next = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32 - 0.5) * s.magnitude;
        const values = Array.from({ length: s.samples * s.axes }, next);
        const params: DspParams = {
          ...DEFAULTS, 'fft-length': s.fft, 'filter-type': s.filterType, 'filter-cutoff': s.cutoffFraction * s.frequency, 'filter-order': s.order,
          'analysis-type': s.analysis, wavelet: s.wavelet, 'wavelet-level': s.level, 'extra-low-freq': s.extraLow, 'input-decimation-ratio': s.decimation,
          'do-fft-overlap': s.overlap, 'do-log': s.log, 'spectral-peaks-count': s.peaks, 'scale-axes': s.scale,
        };
        const axes = ['a', 'b', 'c'].slice(0, s.axes);
        let result;
        try {
          result = spectralAnalysisBlock.run({ values, axes, frequency: s.frequency }, params, { implementationVersion: s.version, drawGraphs: false });
        } catch (error) {
          if (error instanceof DspConfigurationError) {
            outcomes.refused += 1;
            return;
          }
          throw error;
        }
        outcomes.features += 1;
        expect(result.outputConfig).toEqual({ type: 'flat', shape: { width: result.features.length } });
        expect(result.features.length).toBe(result.labels.length * s.axes);
        for (const v of result.features) expect(Number.isFinite(v)).toBe(true);
      }),
      { numRuns: 400 },
    );
    // The property says little if nearly every generated configuration is refused.
    expect(outcomes.features).toBeGreaterThan(100);
  });
});
