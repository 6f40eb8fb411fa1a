import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mfccBlock } from '../../../domain/dsp/mfcc';
import { expectDeclaredCountForAnyWindow } from './audioProperty';
import { expectMatchesReference, expectRefusal, runBlock } from './expectReference';
import { goldenAudio, loadFixture } from './referenceFixtures';

const fixture = loadFixture('mfcc');
const audio = goldenAudio();

/** Within rounding to the 7 significant figures dsp-reference 10 gives. */
const expectGolden = (actual: ArrayLike<number>, golden: readonly number[]) =>
  golden.forEach((g, i) => expect(Math.abs(actual[i]! - g), `value ${i}`).toBeLessThanOrEqual(5e-7 * Math.abs(g) + 1e-7));

describe('the mfcc block', () => {
  it('declares the info flags of dsp-reference 0.2 and versions 1 to 4', () => {
    expect(mfccBlock).toMatchObject({ type: 'mfcc', implementationVersions: [1, 2, 3, 4], dimensionalityReduction: true, hasFeatureImportance: false, canNormalizeData: true });
  });

  describe.each(fixture.cases.map((c) => [c.name, c] as const))('on the reference case "%s"', (_, c) => {
    it(c.error ? 'refuses it as the reference does' : 'gives the reference features within dsp-reference 12', () => {
      // After cmvnw about 1e-6 (float32); without it, float64 rounding only.
      const normalised = Number(c.params.win_size ?? 101) > 0;
      expectMatchesReference(mfccBlock, c, normalised ? { atol: 2e-6, rtol: 1e-6 } : { atol: 1e-10, rtol: 1e-10 });
    });
  });

  it('reproduces the golden v4 values with the default normalisation window', () => {
    const result = runBlock(mfccBlock, audio, 16000, {}, 4);
    expect(result.outputConfig).toEqual({ type: 'spectrogram', shape: { width: 50, height: 13 } });
    expect(result.fftUsed).toEqual([32, 256]);
    expectGolden(result.features, [0.3551058, 1.689915, 0.9442995, 1.260411, 0.05705224, -1.110223, 1.486778, -0.401871, -1.70476, 1.626014, -0.8312824, -1.813599, 1.689152]);
    expect(Array.from(result.features).reduce((a, b) => a + Math.abs(b), 0)).toBeCloseTo(550.0317, 3);
  });

  it('reproduces the golden v4 frame 0 without normalisation (win_size 0): c0 is the log frame energy, no lifter', () => {
    const result = runBlock(mfccBlock, audio, 16000, { win_size: 0 }, 4);
    expectGolden(result.features, [21.8424, 13.55656, -1.049938, 5.834018, -6.81785, -8.891245, 4.496711, -3.297254, -4.221972, 8.747244, 0.8790572, -3.248518, 6.447481]);
  });

  it('refuses default parameters for versions <= 3 at 16 kHz (an all-zero old-mels filter), naming num_filters', () => {
    for (const version of [1, 2, 3]) expectRefusal(() => runBlock(mfccBlock, audio, 16000, {}, version), 'num_filters');
  });

  it('refuses more coefficients than filters', () => expectRefusal(() => runBlock(mfccBlock, audio, 16000, { num_cepstral: 33 }, 4), 'num_cepstral'));
  it('refuses an even normalisation window but accepts 0', () => {
    expectRefusal(() => runBlock(mfccBlock, audio, 16000, { win_size: 100 }, 4), 'win_size');
    expect(runBlock(mfccBlock, audio, 16000, { win_size: 0 }, 4).features).toHaveLength(650);
  });
  it('refuses a pre-emphasis shift below 1', () => expectRefusal(() => runBlock(mfccBlock, audio, 16000, { pre_shift: 0 }, 4), 'pre_shift'));
  it('refuses fewer than 2 filters', () => expectRefusal(() => runBlock(mfccBlock, audio, 16000, { num_filters: 1, num_cepstral: 1 }, 4), 'num_filters'));
  it('refuses an FFT length that is not a power of 2', () => expectRefusal(() => runBlock(mfccBlock, audio, 16000, { fft_length: 300 }, 4), 'fft_length'));
  it('refuses more than one axis', () => expectRefusal(() => runBlock(mfccBlock, [1, 2, 3, 4], 16000, {}, 4, ['a', 'b']), 'axes'));
  it('refuses a window shorter than one frame', () => expectRefusal(() => runBlock(mfccBlock, audio.slice(0, 319), 16000, {}, 4), 'frame_length'));
  it('refuses more than 500 frames', () => expectRefusal(() => runBlock(mfccBlock, audio, 16000, { frame_stride: 0.001 }, 4), 'frame_stride'));
  it('refuses a high frequency above half the sampling frequency', () => expectRefusal(() => runBlock(mfccBlock, audio, 16000, { high_frequency: 8001 }, 4), 'high_frequency'));
  it('refuses implementation version 5', () => expectRefusal(() => runBlock(mfccBlock, audio, 16000, {}, 5), 'implementation_version'));

  it('gives frames × coefficients finite features for any window, or refuses it', () => {
    const params = fc.record({
      frame_length: fc.constantFrom(0.01, 0.02, 0.025, 0.032),
      frame_stride: fc.constantFrom(0.01, 0.02),
      num_filters: fc.integer({ min: 2, max: 40 }),
      num_cepstral: fc.integer({ min: 1, max: 13 }),
      fft_length: fc.constantFrom(64, 128, 256, 512),
      win_size: fc.constantFrom(0, 3, 11, 101),
      pre_cof: fc.constantFrom(0, 0.5, 0.98),
      pre_shift: fc.integer({ min: 1, max: 3 }),
    });
    expectDeclaredCountForAnyWindow(mfccBlock, params, (p) => Number(p.num_cepstral), 0.02);
  });
});
