// Mel-filterbank energies (dsp-reference 1.5): frames, power spectra, E = P·FBᵀ, and each frame's
// total energy, with exact zeros replaced by 1e-10 so a later log stays finite.
import { framePowerSpectra } from './powerSpectra';
import { framing, checkFrameCount, type Framing } from './frames';
import { melFilterbank, type MelFilterbank } from './melFilterbank';

export interface MelEnergyOptions {
  version: number;
  frequency: number;
  frameLength: number;
  frameStride: number;
  numFilters: number;
  fftLength: number;
  lowFrequency: number;
  /** 0 means fs/2. */
  highFrequency: number;
}

export interface MelEnergies {
  frames: Framing;
  /** frames × numFilters, frame-major. */
  energies: Float64Array;
  /** Total power of each frame over all fft/2 + 1 bins. */
  frameEnergies: Float64Array;
  filterbank: MelFilterbank;
}

const zeroHandled = (v: number): number => (v === 0 ? 1e-10 : v);

export function melEnergies(signal: ArrayLike<number>, o: MelEnergyOptions): MelEnergies {
  const frames = framing(o.version, signal.length, o.frequency, o.frameLength, o.frameStride);
  checkFrameCount(frames);
  const coefficients = o.fftLength / 2 + 1;
  // Old mels for implementation versions <= 3, kept deliberately (see melFilterbank.ts).
  const filterbank = melFilterbank(o.numFilters, coefficients, o.frequency, o.lowFrequency, o.highFrequency, o.version <= 3);
  const spectra = framePowerSpectra(signal, frames, o.fftLength);
  const m = o.numFilters;
  const energies = new Float64Array(frames.count * m);
  const frameEnergies = new Float64Array(frames.count);
  for (let f = 0; f < frames.count; f++) {
    const p = spectra[f]!;
    let total = 0;
    for (let k = 0; k < coefficients; k++) total += p[k]!;
    frameEnergies[f] = zeroHandled(total);
    for (let i = 0; i < m; i++) {
      const w = filterbank.weights[i]!;
      let e = 0;
      for (let k = filterbank.first[i]!; k <= filterbank.last[i]!; k++) e += p[k]! * w[k]!;
      energies[f * m + i] = zeroHandled(e);
    }
  }
  return { frames, energies, frameEnergies, filterbank };
}
