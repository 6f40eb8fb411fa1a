import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spectrogramBlock } from '../../../domain/dsp/spectrogram';
import { expectDeclaredCountForAnyWindow } from './audioProperty';
import { expectMatchesReference, expectRefusal, runBlock } from './expectReference';
import { goldenAudio, loadFixture } from './referenceFixtures';

const fixture = loadFixture('spectrogram');
const audio = goldenAudio();

describe('the spectrogram block', () => {
  it('declares the info flags of dsp-reference 0.2 and versions 1 to 4', () => {
    expect(spectrogramBlock).toMatchObject({ type: 'spectrogram', implementationVersions: [1, 2, 3, 4], dimensionalityReduction: true, hasFeatureImportance: false, canNormalizeData: true });
  });

  describe.each(fixture.cases.map((c) => [c.name, c] as const))('on the reference case "%s"', (_, c) => {
    it('gives the reference features within dsp-reference 12', () => {
      expectMatchesReference(spectrogramBlock, c, { atol: 1e-12, rtol: 1e-12 });
    });
  });

  it("passes the reference's own test (tests/test_spectrogram.py, atol 1e-3)", () => {
    const { values, expected } = fixture.referenceTest!;
    const result = runBlock(spectrogramBlock, values, 100, { frame_length: 0.5, frame_stride: 0.25, fft_length: 64, noise_floor_db: -100 }, 4, ['x']);
    expect(result.features).toHaveLength(231);
    expected.forEach((e, i) => expect(Math.abs(result.features[i]! - e)).toBeLessThanOrEqual(1e-3));
  });

  it('reproduces the golden v4 values (above 1: v4 neither rescales nor clips at the top)', () => {
    const result = runBlock(spectrogramBlock, audio, 16000, {}, 4);
    expect(result.outputConfig).toEqual({ type: 'spectrogram', shape: { width: 99, height: 65 } });
    expect(result.fftUsed).toEqual([128]);
    expect(Array.from(result.features).reduce((a, b) => a + b, 0)).toBeCloseTo(11414.52, 2);
    [2.09021, 2.101615, 2.143068, 2.265995, 2.257419, 2.087564].forEach((g, i) => expect(result.features[i]).toBeCloseTo(g, 5));
  });

  it('rescales int16 input and clips at 1 in version 3', () => {
    const result = runBlock(spectrogramBlock, audio, 16000, {}, 3);
    const f = Array.from(result.features);
    expect(Math.max(...f)).toBeLessThanOrEqual(1);
    expect(Math.min(...f)).toBeGreaterThanOrEqual(0);
  });

  it('min-max scales the linear power over the whole window in versions 1 and 2', () => {
    for (const version of [1, 2]) {
      const f = Array.from(runBlock(spectrogramBlock, audio, 16000, {}, version).features);
      expect([Math.min(...f), Math.max(...f)]).toEqual([0, 1]);
    }
    // A flat spectrum (silence) gives 0/0, which becomes 0.
    expect(Array.from(runBlock(spectrogramBlock, new Array(1600).fill(0), 16000, {}, 1).features).every((x) => x === 0)).toBe(true);
  });

  it('refuses a frame shorter than 4 samples', () => expectRefusal(() => runBlock(spectrogramBlock, audio, 16000, { frame_length: 0.0002 }, 4), 'frame_length'));
  it('refuses a stride shorter than 4 samples', () => expectRefusal(() => runBlock(spectrogramBlock, audio, 16000, { frame_stride: 0.0002 }, 4), 'frame_stride'));
  it('refuses an empty window', () => expectRefusal(() => runBlock(spectrogramBlock, [], 16000, {}, 4), 'values'));
  it('refuses more than one axis', () => expectRefusal(() => runBlock(spectrogramBlock, [1, 2, 3, 4], 16000, {}, 4, ['a', 'b']), 'axes'));
  it('refuses an FFT length that is not a power of 2', () => expectRefusal(() => runBlock(spectrogramBlock, audio, 16000, { fft_length: 100 }, 4), 'fft_length'));
  it('refuses a window shorter than one frame', () => expectRefusal(() => runBlock(spectrogramBlock, audio.slice(0, 300), 16000, {}, 4), 'frame_length'));
  it('refuses more than 500 frames', () => expectRefusal(() => runBlock(spectrogramBlock, audio, 16000, { frame_stride: 0.0005 }, 4), 'frame_stride'));
  it('refuses a noise floor of -12 dB (a zero range) for versions 3 and 4', () => expectRefusal(() => runBlock(spectrogramBlock, audio, 16000, { noise_floor_db: -12 }, 3), 'noise_floor_db'));
  it('refuses implementation version 5', () => expectRefusal(() => runBlock(spectrogramBlock, audio, 16000, {}, 5), 'implementation_version'));

  it('gives frames × (fft/2 + 1) finite features for any window, or refuses it', () => {
    const params = fc.record({
      frame_length: fc.constantFrom(0.01, 0.02, 0.05),
      frame_stride: fc.constantFrom(0.005, 0.01, 0.02),
      fft_length: fc.constantFrom(16, 64, 128, 256),
      noise_floor_db: fc.integer({ min: -100, max: 0 }),
    });
    expectDeclaredCountForAnyWindow(spectrogramBlock, params, (p) => Number(p.fft_length) / 2 + 1, 0.01);
  });
});
