// Pre-emphasis of the speechpy fork (dsp-reference 1.4): y = x − cof·roll(x, shift). It is circular,
// so y[0] uses the last sample; unlike python_speech_features the first sample is not kept as is.
import { DspConfigurationError } from '../processingBlock';

function checkShift(shift: number): void {
  if (!Number.isInteger(shift) || shift <= 0) {
    throw new DspConfigurationError(`"pre_shift" must be a positive integer (set "pre_cof" to 0 to disable pre-emphasis), got ${shift}`);
  }
}

/** In float64, as MFCC runs it on the raw samples. */
export function preemphasis(x: ArrayLike<number>, cof: number, shift: number): Float64Array {
  checkShift(shift);
  const n = x.length;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = x[i]! - cof * x[(((i - shift) % n) + n) % n]!;
  return out;
}

/**
 * MFE v3+: the samples scaled to [-1, 1] as float32, then pre-emphasised in float32 (numpy keeps a
 * float32 array float32 when multiplied by a Python float), so every step is rounded to float32.
 */
export function scaledPreemphasisFloat32(x: ArrayLike<number>, cof: number, shift: number): Float32Array {
  checkShift(shift);
  const n = x.length;
  const scaled = new Float32Array(n);
  for (let i = 0; i < n; i++) scaled[i] = x[i]! / 32768;
  const c = Math.fround(cof);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = scaled[i]! - Math.fround(c * scaled[(((i - shift) % n) + n) % n]!);
  return out;
}
