// Per-frame power spectra |rfft(frame, n)|² / n (dsp-reference 1.2): a frame longer than n is
// truncated to its first n samples, a shorter one zero-padded, as numpy's rfft does.
import { powerSpectrum } from '../fft';
import type { Framing } from './frames';

/** frames.count rows of fftLength/2 + 1 bins. */
export function framePowerSpectra(signal: ArrayLike<number>, frames: Framing, fftLength: number): Float64Array[] {
  const rows: Float64Array[] = [];
  const take = Math.min(frames.length, fftLength);
  const frame = new Float64Array(take);
  for (let f = 0; f < frames.count; f++) {
    const start = f * frames.stride;
    for (let i = 0; i < take; i++) frame[i] = signal[start + i]!;
    rows.push(powerSpectrum(frame, fftLength));
  }
  return rows;
}
