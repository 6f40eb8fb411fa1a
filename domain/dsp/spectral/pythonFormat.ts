// Python's `str(round(x, 2))` and `str(float)`, for labels that must read as the reference's do.

/** round(x, 2): the nearest two-decimal value to x's exact binary value, ties to even. */
export function pyRound(x: number, digits: number): number {
  // toFixed(60) is exact for the magnitudes of labels (|x| ≥ 1e-3 has at most ~62 fraction digits
  // in binary, and toFixed rounds only past the last exact digit), so ties are real ties.
  const exact = Math.abs(x).toFixed(60);
  const [whole, fraction = ''] = exact.split('.');
  const kept = fraction.slice(0, digits);
  const rest = fraction.slice(digits);
  let scaled = BigInt(whole! + kept);
  const firstRest = rest.charCodeAt(0) - 48;
  const tail = rest.slice(1).replace(/0+$/, '');
  if (firstRest > 5 || (firstRest === 5 && tail !== '') || (firstRest === 5 && tail === '' && scaled % 2n === 1n)) scaled += 1n;
  const value = Number(scaled) / 10 ** digits;
  return x < 0 ? -value : value;
}

/** str(float): shortest round-trip digits, and "2.0" rather than "2". */
export function pyFloatString(x: number): string {
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return `${Object.is(x, -0) ? '-' : ''}${Math.abs(x).toFixed(1)}`;
  return String(x);
}
