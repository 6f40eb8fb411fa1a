// Resampling a sample to the impulse's frequency before it is cut into windows (dsp-reference 11:
// "samples of another rate resampled"). The Studio's code is not public; the one public trace of how
// Edge Impulse resamples is processing-blocks' `common/sampling.py` (used by its Dataset for autotune):
// the new length is ceil(toHz / fromHz × length) (at least 1), and the rows are resampled with
// scipy's `signal.resample_poly(x, newLength, length)`. That is what this module reproduces:
// polyphase FIR resampling with up/down = newLength/length reduced by their gcd, a Kaiser-windowed
// (β = 5) sinc low-pass of 2·10·max(up, down) + 1 taps cut at 1/max(up, down) of the upsampled
// Nyquist, scaled to unit DC gain × up, zero padding outside the signal ('constant' padtype), and the
// output aligned on the filter's centre. Checked against scipy in test/domain/dsp/resample.unit.spec.ts.

/**
 * Recorded in the DSP metadata (`resamplingAlgorithmVersion`) so features made by another algorithm
 * are recognisable. 1: scipy-compatible resample_poly(x, newLength, length), Kaiser β = 5.
 */
export const resamplingAlgorithmVersion = 1;

/** Relative slack on the length ratio: 62.5 Hz computed two ways must not gain a row from rounding. */
const RATIO_EPSILON = 1e-9;

