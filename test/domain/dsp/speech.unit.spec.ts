import { describe, expect, it } from 'vitest';
import { DspConfigurationError } from '../../../domain/dsp/processingBlock';
import { cmvnw } from '../../../domain/dsp/speech/cmvnw';
import { dctIIOrtho } from '../../../domain/dsp/speech/dctOrtho';
import { ceilUnlessVeryCloseToFloor, framing, roundHalfEven } from '../../../domain/dsp/speech/frames';
import { melFilterbank } from '../../../domain/dsp/speech/melFilterbank';
import { preemphasis, scaledPreemphasisFloat32 } from '../../../domain/dsp/speech/preemphasis';

describe('frame sizes (dsp-reference 1.1)', () => {
  it('round a fractional frame length half-to-even in v1 and up from v2 on', () => {
    expect(framing(1, 5513, 11025, 0.02, 0.01).length).toBe(220);
    expect(framing(2, 5513, 11025, 0.02, 0.01).length).toBe(221);
    expect(roundHalfEven(2.5)).toBe(2);
    expect(roundHalfEven(3.5)).toBe(4);
  });

  it('do not ceil float noise just above an integer', () => {
    expect(ceilUnlessVeryCloseToFloor(320.0000001)).toBe(320);
    expect(ceilUnlessVeryCloseToFloor(320.5)).toBe(321);
    expect(ceilUnlessVeryCloseToFloor(320)).toBe(320);
  });

  it('count one frame fewer in v1 than fit, and every whole frame from v2 on', () => {
    expect(framing(1, 16000, 16000, 0.02, 0.01).count).toBe(98);
    expect(framing(4, 16000, 16000, 0.02, 0.01).count).toBe(99);
    expect(framing(4, 16000, 16000, 0.02, 0.02).count).toBe(50);
  });
});

describe('pre-emphasis (dsp-reference 1.4)', () => {
  it('is circular: the first sample uses the last', () => {
    expect(Array.from(preemphasis([1, 2, 4], 0.5, 1))).toEqual([1 - 0.5 * 4, 2 - 0.5 * 1, 4 - 0.5 * 2]);
    expect(Array.from(preemphasis([1, 2, 4, 8], 1, 2))).toEqual([1 - 4, 2 - 8, 4 - 1, 8 - 2]);
  });

  it('runs in float32 on samples scaled to [-1, 1] for MFE v3+', () => {
    const out = scaledPreemphasisFloat32([16384, -32768], 0.98, 1);
    expect(out).toBeInstanceOf(Float32Array);
    expect(out[0]).toBe(Math.fround(0.5 - Math.fround(Math.fround(0.98) * -1)));
  });

  it('refuses a shift that is not a positive integer', () => {
    expect(() => preemphasis([1, 2], 0.98, 0)).toThrow(/"pre_shift"/);
  });
});

describe('the mel filterbank (dsp-reference 1.3)', () => {
  it('puts triangles with weight 1 at each centre bin and non-zero weights only between their edges', () => {
    const bank = melFilterbank(32, 129, 16000, 0, 0, false);
    expect(bank.weights).toHaveLength(32);
    for (let i = 0; i < 32; i++) {
      const row = bank.weights[i]!;
      expect(Math.max(...row)).toBe(1);
      row.forEach((w, k) => {
        if (k < bank.first[i]! || k > bank.last[i]!) expect(w).toBe(0);
      });
    }
    // The top edge is fs/2 − 0.001 Hz, so the last filter ends on the last bin but never past it.
    expect(bank.last[31]).toBe(128);
    expect(bank.centres[31]).toBeLessThan(8000);
  });

  it('keeps the old-mels bug for versions <= 3: the bank ends near bin fft/4 instead of fft/2', () => {
    // fft 512: old mels use (257 + 1)·hz/fs, so 8 kHz lands on bin 128; new mels use 513·hz/fs, bin 256.
    expect(Math.max(...melFilterbank(20, 257, 16000, 0, 0, true).last)).toBe(128);
    expect(Math.max(...melFilterbank(20, 257, 16000, 0, 0, false).last)).toBe(256);
  });

  it('refuses a bank with an all-zero filter, naming num_filters (old mels with the defaults at 16 kHz)', () => {
    expect(() => melFilterbank(40, 129, 16000, 0, 0, true)).toThrow(DspConfigurationError);
    expect(() => melFilterbank(40, 129, 16000, 0, 0, true)).toThrow(/"num_filters"/);
  });

  it('refuses a high frequency above Nyquist and a negative low frequency', () => {
    expect(() => melFilterbank(10, 129, 16000, 0, 8001, false)).toThrow(/"high_frequency"/);
    expect(() => melFilterbank(10, 129, 16000, -1, 0, false)).toThrow(/"low_frequency"/);
  });
});

describe('the orthonormal DCT-II', () => {
  it('matches scipy.fftpack.dct(type=2, norm="ortho") on a small vector', () => {
    // scipy.fftpack.dct([1, 2, 3, 4], type=2, norm='ortho')
    const expected = [5, -2.230442497387663, 0, -0.15851266778110695];
    const out = dctIIOrtho(Float64Array.from([1, 2, 3, 4]), 1, 4, 4);
    expected.forEach((e, i) => expect(out[i]).toBeCloseTo(e, 12));
  });

  it('keeps only the first coefficients of each row', () => {
    const out = dctIIOrtho(Float64Array.from([1, 1, 1, 1, 2, 2, 2, 2]), 2, 4, 2);
    expect(Array.from(out).map((x) => Math.round(x * 1e12) / 1e12)).toEqual([2, 0, 4, 0]);
  });
});

describe('sliding normalisation (dsp-reference 1.7)', () => {
  it('pads symmetrically, reflecting again when the window is longer than the matrix', () => {
    // pad 5 on [1, 2, 3] gives 2 3 3 2 1 | 1 2 3 | 3 2 1 1 2; the first window is 2 3 3 2 1 1 2 3 3 2 1.
    const out = cmvnw(Float64Array.from([1, 2, 3]), 3, 1, 11, false);
    const firstWindowMean = (2 + 3 + 3 + 2 + 1 + 1 + 2 + 3 + 3 + 2 + 1) / 11;
    expect(out[0]).toBe(Math.fround(1 - firstWindowMean));
  });

  it('divides by the std of the mean-subtracted values in the window', () => {
    const out = cmvnw(Float64Array.from([1, 3]), 2, 1, 1, true);
    // A window of one row: mean-subtracted 0, std 0, so 0 / (0 + 1e-10).
    expect(Array.from(out)).toEqual([0, 0]);
  });

  it('refuses an even window, naming win_size', () => {
    expect(() => cmvnw(Float64Array.from([1, 2]), 2, 1, 4, false)).toThrow(/"win_size"/);
  });
});
