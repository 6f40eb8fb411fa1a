// Per-frame power spectra |rfft(frame, n)|² / n (dsp-reference 1.2): a frame longer than n is
// truncated to its first n samples, a shorter one zero-padded, as numpy's rfft does.
import { powerSpectrum } from '../fft';
import type { Framing } from './frames';

/** frames.count rows of fftLength/2 + 1 bins. */
export function framePowerSpectra(signal: ArrayLike<number>, frames: Framing, fftLength: number): Float64Array[] {
  // One copy into a Float64Array keeps the frame loop monomorphic whatever the caller passes (a plain
  // array, MFE's float32 pre-emphasised signal, float64).
  let samples: Float64Array;
  if (signal instanceof Float64Array) samples = signal;
  else {
    samples = new Float64Array(signal.length);
    for (let i = 0; i < signal.length; i++) samples[i] = signal[i]!;
  }
  const rows: Float64Array[] = [];
  const take = Math.min(frames.length, fftLength);
  const frame = new Float64Array(take);
  for (let f = 0; f < frames.count; f++) {
    const start = f * frames.stride;
    for (let i = 0; i < take; i++) frame[i] = samples[start + i]!;
    rows.push(powerSpectrum(frame, fftLength));
  }
  return rows;
}
