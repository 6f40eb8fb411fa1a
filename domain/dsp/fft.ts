// The one real FFT every processing block uses (fft.js: radix-4, well-tested, no native code).
// numpy's `rfft(x, n)` conventions are kept here so blocks can follow the reference line by line:
// a frame longer than `n` is truncated to its first `n` values, a shorter one is zero-padded.
import FFT from 'fft.js';

interface Transform {
  fft: FFT;
  /** Reused between calls: a block computes thousands of spectra of one length per window. */
  input: Float64Array;
  out: number[];
}

const transforms = new Map<number, Transform>();

function transformOf(n: number): Transform {
  if (!Number.isInteger(n) || n < 2 || (n & (n - 1)) !== 0) throw new RangeError(`FFT length must be a power of two of at least 2, got ${n}`);
  let transform = transforms.get(n);
  if (!transform) {
    const fft = new FFT(n);
    transform = { fft, input: new Float64Array(n), out: fft.createComplexArray() as number[] };
    transforms.set(n, transform);
  }
  return transform;
}

/** Runs the transform into the reused buffers; the result is valid until the next call for `n`. */
function transformInPlace(frame: ArrayLike<number>, n: number): number[] {
  const { fft, input, out } = transformOf(n);
  const count = Math.min(n, frame.length);
  for (let i = 0; i < count; i++) input[i] = frame[i]!;
  input.fill(0, count);
  fft.realTransform(out, input);
  return out;
}

/**
 * numpy `rfft(frame, n)`: the n/2 + 1 complex bins of a real frame, as interleaved [re0, im0, re1,
 * im1, ...] in a Float64Array of length n + 2.
 */
export function rfft(frame: ArrayLike<number>, n: number): Float64Array {
  const out = transformInPlace(frame, n);
  const bins = new Float64Array(n + 2);
  for (let i = 0; i < n + 2; i++) bins[i] = out[i]!;
  return bins;
}

/** |rfft(frame, n)[k]| for k = 0 … n/2. */
export function rfftMagnitude(frame: ArrayLike<number>, n: number): Float64Array {
  const out = transformInPlace(frame, n);
  const mags = new Float64Array(n / 2 + 1);
  for (let k = 0; k < mags.length; k++) mags[k] = Math.hypot(out[2 * k]!, out[2 * k + 1]!);
  return mags;
}

/**
 * The power spectrum of the reference (dsp-reference 1.2): |rfft(frame, n)[k]|² / n, written into
 * `into` when given (n/2 + 1 values), so a block's loop over frames allocates nothing.
 */
export function powerSpectrum(frame: ArrayLike<number>, n: number, into?: Float64Array): Float64Array {
  const out = transformInPlace(frame, n);
  const power = into ?? new Float64Array(n / 2 + 1);
  for (let k = 0; k <= n / 2; k++) power[k] = (out[2 * k]! ** 2 + out[2 * k + 1]! ** 2) / n;
  return power;
}
