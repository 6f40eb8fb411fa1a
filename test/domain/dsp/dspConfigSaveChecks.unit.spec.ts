import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { processingBlocks } from '../../../domain/dsp/blocks';
import { DspConfigurationError } from '../../../domain/dsp/processingBlock';
import { dspBlockDefinition } from '../../../domain/impulse/blockCatalog';
import { defaultDspConfig, dspRunRefusals, validateDspConfig, type DspConfigValues } from '../../../domain/impulse/dspConfig';

// Parameters the blocks refuse when they run must be refused when they are saved (or a job
// requested), naming the parameter; each case is also run through the block to show that it really
// is refused there, so the save-time check is not stricter than the block.
const def = (type: string) => dspBlockDefinition(type)!;
const saved = (type: string, config: DspConfigValues, version: number, frequencyHz?: number, windowSizeMs?: number) =>
  validateDspConfig(def(type), { ...defaultDspConfig(def(type)), ...config }, { implementationVersion: version, ...(frequencyHz === undefined ? {} : { frequencyHz }), ...(windowSizeMs === undefined ? {} : { windowSizeMs }), runRefusals: dspRunRefusals });
const runRefusal = (type: string, config: DspConfigValues, version: number, frequencyHz: number, windowSizeMs: number): string | undefined => {
  const rows = Math.floor((windowSizeMs * frequencyHz) / 1000);
  const values = Array.from({ length: rows }, (_, i) => Math.sin(i / 3) * 50);
  try {
    processingBlocks.get(type)!.run({ values, axes: ['audio'], frequency: frequencyHz }, { ...defaultDspConfig(def(type)), ...config }, { implementationVersion: version, drawGraphs: false });
    return undefined;
  } catch (error) {
    if (error instanceof DspConfigurationError) return error.message;
    throw error;
  }
};

describe('DSP parameters refused when saved, as the blocks refuse them when run', () => {
  it('refuses old-version mfe and mfcc filterbanks with rows of zeros, and takes the same parameters on the new mel scale', () => {
    // dsp-reference 2: old mels at 16 kHz / fft 256 with 32 or 40 filters raise this error.
    const config = { num_filters: '40', fft_length: '256' };
    for (const [type, version] of [['mfe', 2], ['mfe', 3], ['mfcc', 1], ['mfcc', 3]] as const) {
      expect(runRefusal(type, config, version, 16000, 1000), `${type} v${version}`).toMatch(/"num_filters": at least one row of the mel filterbank contains all zeros/);
      // Only the frequency is needed to see it: the input block's window may be unknown.
      expect(saved(type, config, version, 16000), `${type} v${version}`).toEqual([expect.stringMatching(/^"num_filters": at least one row of the mel filterbank contains all zeros; lower the filter number to 32/)]);
      expect(saved(type, { ...config, fft_length: '512' }, version, 16000, 1000), `${type} v${version}`).toEqual([]);
    }
    for (const type of ['mfe', 'mfcc']) {
      expect(runRefusal(type, config, 4, 16000, 1000)).toBeUndefined();
      expect(saved(type, config, 4, 16000, 1000)).toEqual([]);
    }
    // Without a frequency there is nothing to build the filterbank from: the job checks it.
    expect(saved('mfe', config, 2)).toEqual([]);
  });

  it('refuses a noise floor of -12 dB where the version uses it, and not where it does not', () => {
    for (const [type, version] of [['mfe', 3], ['mfe', 4], ['spectrogram', 3], ['spectrogram', 4]] as const) {
      expect(runRefusal(type, { noise_floor_db: '-12' }, version, 16000, 1000), `${type} v${version}`).toMatch(/"noise_floor_db"/);
      // Refused even without a frequency or window: it does not depend on them.
      expect(saved(type, { noise_floor_db: '-12' }, version), `${type} v${version}`).toEqual(['"noise_floor_db": cannot be -12 (the scaling would divide by zero), got -12']);
      expect(saved(type, { noise_floor_db: '-13', fft_length: '512' }, version, 16000, 1000)).toEqual([]);
    }
    expect(runRefusal('mfe', { noise_floor_db: '-12', fft_length: '512' }, 2, 16000, 1000)).toBeUndefined();
    expect(saved('mfe', { noise_floor_db: '-12' }, 2)).toEqual([]);
  });

  it('finds by running the block what depends on the window: a wavelet level too deep, extra low frequencies too short', () => {
    const wavelet = { 'analysis-type': 'Wavelet', 'wavelet-level': '6' };
    const refusal = runRefusal('spectral-analysis', wavelet, 4, 62.5, 1000);
    expect(refusal).toMatch(/^"wavelet-level": wavelet decomposition level is too high/);
    expect(saved('spectral-analysis', wavelet, 4, 62.5, 1000)).toEqual([refusal]);
    expect(saved('spectral-analysis', wavelet, 4, 62.5, 40_000)).toEqual([]);

    const low = { 'extra-low-freq': 'true', 'fft-length': '64' };
    const lowRefusal = runRefusal('spectral-analysis', low, 4, 62.5, 2000);
    expect(lowRefusal).toMatch(/^"extra-low-freq": extra low frequency requires at least 320\.0 samples/);
    expect(saved('spectral-analysis', low, 4, 62.5, 2000)).toEqual([lowRefusal]);
    expect(saved('spectral-analysis', low, 4, 62.5, 10_000)).toEqual([]);
  });

  it('keeps the defaults of every block valid for a typical window, and leaves the running out of the run endpoints', () => {
    for (const [type, fs, ms] of [['spectral-analysis', 62.5, 2000], ['mfe', 16000, 1000], ['mfcc', 16000, 1000], ['spectrogram', 16000, 1000], ['flatten', 62.5, 2000], ['raw', 62.5, 2000]] as const) {
      expect(saved(type, {}, def(type).info.latestImplementationVersion, fs, ms), type).toEqual([]);
    }
    const wavelet = { ...defaultDspConfig(def('spectral-analysis')), 'analysis-type': 'Wavelet', 'wavelet-level': '6' };
    expect(validateDspConfig(def('spectral-analysis'), wavelet, { implementationVersion: 4, frequencyHz: 62.5, windowSizeMs: 1000 })).toEqual([]);
  });
});

