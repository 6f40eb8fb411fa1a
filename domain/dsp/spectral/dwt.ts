// One level of pywt's discrete wavelet transform in its default 'symmetric' mode
// (`downsampling_convolution` in pywt's C extension): out[k] = Σ_j h[j]·x̃[2k + 1 − j], x̃ the
// half-sample symmetric extension, out length floor((N + F − 1)/2). pywt transforms float32 data
// in float32, so with `float32` every product and sum is rounded to float32 in the order pywt adds
// them (in-range taps by ascending j; on the right edge the mirrored taps first, by descending j):
// the spectral block's wavelet statistics are sensitive to that last bit. No npm package rounds
// per operation; discrete-wavelets (which mirrors pywt in float64) checks this code in the tests.

const identity = (v: number): number => v;

/** x̃[i] for the half-sample symmetric extension of x (any i, also beyond one reflection). */
function symmetricIndex(i: number, n: number): number {
  let m = ((i % (2 * n)) + 2 * n) % (2 * n);
  if (m >= n) m = 2 * n - 1 - m;
  return m;
}

/** Convolves with `filter` and keeps every second output, as pywt does for one DWT level. */
export function downsamplingConvolution(x: ArrayLike<number>, filter: readonly number[], float32: boolean): Float64Array {
  const r = float32 ? Math.fround : identity;
  const n = x.length;
  const f = filter.length;
  const h = filter.map(r);
  const out = new Float64Array(Math.floor((n + f - 1) / 2));
  for (let o = 0, i = 1; o < out.length; o++, i += 2) {
    let sum = 0;
    if (i >= n && n >= f) {
      // Right edge: taps that fall past the end first, by descending j, then the rest ascending.
      for (let j = i - n; j >= 0; j--) sum = r(sum + r(h[j]! * x[2 * n - 1 - i + j]!));
      for (let j = i - n + 1; j < f; j++) sum = r(sum + r(h[j]! * x[i - j]!));
    } else {
      for (let j = 0; j < f; j++) sum = r(sum + r(h[j]! * x[symmetricIndex(i - j, n)]!));
    }
    out[o] = sum;
  }
  return out;
}
