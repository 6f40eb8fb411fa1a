// The statistics of the flatten block (dsp-reference 0.3, 3), one axis of an interleaved window at a
// time, through the shared population statistics (domain/dsp/statistics.ts): a (nearly) constant
// axis gives skewness 0 and kurtosis −3 as the pinned scipy 1.7.3 does.
import { kurtosis, mean, populationStd, rms, skewness } from './statistics';

export interface AxisStatistics {
  average: number;
  minimum: number;
  maximum: number;
  rms: number;
  stdev: number;
  skewness: number;
  kurtosis: number;
}

/** Statistics of `values[offset], values[offset + step], …` (one axis of an interleaved window), scaled. */
export function axisStatistics(values: ArrayLike<number>, offset: number, step: number, scale: number): AxisStatistics {
  const axis = new Float64Array(Math.ceil((values.length - offset) / step));
  let minimum = Number.POSITIVE_INFINITY;
  let maximum = Number.NEGATIVE_INFINITY;
  for (let i = offset, j = 0; i < values.length; i += step, j++) {
    const x = values[i]! * scale;
    axis[j] = x;
    if (x < minimum) minimum = x;
    if (x > maximum) maximum = x;
  }
  return { average: mean(axis), minimum, maximum, rms: rms(axis), stdev: populationStd(axis), skewness: skewness(axis), kurtosis: kurtosis(axis) };
}
