// normalize-channel-standard-scaler (dsp-reference 11): per feature column, the mean and the
// population standard deviation (ddof 0) over the training windows, learned while the job writes X
// and kept with the block, so the same z = (x − μ) / σ applies to testing windows and at inference.
// As scikit-learn's StandardScaler (the docs cite it): a column whose variance is zero, or only
// rounding noise around a constant, gets σ = 1, so it maps to 0 rather than dividing by zero.
//
// The fit streams: Welford's update per row, so 10,000 windows cost one running mean and M2 per
// column, never the matrix, and stay accurate where a sum of squares would cancel.

/** What is stored with the block: plain arrays, JSON-ready. */
export interface StandardScaler {
  mean: number[];
  /** Population standard deviation per column, 1 where the column is constant. */
  scale: number[];
  /** Training windows it was fitted on. */
  count: number;
}

export class StandardScalerFit {
  private readonly mean: Float64Array;
  private readonly m2: Float64Array;
  private n = 0;

  constructor(readonly columns: number) {
    if (!Number.isSafeInteger(columns) || columns < 0) throw new RangeError(`bad column count ${columns}`);
    this.mean = new Float64Array(columns);
    this.m2 = new Float64Array(columns);
  }

  get count(): number {
    return this.n;
  }

  /** Adds one training window's feature row. */
  add(row: ArrayLike<number>): void {
    if (row.length !== this.columns) throw new RangeError(`row has ${row.length} features, expected ${this.columns}`);
    this.n++;
    for (let j = 0; j < this.columns; j++) {
      const x = row[j]!;
      const delta = x - this.mean[j]!;
      this.mean[j]! += delta / this.n;
      this.m2[j]! += delta * (x - this.mean[j]!);
    }
  }

  /** The fitted scaler; refuses an empty fit, which has no mean. */
  result(): StandardScaler {
    if (this.n === 0) throw new RangeError('the standard scaler needs at least one training window');
    const mean = Array.from(this.mean);
    const scale = mean.map((mu, j) => {
      const variance = Math.max(0, this.m2[j]! / this.n);
      // scikit-learn's _is_constant_feature: a variance within the rounding error of the mean is zero.
      const eps = Number.EPSILON;
      const bound = this.n * eps * variance + (this.n * mu * eps) ** 2;
      return variance <= bound ? 1 : Math.sqrt(variance);
    });
    return { mean, scale, count: this.n };
  }
}

/** z = (x − μ) / σ per column, into `out` (a new Float32Array, the npy dtype, by default). */
export function standardize(scaler: StandardScaler, row: ArrayLike<number>, out: Float32Array | Float64Array = new Float32Array(row.length)): Float32Array | Float64Array {
  if (row.length !== scaler.mean.length) throw new RangeError(`row has ${row.length} features, the scaler ${scaler.mean.length}`);
  for (let j = 0; j < row.length; j++) out[j] = (row[j]! - scaler.mean[j]!) / scaler.scale[j]!;
  return out;
}
