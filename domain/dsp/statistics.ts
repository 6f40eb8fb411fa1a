// Population statistics as the reference blocks compute them (dsp-reference §0.3): numpy's mean, std
// (ddof 0) and scipy.stats skew / kurtosis with default arguments (biased, Fisher). For a constant
// input scipy 1.7.3, which the blocks pin, answers skew 0 and kurtosis -3 rather than NaN; that is
// kept here so no NaN reaches a feature row.

export function mean(x: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += x[i]!;
  return sum / x.length;
}

/** sqrt(mean(x²)). */
export function rms(x: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += x[i]! * x[i]!;
  return Math.sqrt(sum / x.length);
}

/** numpy `std(x)`: the population standard deviation. */
export function populationStd(x: ArrayLike<number>): number {
  return Math.sqrt(centralMoments(x).m2);
}

/**
 * How scipy 1.7.3 decides that an input is constant: m2 ≤ (resolution·mean)², resolution being the
 * dtype's (1e-15 for float64, 1e-6 for the float32 data of the spectral block).
 */
export interface MomentOptions {
  resolution?: number;
}

function centralMoments(x: ArrayLike<number>): { mean: number; m2: number; m3: number; m4: number } {
  const m = mean(x);
  let m2 = 0;
  let m3 = 0;
  let m4 = 0;
  for (let i = 0; i < x.length; i++) {
    const d = x[i]! - m;
    const d2 = d * d;
    m2 += d2;
    m3 += d2 * d;
    m4 += d2 * d2;
  }
  const n = x.length;
  return { mean: m, m2: m2 / n, m3: m3 / n, m4: m4 / n };
}

const isConstant = (m2: number, m: number, options?: MomentOptions) => m2 <= ((options?.resolution ?? 1e-15) * m) ** 2;

// Where m2^1.5 or m2² underflows to 0 (values around 1e-80 and below) scipy answers NaN; such an
// input is constant as far as float64 can tell, so it is answered as one.

/** scipy `stats.skew(x)`: m3 / m2^1.5; 0 for a constant input. */
export function skewness(x: ArrayLike<number>, options?: MomentOptions): number {
  const { mean: m, m2, m3 } = centralMoments(x);
  const denominator = m2 ** 1.5;
  return isConstant(m2, m, options) || denominator === 0 ? 0 : m3 / denominator;
}

/** scipy `stats.kurtosis(x)` (Fisher): m4 / m2² − 3; −3 for a constant input. */
export function kurtosis(x: ArrayLike<number>, options?: MomentOptions): number {
  const { mean: m, m2, m4 } = centralMoments(x);
  const denominator = m2 * m2;
  return (isConstant(m2, m, options) || denominator === 0 ? 0 : m4 / denominator) - 3;
}
