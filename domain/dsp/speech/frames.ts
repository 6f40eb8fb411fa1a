// How the speechpy fork cuts a signal into frames (dsp-reference 1.1), with zero padding off as every
// block calls it: rectangular window, partial trailing frames dropped.
import { DspConfigurationError } from '../processingBlock';

/** ceil, unless v sits just above an integer (float noise such as 320.0000001 stays 320). */
export function ceilUnlessVeryCloseToFloor(v: number): number {
  const floor = Math.floor(v);
  return v > floor && v - floor < 0.001 ? floor : Math.ceil(v);
}

/** numpy's round: halves go to the even neighbour (2.5 -> 2), as v1 frame lengths need. */
export function roundHalfEven(v: number): number {
  const floor = Math.floor(v);
  const diff = v - floor;
  if (diff < 0.5) return floor;
  if (diff > 0.5) return floor + 1;
  return floor % 2 === 0 ? floor : floor + 1;
}

export interface Framing {
  /** Samples per frame. */
  length: number;
  /** Samples between frame starts. */
  stride: number;
  /** Whole frames in the signal (may be <= 0 before checkFrameCount). */
  count: number;
}

export function framing(version: number, samples: number, frequency: number, frameLength: number, frameStride: number): Framing {
  const length = version === 1 ? roundHalfEven(frequency * frameLength) : ceilUnlessVeryCloseToFloor(frequency * frameLength);
  const stride = ceilUnlessVeryCloseToFloor(frequency * frameStride);
  // v1 counts one frame fewer than fit; kept because old models were trained on it.
  const count = version === 1 ? Math.floor((samples - length) / stride) : Math.floor((samples - (length - stride)) / stride);
  return { length, stride, count };
}

/** The blocks' own limits: at least one frame, at most 500. */
export function checkFrameCount(frames: Framing): void {
  if (!(frames.stride > 0)) throw new DspConfigurationError(`"frame_stride" must give at least one sample per step, got ${frames.stride} samples`);
  if (!(frames.length > 0)) throw new DspConfigurationError(`"frame_length" must give at least one sample per frame, got ${frames.length} samples`);
  if (frames.count < 1) throw new DspConfigurationError(`"frame_length": frame length (${frames.length} samples) is larger than your window size`);
  if (frames.count > 500) {
    throw new DspConfigurationError(`"frame_stride": number of frames is larger than 500 (${frames.count}), increase your frame stride or decrease your window size`);
  }
}
