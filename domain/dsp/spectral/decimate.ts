// The reference's `decimate_simple` (common/sampling.py): a Chebyshev I low-pass started in its
// steady state for the first sample, then every r-th sample. It is not scipy.signal.decimate,
// which starts from rest (dsp-reference §5.3). The decimation stages run in float64.
import { cheby1Sos, type SosSection } from './iirDesign';
import { sosfilt, sosfiltZi } from './sosFilter';

const designs = new Map<number, { sos: SosSection[]; zi: [number, number][] }>();

function designFor(ratio: number): { sos: SosSection[]; zi: [number, number][] } {
  let design = designs.get(ratio);
  if (!design) {
    const sos = cheby1Sos(8, 0.05, 0.8 / ratio);
    design = { sos, zi: sosfiltZi(sos) };
    designs.set(ratio, design);
  }
  return design;
}

/** Low-pass filters `x` and keeps samples 0, r, 2r, … (ceil(n/r) of them). */
export function decimateSimple(x: ArrayLike<number>, ratio: number): Float64Array {
  if (ratio === 1) return Float64Array.from(x);
  if (x.length === 0) return new Float64Array(0);
  const { sos, zi } = designFor(ratio);
  const first = x[0]!;
  const filtered = sosfilt(sos, x, 'float64', zi.map(([a, b]) => [a * first, b * first] as const));
  const out = new Float64Array(Math.ceil(x.length / ratio));
  for (let i = 0; i < out.length; i++) out[i] = filtered[i * ratio]!;
  return out;
}

/** The stages a decimation ratio is split into (`get_ratio_combo`): the SDK supports 3 and 10. */
export function decimationStages(ratio: number): number[] {
  switch (ratio) {
    case 1:
      return [];
    case 3:
    case 10:
      return [ratio];
    case 30:
      return [3, 10];
    case 100:
      return [10, 10];
    case 1000:
      return [10, 10, 10];
    default:
      throw new RangeError(`no decimation stages for ratio ${ratio}`);
  }
}
