// The one real FFT every processing block uses (fft.js: radix-4, well-tested, no native code).
// numpy's `rfft(x, n)` conventions are kept here so blocks can follow the reference line by line:
// a frame longer than `n` is truncated to its first `n` values, a shorter one is zero-padded.
import FFT from 'fft.js';

const transforms = new Map<number, FFT>();

function transformOf(n: number): FFT {
  if (!Number.isInteger(n) || n < 2 || (n & (n - 1)) !== 0) throw new RangeError(`FFT length must be a power of two of at least 2, got ${n}`);
  let fft = transforms.get(n);
  if (!fft) {
    fft = new FFT(n);
    transforms.set(n, fft);
  }
  return fft;
}

/**
 * numpy `rfft(frame, n)`: the n/2 + 1 complex bins of a real frame, as interleaved [re0, im0, re1,
 * im1, ...] in a Float64Array of length n + 2.
 */
export function rfft(frame: ArrayLike<number>, n: number): Float64Array {
  const fft = transformOf(n);
  const input = new Float64Array(n);
  const count = Math.min(n, frame.length);
  for (let i = 0; i < count; i++) input[i] = frame[i]!;
  const out = fft.createComplexArray() as number[];
  fft.realTransform(out, input);
  const bins = new Float64Array(n + 2);
  for (let i = 0; i < n + 2; i++) bins[i] = out[i]!;
  return bins;
}

/** |rfft(frame, n)[k]| for k = 0 … n/2. */
export function rfftMagnitude(frame: ArrayLike<number>, n: number): Float64Array {
  const bins = rfft(frame, n);
  const mags = new Float64Array(n / 2 + 1);
  for (let k = 0; k < mags.length; k++) mags[k] = Math.hypot(bins[2 * k]!, bins[2 * k + 1]!);
  return mags;
}

/** The power spectrum of the reference (dsp-reference 1.2): |rfft(frame, n)[k]|² / n. */
export function powerSpectrum(frame: ArrayLike<number>, n: number): Float64Array {
  const bins = rfft(frame, n);
  const power = new Float64Array(n / 2 + 1);
  for (let k = 0; k < power.length; k++) power[k] = (bins[2 * k]! ** 2 + bins[2 * k + 1]! ** 2) / n;
  return power;
}
