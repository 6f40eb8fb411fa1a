// The keras-regression learn block: the keras block's network, settings and job, with one linear
// output trained on mean squared error. Its labels are the numbers to predict: each label of the
// features (a "class" of the DSP features' y) is read as a number, and a label that is not one is
// refused before any job runs. Pure.

/** What a keras-family learn block predicts, by the impulse's learn block type. */
export type KerasMode = 'classification' | 'regression';

const MODES: Readonly<Record<string, KerasMode>> = { keras: 'classification', 'keras-regression': 'regression' };

/** The mode of a learn block type this service trains with the keras code; undefined for any other type. */
export const kerasModeOf = (type: string): KerasMode | undefined => (Object.hasOwn(MODES, type) ? MODES[type] : undefined);

/** Each label as the number it names; the first label that names no finite number otherwise. */
export function regressionTargets(labels: readonly string[]): { values: number[] } | { notANumber: string } {
  const values: number[] = [];
  for (const label of labels) {
    const value = label.trim() === '' ? Number.NaN : Number(label);
    if (!Number.isFinite(value)) return { notANumber: label };
    values.push(value);
  }
  return { values };
}

/** A regression model's measures on the validation windows; a measure that is not finite (a model that diverged) is null. */
export interface RegressionMetrics {
  meanSquaredError: number | null;
  meanAbsoluteError: number | null;
  /** 1 − Var(actual − predicted) / Var(actual), as scikit-learn's explained_variance_score (1 when both variances are 0, 0 when only the actual's is). */
  explainedVariance: number | null;
}

const finiteOrNull = (v: number) => (Number.isFinite(v) ? v : null);

export function regressionMetrics(predicted: readonly number[], actual: readonly number[]): RegressionMetrics {
  const n = actual.length;
  if (n === 0 || predicted.length !== n) return { meanSquaredError: null, meanAbsoluteError: null, explainedVariance: null };
  let squared = 0;
  let absolute = 0;
  for (let i = 0; i < n; i++) {
    const e = actual[i]! - predicted[i]!;
    squared += e * e;
    absolute += Math.abs(e);
  }
  const variance = (values: readonly number[]) => {
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    return values.reduce((a, v) => a + (v - mean) * (v - mean), 0) / values.length;
  };
  const residualVariance = variance(actual.map((a, i) => a - predicted[i]!));
  const actualVariance = variance(actual);
  const explained = actualVariance === 0 ? (residualVariance === 0 ? 1 : 0) : 1 - residualVariance / actualVariance;
  return { meanSquaredError: finiteOrNull(squared / n), meanAbsoluteError: finiteOrNull(absolute / n), explainedVariance: finiteOrNull(explained) };
}

/**
 * What a network learns from these windows' class indexes: at least two classes (or label values)
 * present, and for a regression each label read as a number. Throws the reason a training cannot start.
 */
export function learningTargets(y: ArrayLike<number>, classes: readonly string[], mode: KerasMode): { regressionTargets?: number[] } {
  const present = new Set(Array.from(y)).size;
  if (present < 2) throw new Error(`The training windows hold ${present} ${mode === 'regression' ? 'label value: a regression' : 'class: a classifier'} needs at least two`);
  if (mode !== 'regression') return {};
  const targets = regressionTargets(classes);
  if ('notANumber' in targets) throw new Error(`The label "${targets.notANumber}" is not a number: a regression learns numbers`);
  return { regressionTargets: targets.values };
}
