// The mel filterbank of the speechpy fork (dsp-reference 1.3). `useOldMels` keeps the bin formula of
// implementation versions <= 3 (filters at about half their intended frequency): models trained on
// those versions need exactly those features, so the bug stays for them.
import { DspConfigurationError } from '../processingBlock';

export interface MelFilterbank {
  /** One row per filter; each row's non-zero weights lie in columns first[i] … last[i]. */
  weights: Float64Array[];
  first: Int32Array;
  last: Int32Array;
  /** Centre frequencies (Hz) of the filters, for graphs. */
  centres: Float64Array;
}

const melOf = (f: number): number => 1127 * Math.log(1 + f / 700);
const hertzOf = (mel: number): number => 700 * (Math.exp(mel / 1127) - 1);

/** numpy's linspace with its endpoint: start + i·step, the last point set to stop exactly. */
function linspace(start: number, stop: number, num: number): Float64Array {
  const out = new Float64Array(num);
  const step = (stop - start) / (num - 1);
  for (let i = 0; i < num; i++) out[i] = i * step + start;
  out[num - 1] = stop;
  return out;
}

const cache = new Map<string, MelFilterbank>();

/**
 * numFilters triangles over `coefficients` = fft/2 + 1 bins from lowFrequency to highFrequency
 * (0 meaning fs/2). Cached: every window of a job asks for the same bank.
 */
export function melFilterbank(
  numFilters: number,
  coefficients: number,
  frequency: number,
  lowFrequency: number,
  highFrequency: number,
  useOldMels: boolean,
): MelFilterbank {
  const key = `${numFilters}/${coefficients}/${frequency}/${lowFrequency}/${highFrequency}/${useOldMels}`;
  const known = cache.get(key);
  if (known) return known;
  const bank = buildFilterbank(numFilters, coefficients, frequency, lowFrequency, highFrequency, useOldMels);
  if (cache.size > 64) cache.clear();
  cache.set(key, bank);
  return bank;
}

function buildFilterbank(numFilters: number, coefficients: number, frequency: number, low: number, high: number, useOldMels: boolean): MelFilterbank {
  if (!Number.isInteger(numFilters) || numFilters < 2) throw new DspConfigurationError(`"num_filters" must be at least 2, got ${numFilters}`);
  const hi = high === 0 ? frequency / 2 : high;
  if (hi > frequency / 2) throw new DspConfigurationError(`"high_frequency" cannot be greater than half of the sampling frequency (${frequency / 2} Hz), got ${hi}`);
  if (low < 0) throw new DspConfigurationError(`"low_frequency" cannot be less than zero, got ${low}`);
  if (low >= hi) throw new DspConfigurationError(`"low_frequency" (${low} Hz) must be below the high frequency (${hi} Hz)`);

  const hertz = linspace(melOf(low), melOf(hi), numFilters + 2).map(hertzOf);
  // The C++ SDK lowers the top edge by 0.001 Hz so float noise never moves it into the next bin.
  hertz[numFilters + 1] = hertz[numFilters + 1]! - 0.001;
  const points = useOldMels ? coefficients : (coefficients - 1) * 2;
  const bins = Array.from(hertz, (h) => Math.floor(((points + 1) * h) / frequency));

  const weights: Float64Array[] = [];
  const first = new Int32Array(numFilters);
  const last = new Int32Array(numFilters);
  for (let i = 0; i < numFilters; i++) {
    const left = bins[i]!;
    const middle = bins[i + 1]!;
    const right = bins[i + 2]!;
    const row = new Float64Array(coefficients);
    let any = false;
    for (let k = Math.max(left, 0); k <= right && k < coefficients; k++) {
      let w = 0;
      if (left < k && k <= middle) w = (k - left) / (middle - left);
      if (middle <= k && k < right) w = (right - k) / (right - middle);
      row[k] = w;
      if (w !== 0) any = true;
    }
    if (!any) {
      throw new DspConfigurationError(
        `"num_filters": at least one row of the mel filterbank contains all zeros; lower the filter number to ${Math.floor(coefficients / 4)} or increase "fft_length"`,
      );
    }
    weights.push(row);
    first[i] = Math.max(left, 0);
    last[i] = Math.min(right, coefficients - 1);
  }
  return { weights, first, last, centres: hertz.slice(1, numFilters + 1) };
}
