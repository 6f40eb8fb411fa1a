// The MFCC core of the speechpy fork (dsp-reference 1.6): DCT-II (ortho) of the log mel energies,
// first `numCepstral` kept, then coefficient 0 replaced by the log of the frame's total energy. No
// cepstral lifter, as in the reference.
import { dctIIOrtho } from './dctOrtho';
import { melEnergies, type MelEnergies, type MelEnergyOptions } from './melEnergies';

export interface Cepstra {
  mel: MelEnergies;
  /** frames × numCepstral, frame-major. */
  coefficients: Float64Array;
}

export function mfccCore(signal: ArrayLike<number>, options: MelEnergyOptions, numCepstral: number): Cepstra {
  const mel = melEnergies(signal, options);
  const rows = mel.frames.count;
  const logs = new Float64Array(mel.energies.length);
  for (let i = 0; i < logs.length; i++) logs[i] = Math.log(mel.energies[i]!);
  const coefficients = dctIIOrtho(logs, rows, options.numFilters, numCepstral);
  for (let f = 0; f < rows; f++) coefficients[f * numCepstral] = Math.log(mel.frameEnergies[f]!);
  return { mel, coefficients };
}
