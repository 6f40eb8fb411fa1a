// The reference's `filter_is_stable`: a Python-only design check that rebuilds the two-pole
// sections the C++ SDK runs (in float32) and refuses a filter whose poles reach the unit circle,
// which happens for cut-offs very near 0 Hz or Nyquist (dsp-reference §5.2).

const f32 = Math.fround;

/** The largest pole magnitude of the low-pass prototype's sections, as the reference computes it. */
function largestPoleMagnitude(order: number, cutoff: number, fs: number): number {
  const a = f32(Math.tan((Math.PI * cutoff) / fs));
  const a2 = f32(a * a);
  let largest = 0;
  for (let ix = 0; ix < Math.floor(order / 2); ix++) {
    const r = Math.sin((Math.PI * (2 * ix + 1)) / (2 * order));
    const s = a2 + 2 * a * r + 1;
    const d1 = f32((2 * (1 - a2)) / s);
    const d2 = f32(-(a2 - 2 * a * r + 1) / s);
    // Roots of z² − d1·z − d2 (the gain A·[1, 2, 1] only moves zeros).
    const disc = d1 * d1 + 4 * d2;
    if (disc < 0) {
      largest = Math.max(largest, f32(Math.hypot(f32(d1 / 2), f32(Math.sqrt(-disc) / 2))));
    } else {
      const root = Math.sqrt(disc);
      largest = Math.max(largest, Math.abs(f32((d1 + root) / 2)), Math.abs(f32((d1 - root) / 2)));
    }
  }
  return largest;
}

export function filterIsStable(order: number, cutoff: number, fs: number): boolean {
  return largestPoleMagnitude(order, cutoff, fs) < 1;
}
