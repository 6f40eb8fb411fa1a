// The graphs the reference's audio blocks draw when asked (mfe, mfcc and spectrogram dsp.py): each
// block's output matrix, time along x and its bands or coefficients up y from the lowest, and for
// mfe the filterbank's weights too. The reference renders matplotlib figures with axes as SVG; we
// draw the matrix itself as a PNG, one pixel per value, in the same colour map and orientation.
import type { DspGraph } from '../processingBlock';
import type { MelFilterbank } from '../speech/melFilterbank';
import { heatmapPng, type Heatmap } from './heatmapPng';

export const MFE_GRAPH = 'Mel Energies (DSP Output)';
export const FILTERBANK_GRAPH = 'FFT Bin Weighting';
export const MFCC_GRAPH = 'Cepstral Coefficients';
export const SPECTROGRAM_GRAPH = 'Spectrogram';

export function imageGraph(name: string, map: Heatmap): DspGraph {
  return { name, type: 'image', image: heatmapPng(map).toString('base64'), imageMimeType: 'image/png' };
}

/** A frame-major feature row (`features[f·rows + r]`) as frames wide and `rows` high. */
export function frameMajorMap(features: ArrayLike<number>, frames: number, rows: number): Heatmap {
  return { width: frames, height: rows, valueAt: (x, y) => features[x * rows + y]! };
}

/** The filterbank as the reference's "FFT Bin Weighting": FFT bins along x, filters up y. */
export function filterbankMap(bank: MelFilterbank): Heatmap {
  const filters = bank.weights.length;
  return { width: filters > 0 ? bank.weights[0]!.length : 0, height: filters, valueAt: (x, y) => bank.weights[y]![x]! };
}
