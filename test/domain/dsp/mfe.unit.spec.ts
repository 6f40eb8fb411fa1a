import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mfeBlock } from '../../../domain/dsp/mfe';
import { melEnergies } from '../../../domain/dsp/speech/melEnergies';
import { scaledPreemphasisFloat32 } from '../../../domain/dsp/speech/preemphasis';
import { expectDeclaredCountForAnyWindow } from './audioProperty';
import { expectMatchesReference, expectRefusal, runBlock } from './expectReference';
import { goldenAudio, inputOf, loadFixture } from './referenceFixtures';

const fixture = loadFixture('mfe');
const audio = goldenAudio();

describe('the mfe block', () => {
  it('declares the info flags of dsp-reference 0.2 and versions 1 to 4', () => {
    expect(mfeBlock).toMatchObject({ type: 'mfe', implementationVersions: [1, 2, 3, 4], dimensionalityReduction: true, hasFeatureImportance: false, canNormalizeData: true });
  });

  describe.each(fixture.cases.map((c) => [c.name, c] as const))('on the reference case "%s"', (_, c) => {
    it(c.error ? 'refuses it as the reference does' : 'gives the reference features within dsp-reference 12', () => {
      // v3/v4 are multiples of 1/256: a float32 rounding boundary may move a few by one step.
      const tolerance = c.implementationVersion >= 3 ? { atol: 1e-12, rtol: 0, outsideFraction: 1e-3, outsideAtol: 1 / 256 + 1e-12 } : { atol: 1e-6, rtol: 0 };
      expectMatchesReference(mfeBlock, c, tolerance);
    });
  });

  it('reproduces the golden v4 values of dsp-reference 10', () => {
    const result = runBlock(mfeBlock, audio, 16000, {}, 4);
    const f = Array.from(result.features);
    expect(result.outputConfig).toEqual({ type: 'spectrogram', shape: { width: 99, height: 40 } });
    expect(f.reduce((a, b) => a + b, 0)).toBeCloseTo(408.8671875, 9);
    expect(f.filter((x) => x === 0)).toHaveLength(2216);
    const frame0 = [0.109375, 0.1132812, 0.1210938, 0.1367188, 0.1640625, 0.2070312, 0.2851562, 0.71875, 0.28125, 0.1757812, 0.125, 0.0703125, 0.015625,
      ...Array<number>(13).fill(0), 0.859375, 0.78125, ...Array<number>(12).fill(0)];
    frame0.forEach((g, i) => expect(Math.abs(f[i]! - g)).toBeLessThan(1e-6));
  });

  it('maps the loudest bins to 0 like the reference (uint8 wrap of 256), not to 1 like the C++ SDK', () => {
    const c = fixture.cases.find((x) => x.name.startsWith('v4 loud 2 kHz tone'))!;
    const values = inputOf(c);
    const mel = melEnergies(scaledPreemphasisFloat32(values, 0.98, 1), { version: 4, frequency: 16000, frameLength: 0.02, frameStride: 0.01, numFilters: 40, fftLength: 256, lowFrequency: 0, highFrequency: 0 });
    const loudest = Array.from(mel.energies, (e, i) => [i, (10 * Math.log10(e) + 52) / 64] as const).filter(([, y]) => y * 256 >= 255.5);
    expect(loudest.length).toBeGreaterThan(0);
    const features = runBlock(mfeBlock, values, 16000, {}, 4).features;
    for (const [i] of loudest) expect(features[i]).toBe(0);
  });

  it('refuses default parameters for versions <= 3 at 16 kHz (an all-zero old-mels filter), naming num_filters', () => {
    for (const version of [1, 2, 3]) expectRefusal(() => runBlock(mfeBlock, audio, 16000, {}, version), 'num_filters');
  });

  it('refuses fewer than 2 filters', () => expectRefusal(() => runBlock(mfeBlock, audio, 16000, { num_filters: 1 }, 4), 'num_filters'));
  it('refuses an FFT length that is not a power of 2', () => expectRefusal(() => runBlock(mfeBlock, audio, 16000, { fft_length: 200 }, 4), 'fft_length'));
  it('refuses more than one axis', () => expectRefusal(() => runBlock(mfeBlock, [1, 2, 3, 4], 16000, {}, 4, ['a', 'b']), 'axes'));
  it('refuses a window shorter than one frame', () => expectRefusal(() => runBlock(mfeBlock, audio.slice(0, 100), 16000, {}, 4), 'frame_length'));
  it('refuses more than 500 frames', () => expectRefusal(() => runBlock(mfeBlock, audio, 16000, { frame_stride: 0.001 }, 4), 'frame_stride'));
  it('refuses a high frequency above half the sampling frequency', () => expectRefusal(() => runBlock(mfeBlock, audio, 16000, { high_frequency: 9000 }, 4), 'high_frequency'));
  it('refuses a negative low frequency', () => expectRefusal(() => runBlock(mfeBlock, audio, 16000, { low_frequency: -5 }, 4), 'low_frequency'));
  it('refuses a low frequency at or above the high frequency', () => expectRefusal(() => runBlock(mfeBlock, audio, 16000, { low_frequency: 4000, high_frequency: 3000 }, 4), 'low_frequency'));
  it('refuses an even normalisation window for versions 1 and 2 only', () => {
    expectRefusal(() => runBlock(mfeBlock, audio, 16000, { win_size: 100, num_filters: 20, fft_length: 512 }, 2), 'win_size');
    expect(runBlock(mfeBlock, audio, 16000, { win_size: 100 }, 4).features).toHaveLength(3960);
  });
  it('refuses a noise floor of -12 dB (a zero range) for versions 3 and 4', () => expectRefusal(() => runBlock(mfeBlock, audio, 16000, { noise_floor_db: -12 }, 4), 'noise_floor_db'));
  it('refuses implementation version 5', () => expectRefusal(() => runBlock(mfeBlock, audio, 16000, {}, 5), 'implementation_version'));
  it('refuses a window without a sampling frequency', () => expectRefusal(() => runBlock(mfeBlock, audio, 0, {}, 4), 'frequency'));

  it('gives frames × filters finite features for any window, or refuses it', () => {
    const params = fc.record({
      frame_length: fc.constantFrom(0.01, 0.02, 0.025, 0.032),
      frame_stride: fc.constantFrom(0.005, 0.01, 0.02),
      num_filters: fc.integer({ min: 2, max: 64 }),
      fft_length: fc.constantFrom(64, 128, 256, 512),
      low_frequency: fc.constantFrom(0, 80, 300),
      noise_floor_db: fc.integer({ min: -100, max: 0 }),
      win_size: fc.constantFrom(3, 11, 101),
    });
    expectDeclaredCountForAnyWindow(mfeBlock, params, (p) => Number(p.num_filters), 0.01);
  });
});
