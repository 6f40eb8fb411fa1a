// scipy `sosfilt` (direct form II transposed per section) and `sosfilt_zi`. The reference filters in
// float32 when both the signal and the coefficients are float32 (the Butterworth stage of the
// spectral block) and in float64 otherwise (its decimation stages), so the precision is a choice.
import type { SosSection } from './iirDesign';

export type Precision = 'float32' | 'float64';

const identity = (v: number): number => v;

/**
 * Filters `x` through the cascade. `zi` (one [z0, z1] per section) is the initial state; zeros when
 * absent. In float32 every product and sum is rounded to float32, as scipy's `_sosfilt_float` does.
 */
export function sosfilt(sos: readonly SosSection[], x: ArrayLike<number>, precision: Precision, zi?: readonly (readonly [number, number])[]): Float64Array {
  const r = precision === 'float32' ? Math.fround : identity;
  const n = sos.length;
  const coefficients = sos.map((s) => s.map(r));
  const z0 = new Float64Array(n);
  const z1 = new Float64Array(n);
  if (zi) {
    for (let s = 0; s < n; s++) {
      z0[s] = r(zi[s]![0]);
      z1[s] = r(zi[s]![1]);
    }
  }
  const y = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    let xCur = r(x[i]!);
    for (let s = 0; s < n; s++) {
      const c = coefficients[s]!;
      const xNew = r(r(c[0]! * xCur) + z0[s]!);
      z0[s] = r(r(r(c[1]! * xCur) - r(c[4]! * xNew)) + z1[s]!);
      z1[s] = r(r(c[2]! * xCur) - r(c[5]! * xNew));
      xCur = xNew;
    }
    y[i] = xCur;
  }
  return y;
}

/**
 * scipy `lfilter_zi(b, a)` for one section: the state after a long run of ones, solving
 * (I - Aᵀ)·zi = b[1:] - a[1:]·b[0] by LU with partial pivoting as numpy's `linalg.solve` does.
 */
function sectionZi(section: SosSection): [number, number] {
  const [b0, b1, b2, , a1, a2] = section;
  const rhs0 = b1 - a1 * b0;
  const rhs1 = b2 - a2 * b0;
  // I - companion(a).T = [[1 + a1, -1], [a2, 1]]
  let m00 = 1 + a1;
  let m01 = -1;
  let m10 = a2;
  let m11 = 1;
  let y0 = rhs0;
  let y1 = rhs1;
  if (Math.abs(m10) > Math.abs(m00)) {
    [m00, m10] = [m10, m00];
    [m01, m11] = [m11, m01];
    [y0, y1] = [y1, y0];
  }
  const l = m10 * (1 / m00);
  const u11 = m11 - l * m01;
  const w1 = y1 - l * y0;
  const z1 = w1 / u11;
  const z0 = (y0 - m01 * z1) / m00;
  return [z0, z1];
}

/** scipy `sosfilt_zi(sos)`: the steady-state initial state for a unit step, section by section. */
export function sosfiltZi(sos: readonly SosSection[]): [number, number][] {
  let scale = 1;
  return sos.map((section) => {
    const [z0, z1] = sectionZi(section);
    const zi: [number, number] = [scale * z0, scale * z1];
    scale *= (section[0] + section[1] + section[2]) / (section[3] + section[4] + section[5]);
    return zi;
  });
}