describe('any config accepted when saved runs on any window of that size', () => {
  /** A value for a parameter: mostly within its rules, near the edges that matter to the blocks. */
  const valueOf = (p: ReturnType<typeof def>['parameters'][number]['items'][number]): fc.Arbitrary<string> => {
    switch (p.type) {
      case 'boolean':
        return fc.constantFrom('true', 'false');
      case 'select':
        return fc.constantFrom(...(p.selectOptions ?? []).map((o) => o.value));
      case 'int': {
        const min = p.minVal ?? -20;
        const max = Math.min(p.maxVal ?? min + 1024, min + 1024);
        const powers = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024].filter((n) => n >= min && n <= max);
        return fc.oneof(fc.integer({ min, max }), fc.constantFrom(...(powers.length > 0 ? powers : [min]))).map(String);
      }
      case 'float': {
        const min = p.minVal ?? 0;
        const max = p.maxVal ?? Math.max(min + 1, 100);
        return fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((v) => String(Math.round(v * 1000) / 1000));
      }
      case 'string':
        return fc.constant(p.defaultValue);
    }
  };

  for (const [type, frequencies, windows] of [
    ['spectral-analysis', [25, 62.5, 100], [500, 1000, 2000]],
    ['mfe', [8000, 16000], [250, 1000]],
    ['mfcc', [8000, 16000], [250, 1000]],
    ['spectrogram', [8000, 16000], [250, 1000]],
    ['flatten', [50, 100], [200, 1000]],
  ] as const) {
    it(`${type}: the block refuses no parameter of a config the save accepted`, () => {
      const d = def(type);
      const items = d.parameters.flatMap((g) => g.items);
      const config = fc.record(Object.fromEntries(items.map((p) => [p.param, fc.oneof({ arbitrary: fc.constant(p.defaultValue), weight: 2 }, { arbitrary: valueOf(p), weight: 1 })])) as Record<string, fc.Arbitrary<string>>);
      let accepted = 0;
      fc.assert(
        fc.property(config, fc.constantFrom(...processingBlocks.get(type)!.implementationVersions), fc.constantFrom(...frequencies), fc.constantFrom(...windows), fc.integer({ min: 1, max: 1000 }), (values, version, fs, ms, seed) => {
          if (saved(type, values, version, fs, ms).length > 0) return;
          accepted++;
          const rows = Math.floor((ms * fs) / 1000);
          const data = Array.from({ length: rows }, (_, i) => 50 * Math.sin((i * seed) / 97) + ((i * seed) % 7));
          try {
            processingBlocks.get(type)!.run({ values: data, axes: ['x'], frequency: fs }, { ...defaultDspConfig(d), ...values }, { implementationVersion: version, drawGraphs: false });
          } catch (error) {
            if (error instanceof DspConfigurationError) throw new Error(`saved, then refused at run (v${version}, ${fs} Hz, ${ms} ms, ${JSON.stringify(values)}): ${error.message}`);
            throw error;
          }
        }),
        { numRuns: 200, seed: 10 },
      );
      // The property says something only if many configs were accepted.
      expect(accepted).toBeGreaterThan(20);
    });
  }
});
