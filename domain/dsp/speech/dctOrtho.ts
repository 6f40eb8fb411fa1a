// DCT-II with orthonormal scaling, as scipy.fftpack.dct(type=2, norm='ortho') along the filter axis:
// X_k = s_k Σ_n x_n cos(π k (2n+1) / (2M)), s_0 = √(1/M), s_k = √(2/M).
// Written as a cached matrix of only the kept coefficients rather than taken from a library: the one
// npm DCT package (`dct` 0.1.0, 2015) calls itself educational, has a single scale factor (so no
// ortho s_0) and computes every coefficient; the matrix is the definition itself and, for the 13 of
// 32 coefficients MFCC keeps, cheaper than any FFT-based DCT.

const matrices = new Map<string, Float64Array>();

function dctMatrix(size: number, keep: number): Float64Array {
  const key = `${size}/${keep}`;
  let m = matrices.get(key);
  if (!m) {
    m = new Float64Array(keep * size);
    for (let k = 0; k < keep; k++) {
      const s = k === 0 ? Math.sqrt(1 / size) : Math.sqrt(2 / size);
      for (let n = 0; n < size; n++) m[k * size + n] = s * Math.cos((Math.PI * k * (2 * n + 1)) / (2 * size));
    }
    matrices.set(key, m);
  }
  return m;
}

/** The first `keep` coefficients of each row of a rows × size matrix (row-major), rows × keep. */
export function dctIIOrtho(rowsMajor: Float64Array, rows: number, size: number, keep: number): Float64Array {
  const m = dctMatrix(size, keep);
  const out = new Float64Array(rows * keep);
  for (let r = 0; r < rows; r++) {
    const base = r * size;
    for (let k = 0; k < keep; k++) {
      let sum = 0;
      const mk = k * size;
      for (let n = 0; n < size; n++) sum += m[mk + n]! * rowsMajor[base + n]!;
      out[r * keep + k] = sum;
    }
  }
  return out;
}