/** The number of rows a sample of `length` rows at `fromHz` has at `toHz` (the reference's calc_resampled_size). */
export function resampledLength(length: number, fromHz: number, toHz: number): number {
  if (!(length >= 0) || !Number.isInteger(length)) throw new RangeError(`length must be a whole number of rows, got ${length}`);
  if (!(fromHz > 0) || !(toHz > 0)) throw new RangeError(`frequencies must be above 0, got ${fromHz} and ${toHz}`);
  if (length === 0) return 0;
  const exact = (toHz / fromHz) * length;
  return Math.max(1, Math.ceil(exact - exact * RATIO_EPSILON));
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Modified Bessel function of the first kind, order 0 (power series; |x| ≤ 5 here, so 30 terms are plenty). */
function besselI0(x: number): number {
  const q = (x * x) / 4;
  let term = 1;
  let sum = 1;
  for (let k = 1; k < 60; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

const KAISER_BETA = 5;
/** Filters with more taps than this are evaluated tap by tap instead of held (a 20-million-row sample can ask for 400 million). */
const MAX_CACHED_TAPS = 1 << 21;

/**
 * The filter of scipy's resample_poly as a function of the tap index: firwin(2·half + 1, 1/maxRate,
 * window=('kaiser', 5)) normalised to unit sum, times `up`.
 */
function designFilter(up: number, down: number): { length: number; half: number; tap: (j: number) => number } {
  const maxRate = Math.max(up, down);
  const cutoff = 1 / maxRate;
  const half = 10 * maxRate;
  const length = 2 * half + 1;
  const i0Beta = besselI0(KAISER_BETA);
  const raw = (j: number): number => {
    const m = j - half;
    const x = cutoff * m;
    const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
    const r = m / half;
    const window = besselI0(KAISER_BETA * Math.sqrt(Math.max(0, 1 - r * r))) / i0Beta;
    return cutoff * sinc * window;
  };
  // firwin scales so the taps sum to 1 (unit gain at DC); one pass, constant memory.
  let sum = 0;
  if (length <= MAX_CACHED_TAPS) {
    const taps = new Float64Array(length);
    for (let j = 0; j < length; j++) sum += taps[j] = raw(j);
    const scale = up / sum;
    for (let j = 0; j < length; j++) taps[j]! *= scale;
    return { length, half, tap: (j) => taps[j]! };
  }
  for (let j = 0; j < length; j++) sum += raw(j);
  const scale = up / sum;
  return { length, half, tap: (j) => raw(j) * scale };
}

/** How output rows are made from input rows: the filter and scipy's alignment of it. */
interface ResamplePlan {
  nIn: number;
  nOut: number;
  up: number;
  down: number;
  filter: { length: number; half: number; tap: (j: number) => number };
  nPrePad: number;
  nPreRemove: number;
  paddedLength: number;
}

function resamplePlan(nIn: number, fromHz: number, toHz: number): ResamplePlan {
  const nOut = resampledLength(nIn, fromHz, toHz);
  const g = gcd(nOut, nIn);
  const up = nOut / g;
  const down = nIn / g;
  const filter = designFilter(up, down);
  // scipy pads the filter in front so output sample 0 sits on the filter's centre, then drops
  // nPreRemove outputs of the full upfirdn convolution.
  const nPrePad = down - (filter.half % down);
  const nPreRemove = Math.floor((filter.half + nPrePad) / down);
  return { nIn, nOut, up, down, filter, nPrePad, nPreRemove, paddedLength: filter.length + nPrePad };
}

/** The input rows output row k sums over, [first, last]. */
function inputsOf(p: ResamplePlan, k: number): { t: number; first: number; last: number } {
  const t = (k + p.nPreRemove) * p.down;
  return { t, first: Math.max(0, Math.ceil((t - p.paddedLength + 1) / p.up)), last: Math.min(p.nIn - 1, Math.floor(t / p.up)) };
}

/**
 * Output rows [kFrom, kTo) from `values`, which hold input rows from `firstRow` on. Each output row
 * is summed over its inputs in the same order whatever the range, so a range gives bit for bit the
 * rows the whole resampling gives.
 */
function resampleRows(p: ResamplePlan, values: Float64Array, firstRow: number, axes: number, kFrom: number, kTo: number): Float64Array {
  const out = new Float64Array((kTo - kFrom) * axes);
  for (let k = kFrom; k < kTo; k++) {
    // y[k'] = Σ_i x[i] · hp[k'·down − i·up], hp = filter shifted right by nPrePad, k' = k + nPreRemove.
    const { t, first, last } = inputsOf(p, k);
    const dst = (k - kFrom) * axes;
    for (let i = first; i <= last; i++) {
      const j = t - i * p.up - p.nPrePad;
      if (j < 0 || j >= p.filter.length) continue;
      const h = p.filter.tap(j);
      const src = (i - firstRow) * axes;
      for (let a = 0; a < axes; a++) out[dst + a]! += h * values[src + a]!;
    }
  }
  return out;
}

/**
 * Resamples `rows` rows of `axes` interleaved values (sample-major, as DspInput) from `fromHz` to
 * `toHz`, to resampledLength(rows, fromHz, toHz) rows. Returns the input itself when the length does
 * not change, as the reference does.
 */
export function resampleInterleaved(values: Float64Array, axes: number, fromHz: number, toHz: number): Float64Array {
  if (!Number.isInteger(axes) || axes < 1 || values.length % axes !== 0) throw new RangeError(`${values.length} values are not whole rows of ${axes} axes`);
  const nIn = values.length / axes;
  if (resampledLength(nIn, fromHz, toHz) === nIn) return values;
  const plan = resamplePlan(nIn, fromHz, toHz);
  return resampleRows(plan, values, 0, axes, 0, plan.nOut);
}

/** The input rows [from, to) output rows [kFrom, kTo) are made from, by a plan (undefined: the length does not change). */
function spanOf(plan: ResamplePlan | undefined, nIn: number, kFrom: number, kTo: number): { from: number; to: number } {
  if (kTo <= kFrom) return { from: 0, to: 0 };
  if (!plan) return { from: Math.min(kFrom, nIn), to: Math.min(kTo, nIn) };
  return { from: inputsOf(plan, kFrom).first, to: inputsOf(plan, kTo - 1).last + 1 };
}

/** The plan of a resampling, or undefined when the length does not change (the rows are the input's). */
function planIfResampled(nIn: number, fromHz: number, toHz: number): ResamplePlan | undefined {
  return resampledLength(nIn, fromHz, toHz) === nIn ? undefined : resamplePlan(nIn, fromHz, toHz);
}

/** The input rows [from, to) that output rows [kFrom, kTo) of a resampling of `nIn` rows are made from. */
export function resampleInputSpan(nIn: number, fromHz: number, toHz: number, kFrom: number, kTo: number): { from: number; to: number } {
  return spanOf(kTo > kFrom ? planIfResampled(nIn, fromHz, toHz) : undefined, nIn, kFrom, kTo);
}

/**
 * Output rows [kFrom, kTo) (within resampledLength) of resampleInterleaved over a sample of `nIn`
 * rows, from `values` holding only its rows [firstRow, firstRow + values.length / axes), which must
 * cover resampleInputSpan: the same numbers, without the whole sample in memory. The filter is
 * designed once (a long one costs a Bessel function per tap).
 */
export function resampleInterleavedRange(values: Float64Array, axes: number, nIn: number, firstRow: number, fromHz: number, toHz: number, kFrom: number, kTo: number): Float64Array {
  const held = values.length / axes;
  const plan = planIfResampled(nIn, fromHz, toHz);
  const span = spanOf(plan, nIn, kFrom, kTo);
  if (span.from < firstRow || span.to > firstRow + held) throw new RangeError(`output rows ${kFrom}-${kTo} need input rows ${span.from}-${span.to}; ${firstRow}-${firstRow + held} are held`);
  if (!plan) return values.slice((kFrom - firstRow) * axes, (kTo - firstRow) * axes);
  return resampleRows(plan, values, firstRow, axes, kFrom, kTo);
}
