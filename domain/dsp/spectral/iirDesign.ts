// IIR design as scipy.signal does it for `butter(N, Wn, btype, output='sos')` and
// `cheby1(N, rp, Wn, output='sos')`: analog prototype zeros/poles/gain, frequency transform,
// bilinear transform at fs = 2 with pre-warping, then `zpk2sos` with 'nearest' pairing. No npm
// filter library reproduces this (fili, for one, designs cascaded biquads with the gain spread over
// the sections, so its coefficients differ from scipy's even where the response agrees); the
// reference casts these coefficients to float32 and filters with them, so they have to be scipy's.
// Only even orders are supported: every pole then comes in a conjugate pair, which is all the
// spectral block uses (butter orders 2, 4, 6, 8; cheby1 order 8).

/** One second-order section: [b0, b1, b2, a0 (=1), a1, a2], scipy's sos row layout. */
export type SosSection = [number, number, number, number, number, number];

interface Complex {
  re: number;
  im: number;
}

const mul = (a: Complex, b: Complex): Complex => ({ re: a.re * b.re - a.im * b.im, im: a.re * b.im + a.im * b.re });

/** numpy's complex division (Smith's method), so the poles round as scipy's do. */
function div(a: Complex, b: Complex): Complex {
  if (Math.abs(b.re) >= Math.abs(b.im)) {
    const rat = b.im / b.re;
    const scl = 1 / (b.re + b.im * rat);
    return { re: (a.re + a.im * rat) * scl, im: (a.im - a.re * rat) * scl };
  }
  const rat = b.re / b.im;
  const scl = 1 / (b.im + b.re * rat);
  return { re: (a.re * rat + a.im) * scl, im: (a.im * rat - a.re) * scl };
}

interface AnalogPrototype {
  poles: Complex[];
  gain: number;
}

function assertEvenOrder(order: number): void {
  if (!Number.isInteger(order) || order < 2 || order % 2 !== 0) throw new RangeError(`only even filter orders are supported, got ${order}`);
}

/** scipy `buttap(N)`: poles on the unit circle in the left half plane, gain 1. */
function butterworthPrototype(order: number): AnalogPrototype {
  const poles: Complex[] = [];
  for (let m = -order + 1; m < order; m += 2) {
    const theta = Math.PI * m * (1 / (2 * order));
    poles.push({ re: -Math.cos(theta), im: -Math.sin(theta) });
  }
  return { poles, gain: 1 };
}

/** scipy `cheb1ap(N, rp)`: poles on an ellipse; for even N the gain is lowered by the ripple. */
function chebyshev1Prototype(order: number, rippleDb: number): AnalogPrototype {
  const eps = Math.sqrt(10 ** (0.1 * rippleDb) - 1);
  const mu = (1 / order) * Math.asinh(1 / eps);
  const poles: Complex[] = [];
  for (let m = -order + 1; m < order; m += 2) {
    const theta = (Math.PI * m) / (2 * order);
    // -sinh(mu + i·theta)
    poles.push({ re: -Math.sinh(mu) * Math.cos(theta), im: -Math.cosh(mu) * Math.sin(theta) });
  }
  let k: Complex = { re: 1, im: 0 };
  for (const p of poles) k = mul(k, { re: -p.re, im: -p.im });
  return { poles, gain: k.re / Math.sqrt(1 + eps * eps) };
}

/**
 * The digital filter's poles and gain for a prototype with no finite zeros (Butterworth and
 * Chebyshev I both have none): lp2lp_zpk or lp2hp_zpk at the pre-warped frequency, then
 * bilinear_zpk at fs = 2. Zeros end at z = -1 (low-pass) or z = +1 (high-pass).
 */
function digitalize(proto: AnalogPrototype, wn: number, btype: 'low' | 'high'): { poles: Complex[]; gain: number } {
  if (!(wn > 0 && wn < 1)) throw new RangeError(`digital filter critical frequencies must be 0 < Wn < 1, got ${wn}`);
  const fs = 2;
  const warped = 2 * fs * Math.tan((Math.PI * wn) / fs);
  const n = proto.poles.length;
  let poles: Complex[];
  let gain: number;
  if (btype === 'low') {
    poles = proto.poles.map((p) => ({ re: warped * p.re, im: warped * p.im }));
    gain = proto.gain * warped ** n;
  } else {
    poles = proto.poles.map((p) => div({ re: warped, im: 0 }, p));
    let prodMinusP: Complex = { re: 1, im: 0 };
    for (const p of proto.poles) prodMinusP = mul(prodMinusP, { re: -p.re, im: -p.im });
    gain = proto.gain * div({ re: 1, im: 0 }, prodMinusP).re;
  }
  const fs2 = 2 * fs;
  let prodDen: Complex = { re: 1, im: 0 };
  for (const p of poles) prodDen = mul(prodDen, { re: fs2 - p.re, im: -p.im });
  // High-pass zeros sit at s = 0, so prod(fs2 - z) = fs2^n; low-pass ones are all at infinity.
  const numerator = btype === 'high' ? fs2 ** n : 1;
  const digitalGain = gain * div({ re: numerator, im: 0 }, prodDen).re;
  const digitalPoles = poles.map((p) => div({ re: fs2 + p.re, im: p.im }, { re: fs2 - p.re, im: -p.im }));
  return { poles: digitalPoles, gain: digitalGain };
}

/**
 * scipy `zpk2sos(z, p, k)` ('nearest' pairing) for conjugate pole pairs and all zeros at ±1: each
 * section takes one conjugate pair and two zeros; the pair nearest the unit circle goes last, and
 * the whole gain goes to the first section.
 */
function toSections(poles: Complex[], gain: number, btype: 'low' | 'high'): SosSection[] {
  // zpk2sos (through _cplxreal) lists one pole of each pair by ascending real part, takes the
  // "worst" (nearest the unit circle, the first one on a tie) for the last section, and so on.
  const upper = poles.filter((p) => p.im > 0).sort((a, b) => a.re - b.re);
  const distance = (p: Complex) => Math.abs(1 - Math.hypot(p.re, p.im));
  const worstFirst = upper.map((p, index) => ({ p, index })).sort((a, b) => distance(a.p) - distance(b.p) || a.index - b.index);
  const ordered = worstFirst.map(({ p }) => p).reverse();
  const b1 = btype === 'low' ? 2 : -2;
  return ordered.map((p, index) => {
    const k = index === 0 ? gain : 1;
    return [k, k * b1, k, 1, -2 * p.re, p.re * p.re + p.im * p.im];
  });
}

/** scipy `signal.butter(order, wn, btype, output='sos')` (Wn normalized to Nyquist). */
export function butterSos(order: number, wn: number, btype: 'low' | 'high'): SosSection[] {
  assertEvenOrder(order);
  const { poles, gain } = digitalize(butterworthPrototype(order), wn, btype);
  return toSections(poles, gain, btype);
}

/** scipy `signal.cheby1(order, rippleDb, wn, output='sos')`, low-pass. */
export function cheby1Sos(order: number, rippleDb: number, wn: number): SosSection[] {
  assertEvenOrder(order);
  const { poles, gain } = digitalize(chebyshev1Prototype(order, rippleDb), wn, 'low');
  return toSections(poles, gain, 'low');
}
