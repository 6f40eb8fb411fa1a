// image (dsp-reference 4): pixels packed 0xRRGGBB to R/255, G/255, B/255 (HWC) or to unrounded
// ITU-R 601-2 luma.
//
// How a window arrives: `values` holds the pixels as 0xRRGGBB numbers, row-major, frame after frame
// (the reference's features array without its leading width and height), and `image` gives width and
// height. Without `image`, values[0] and values[1] are taken as width and height, exactly the
// reference's layout, so a features array pasted into the DSP run endpoint works as it does there.
import { DspConfigurationError, type ProcessingBlock } from './processingBlock';
import { checkVersion, stringParam } from './speech/blockParams';

export const imageBlock: ProcessingBlock = {
  type: 'image',
  implementationVersions: [1],
  dimensionalityReduction: true,
  hasFeatureImportance: false,
  canNormalizeData: true,
  run(input, params, { implementationVersion }) {
    checkVersion('image', this.implementationVersions, implementationVersion);
    const channels = stringParam(params, 'channels', 'RGB');
    if (channels !== 'RGB' && channels !== 'Grayscale') throw new DspConfigurationError(`"channels" must be "RGB" or "Grayscale", got ${JSON.stringify(channels)}`);
    const { width, height, pixels } = unpack(input.values, input.image);
    const perFrame = width * height;
    if (pixels.length < 1 || pixels.length % perFrame !== 0) {
      throw new DspConfigurationError(`"values": ${pixels.length} pixels are not a whole number of ${width}×${height} frames`);
    }
    const depth = channels === 'RGB' ? 3 : 1;
    const features = new Float64Array(pixels.length * depth);
    for (let i = 0; i < pixels.length; i++) {
      // The reference casts to uint32 and reads the low three bytes.
      const p = Math.trunc(pixels[i]!) >>> 0;
      const r = (p >>> 16) & 255;
      const g = (p >>> 8) & 255;
      const b = p & 255;
      if (depth === 3) {
        features[3 * i] = r / 255;
        features[3 * i + 1] = g / 255;
        features[3 * i + 2] = b / 255;
      } else {
        features[i] = (0.299 / 255) * r + (0.587 / 255) * g + (0.114 / 255) * b;
      }
    }
    return {
      features,
      labels: [],
      outputConfig: { type: 'image', shape: { width, height, channels: depth, frames: pixels.length / perFrame } },
      fftUsed: [],
      graphs: [],
    };
  },
};

function unpack(values: ArrayLike<number>, image: { width: number; height: number } | undefined): { width: number; height: number; pixels: ArrayLike<number> } {
  const width = image ? image.width : values[0];
  const height = image ? image.height : values[1];
  for (const [name, v] of [['width', width], ['height', height]] as const) {
    if (v === undefined || !Number.isInteger(v) || v < 1) throw new DspConfigurationError(`"${name}" of the image must be a positive integer, got ${v}`);
  }
  const pixels = image ? values : Array.prototype.slice.call(values, 2) as number[];
  return { width: width!, height: height!, pixels };
}
