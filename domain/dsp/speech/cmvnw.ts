// Sliding-window cepstral mean (and variance) normalisation of the speechpy fork (dsp-reference 1.7).
// The fork stores both passes in float32 arrays and numpy takes the std of float32 values in float32,
// so both passes round to float32 where it does: that makes the result bit-exact instead of 1e-6 off.
import { DspConfigurationError } from '../processingBlock';

/** numpy 'symmetric' padding: the index of padded row i (of rows + 2·pad) in the original rows. */
function symmetricIndex(i: number, pad: number, rows: number): number {
  const period = 2 * rows;
  let j = (((i - pad) % period) + period) % period;
  if (j >= rows) j = period - 1 - j;
  return j;
}

/**
 * `matrix` is rows × cols, row-major (frames × coefficients). winSize must be an odd integer; the
 * window may be far longer than the matrix (101 over 50 frames), padding then keeps reflecting.
 */
export function cmvnw(matrix: Float64Array, rows: number, cols: number, winSize: number, varianceNormalization: boolean): Float32Array {
  if (!Number.isInteger(winSize) || winSize < 1 || winSize % 2 !== 1) throw new DspConfigurationError(`"win_size" must be an odd integer, got ${winSize}`);
  const pad = (winSize - 1) / 2;
  const index = new Int32Array(rows + 2 * pad);
  for (let i = 0; i < index.length; i++) index[i] = symmetricIndex(i, pad, rows);

  const meanSubtracted = new Float32Array(rows * cols);
  for (let c = 0; c < cols; c++) {
    for (let i = 0; i < rows; i++) {
      let sum = 0;
      for (let w = 0; w < winSize; w++) sum += matrix[index[i + w]! * cols + c]!;
      meanSubtracted[i * cols + c] = matrix[i * cols + c]! - sum / winSize;
    }
  }
  if (!varianceNormalization) return meanSubtracted;

  const f = Math.fround;
  const n = f(winSize);
  const eps = f(1e-10);
  const out = new Float32Array(rows * cols);
  for (let c = 0; c < cols; c++) {
    for (let i = 0; i < rows; i++) {
      // np.std in float32: float32 sum, mean, squared deviations, their sum, mean, sqrt.
      let sum = 0;
      for (let w = 0; w < winSize; w++) sum = f(sum + meanSubtracted[index[i + w]! * cols + c]!);
      const mean = f(sum / n);
      let squares = 0;
      for (let w = 0; w < winSize; w++) {
        const d = f(meanSubtracted[index[i + w]! * cols + c]! - mean);
        squares = f(squares + f(d * d));
      }
      const std = f(Math.sqrt(f(squares / n)));
      out[i * cols + c] = meanSubtracted[i * cols + c]! / f(std + eps);
    }
  }
  return out;
}
