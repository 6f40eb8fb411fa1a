// A matrix drawn as a heat map PNG, one pixel per value, the way the reference blocks' imshow shows
// it: colours scaled between the matrix's own minimum and maximum (matplotlib's default Normalize),
// through the coolwarm map, row 0 at the bottom. Synchronous (pngjs), so the pure blocks can draw.
import { PNG } from 'pngjs';
import { coolwarmBytes, coolwarmIndex } from './coolwarm';

export interface Heatmap {
  width: number;
  height: number;
  /** The value drawn at column x, row y counted from the bottom. */
  valueAt(x: number, y: number): number;
}

/** The PNG bytes of the heat map. A constant matrix comes out all in the map's lowest colour, as matplotlib draws it. */
export function heatmapPng(map: Heatmap): Buffer {
  const { width, height } = map;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let x = 0; x < width; x++) {
    for (let y = 0; y < height; y++) {
      const v = map.valueAt(x, y);
      if (v < min) min = v;
      if (v > max) max = v;
    }
  }
  const range = max - min;
  const png = new PNG({ width, height });
  for (let x = 0; x < width; x++) {
    for (let y = 0; y < height; y++) {
      const scaled = range > 0 ? (map.valueAt(x, y) - min) / range : 0;
      const colour = coolwarmIndex(scaled) * 3;
      const pixel = ((height - 1 - y) * width + x) * 4;
      png.data[pixel] = coolwarmBytes[colour]!;
      png.data[pixel + 1] = coolwarmBytes[colour + 1]!;
      png.data[pixel + 2] = coolwarmBytes[colour + 2]!;
      png.data[pixel + 3] = 255;
    }
  }
  // Opaque: RGB without alpha is a quarter smaller.
  return PNG.sync.write(png, { colorType: 2 });
}
