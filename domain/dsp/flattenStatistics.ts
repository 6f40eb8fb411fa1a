// The statistics of the flatten block (dsp-reference 0.3, 3): population moments as scipy.stats
// computes them. A (nearly) constant axis gives skewness 0 and kurtosis −3 as the pinned scipy 1.7.3
// does (later scipy gives NaN, which could not be stored in a feature row).

export interface AxisStatistics {
  average: number;
  minimum: number;
  maximum: number;
  rms: number;
  stdev: number;
  skewness: number;
  kurtosis: number;
}

/** Statistics of `values[offset], values[offset + step], …` (one axis of an interleaved window). */
export function axisStatistics(values: ArrayLike<number>, offset: number, step: number, scale: number): AxisStatistics {
  let n = 0;
  let sum = 0;
  let squares = 0;
  let minimum = Number.POSITIVE_INFINITY;
  let maximum = Number.NEGATIVE_INFINITY;
  for (let i = offset; i < values.length; i += step) {
    const x = values[i]! * scale;
    n++;
    sum += x;
    squares += x * x;
    if (x < minimum) minimum = x;
    if (x > maximum) maximum = x;
  }
  const mean = sum / n;
  let m2 = 0;
  let m3 = 0;
  let m4 = 0;
  for (let i = offset; i < values.length; i += step) {
    const d = values[i]! * scale - mean;
    const d2 = d * d;
    m2 += d2;
    m3 += d2 * d;
    m4 += d2 * d2;
  }
  m2 /= n;
  m3 /= n;
  m4 /= n;
  // scipy 1.7.3's test for "no spread": m2 within float64 resolution (1e-15) of the mean.
  const flat = m2 <= (1e-15 * mean) ** 2;
  const skewness = m3 / m2 ** 1.5;
  const kurtosis = m4 / (m2 * m2) - 3;
  return {
    average: mean,
    minimum,
    maximum,
    rms: Math.sqrt(squares / n),
    stdev: Math.sqrt(m2),
    // A spread so small (below 1e-160) that its powers underflow gives scipy inf or NaN; we treat it as
    // no spread at all, since a feature row cannot hold NaN.
    skewness: flat || !Number.isFinite(skewness) ? 0 : skewness,
    kurtosis: flat || !Number.isFinite(kurtosis) ? -3 : kurtosis,
  };
}
